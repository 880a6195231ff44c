#!/usr/bin/env node
// Synthetic benchmark input for the dashboard: a regular 2-node x 8-LLC x 12-core x SMT2 machine
// (384 CPUs) topology JSON and an ftrace-text trace of N events over T tasks (switches, wakeups,
// wakeup migrations at every level, balance migrations), deterministic (seeded).
// Usage: node scripts/synth-trace.mjs OUTDIR [events=1000000] [tasks=2000]
// Writes OUTDIR/synth-384.topology.json and OUTDIR/synth-384.ftrace.txt.gz.
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { createGzip } from "node:zlib";
import { join } from "node:path";

const [outDir = ".", nEventsArg = "1000000", nTasksArg = "2000"] = process.argv.slice(2);
const N_EVENTS = Number(nEventsArg);
const N_TASKS = Number(nTasksArg);
const NODES = 2, LLCS_PER_NODE = 8, CORES_PER_LLC = 12, SMT = 2;
const N_CORES = NODES * LLCS_PER_NODE * CORES_PER_LLC;
const N_CPUS = N_CORES * SMT;

// Linux x86 numbering: thread 0 of every core first, then the siblings
const coreOf = (cpu) => cpu % N_CORES;
const llcOf = (cpu) => Math.floor(coreOf(cpu) / CORES_PER_LLC);
const nodeOf = (cpu) => Math.floor(llcOf(cpu) / LLCS_PER_NODE);

function topology() {
  const cpus = [];
  for (let cpu = 0; cpu < N_CPUS; cpu++) {
    const core = coreOf(cpu);
    cpus.push({
      cpu, online: true, core, core_id: core % CORES_PER_LLC, llc: llcOf(cpu), numa_node: nodeOf(cpu),
      package: nodeOf(cpu), die: null, smt_siblings: Array.from({ length: SMT }, (_, k) => k * N_CORES + core), capacity: null,
    });
  }
  const llcs = Array.from({ length: NODES * LLCS_PER_NODE }, (_, id) => ({
    id, sysfs_id: id, level: 3, size_kb: 32768,
    cpus: cpus.filter((c) => c.llc === id).map((c) => c.cpu), numa_nodes: [Math.floor(id / LLCS_PER_NODE)], package: Math.floor(id / LLCS_PER_NODE),
  }));
  const numa_nodes = Array.from({ length: NODES }, (_, id) => ({ id, cpus: cpus.filter((c) => c.numa_node === id).map((c) => c.cpu), memory_kb: null }));
  return { machine: `synth-${N_CPUS}`, source: "manual", kernel_release: null, cpus, llcs, numa_nodes, node_distances: [[10, 32], [32, 10]] };
}

// mulberry32
let seed = 0x5eed1234;
function rnd() {
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (n) => Math.floor(rnd() * n);

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, `synth-${N_CPUS}.topology.json`), JSON.stringify(topology()));

const gz = createGzip({ level: 6 });
gz.pipe(createWriteStream(join(outDir, `synth-${N_CPUS}.ftrace.txt.gz`)));
let buf = [];
const flush = () => { if (buf.length) { gz.write(buf.join("")); buf = []; } };
const out = (s) => { buf.push(s); if (buf.length >= 4096) flush(); };

const PID0 = 20000;
const comm = (pid) => (pid === 0 ? "<idle>" : `svc${(pid - PID0) % 97}-w`);
const cpuCol = (c) => String(c).padStart(3, "0");
let tUs = 1_000_000_000; // 1000 s in us
const ts = () => `${Math.floor(tUs / 1e6)}.${String(tUs % 1e6).padStart(6, "0")}`;
const line = (curPid, cpu, ev, rest) => out(`${comm(curPid).padStart(16)}-${curPid} [${cpuCol(cpu)}] d..2. ${ts()}: ${ev}: ${rest}\n`);

const taskCpu = new Int32Array(N_TASKS);
const running = new Int32Array(N_CPUS); // pid or 0
const queues = Array.from({ length: N_CPUS }, () => []);
const sleeping = [];
out(`# tracer: nop\n#\n# entries-in-buffer/entries-written: ${N_EVENTS}/${N_EVENTS}   #P:${N_CPUS}\n#\n`);
for (let i = 0; i < N_TASKS; i++) {
  const pid = PID0 + i;
  taskCpu[i] = pick(N_CPUS);
  sleeping.push(pid);
}
const idx = (pid) => pid - PID0;

// a target CPU at a chosen crossing level from cpu
function moveTarget(cpu) {
  const r = rnd();
  const core = coreOf(cpu);
  if (r < 0.3) return (cpu + N_CORES) % N_CPUS; // SMT sibling
  if (r < 0.7) { // same LLC, other core
    const base = llcOf(cpu) * CORES_PER_LLC;
    const c = base + ((core - base + 1 + pick(CORES_PER_LLC - 1)) % CORES_PER_LLC);
    return c + (rnd() < 0.5 ? 0 : N_CORES);
  }
  if (r < 0.9) { // same node, other LLC
    const node = nodeOf(cpu);
    const l = node * LLCS_PER_NODE + ((llcOf(cpu) % LLCS_PER_NODE) + 1 + pick(LLCS_PER_NODE - 1)) % LLCS_PER_NODE;
    return l * CORES_PER_LLC + pick(CORES_PER_LLC) + (rnd() < 0.5 ? 0 : N_CORES);
  }
  const other = (nodeOf(cpu) + 1) % NODES;
  const l = other * LLCS_PER_NODE + pick(LLCS_PER_NODE);
  return l * CORES_PER_LLC + pick(CORES_PER_LLC) + (rnd() < 0.5 ? 0 : N_CORES);
}

let n = 0;
function switchOn(cpu, prevState) {
  const prev = running[cpu];
  const q = queues[cpu];
  const next = q.length ? q.shift() : 0;
  if (prev === 0 && next === 0) return;
  line(prev, cpu, "sched_switch", `prev_comm=${comm(prev)} prev_pid=${prev} prev_prio=120 prev_state=${prev === 0 ? "R" : prevState} ==> next_comm=${comm(next)} next_pid=${next} next_prio=120`);
  n++;
  if (prev !== 0) {
    if (prevState.startsWith("R")) q.push(prev);
    else sleeping.push(prev);
  }
  running[cpu] = next;
  if (next !== 0) taskCpu[idx(next)] = cpu;
}

while (n < N_EVENTS) {
  tUs += 1 + pick(3);
  const cpu = pick(N_CPUS);
  const r = rnd();
  if (r < 0.42) {
    if (running[cpu] !== 0 || queues[cpu].length) { switchOn(cpu, rnd() < 0.3 ? "R" : "S"); }
  } else if (r < 0.92 && sleeping.length) {
    const k = pick(sleeping.length);
    const pid = sleeping[k];
    sleeping[k] = sleeping[sleeping.length - 1];
    sleeping.pop();
    const waker = running[cpu];
    const prevCpu = taskCpu[idx(pid)];
    line(waker, cpu, "sched_waking", `comm=${comm(pid)} pid=${pid} prio=120 target_cpu=${cpuCol(prevCpu)}`);
    n++;
    let target = prevCpu;
    if (rnd() < 0.12) {
      target = moveTarget(prevCpu);
      line(waker, cpu, "sched_migrate_task", `comm=${comm(pid)} pid=${pid} prio=120 orig_cpu=${prevCpu} dest_cpu=${target}`);
      n++;
    }
    taskCpu[idx(pid)] = target;
    line(0, target, "sched_wakeup", `comm=${comm(pid)} pid=${pid} prio=120 target_cpu=${cpuCol(target)}`);
    n++;
    queues[target].push(pid);
    if (running[target] === 0) switchOn(target, "R");
  } else if (r < 0.97) {
    // idle balance: pull a queued task from a random busy CPU
    const src = pick(N_CPUS);
    if (src !== cpu && queues[src].length > 0 && running[cpu] === 0) {
      const pid = queues[src].pop();
      line(0, cpu, "sched_migrate_task", `comm=${comm(pid)} pid=${pid} prio=120 orig_cpu=${src} dest_cpu=${cpu}`);
      n++;
      taskCpu[idx(pid)] = cpu;
      queues[cpu].push(pid);
      switchOn(cpu, "R");
    }
  }
}
flush();
gz.end();
console.log(`${N_CPUS} CPUs, ${N_TASKS} tasks, ${n} events -> ${outDir}`);
