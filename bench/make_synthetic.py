"""Write a synthetic but well-formed ftrace text recording and its topology, for benchmarks.

The topology is an AMD EPYC 9654 2-socket box (2 x 96 cores x 2 threads = 384 CPUs, 12 LLCs of
8 cores per socket, one NUMA node per socket), numbered as Linux numbers it there (first
threads 0-191, their SMT siblings 192-383). The workload keeps every CPU's running task and
each task's CPU consistent, so a replay draws a plausible, busy machine: tasks wake mostly
within their LLC, sometimes across LLCs and nodes (with sched_migrate_task between waking
and wakeup, as the kernel emits it), and the balancer moves a few.

Usage: make_synthetic.py --events N --tasks T OUT.ftrace.txt OUT.topology.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SOCKETS, CCDS, CORES_PER_CCD, THREADS = 2, 12, 8, 2


def topology() -> dict[str, object]:
    per_socket = CCDS * CORES_PER_CCD
    ncores = SOCKETS * per_socket
    cpus = []
    for t in range(THREADS):
        for core in range(ncores):
            cpu = t * ncores + core
            sock = core // per_socket
            llc = core // CORES_PER_CCD
            cpus.append({"cpu": cpu, "online": True, "core": core, "core_id": core % per_socket,
                         "llc": llc, "numa_node": sock, "package": sock, "die": None,
                         "smt_siblings": [core, core + ncores], "capacity": None})
    cpus.sort(key=lambda c: c["cpu"])
    llcs = []
    for llc in range(SOCKETS * CCDS):
        members = sorted(c["cpu"] for c in cpus if c["llc"] == llc)
        llcs.append({"id": llc, "sysfs_id": llc, "level": 3, "size_kb": 32768, "cpus": members,
                     "numa_nodes": [llc // CCDS], "package": llc // CCDS})
    nodes = [{"id": s, "cpus": sorted(c["cpu"] for c in cpus if c["numa_node"] == s), "memory_kb": None}
             for s in range(SOCKETS)]
    return {"machine": "synthetic-epyc-9654-2s", "source": "manual", "kernel_release": None,
            "cpus": cpus, "llcs": llcs, "numa_nodes": nodes, "node_distances": [[10, 32], [32, 10]]}


def write_trace(path: Path, events: int, ntasks: int, seed: int) -> int:
    rng = random.Random(seed)
    topo = topology()
    ncpu = len(topo["cpus"])  # type: ignore[arg-type]
    llc_of = [c["llc"] for c in topo["cpus"]]  # type: ignore[index, union-attr]
    llc_cpus = [llc["cpus"] for llc in topo["llcs"]]  # type: ignore[index, union-attr]
    comms = ["worker", "db-writer", "nginx", "java", "kworker/u8:1", "stream", "<svg/onload=1>"]
    task_comm = {pid: f"{comms[pid % len(comms)]}" for pid in range(1000, 1000 + ntasks)}
    task_cpu = {pid: rng.randrange(ncpu) for pid in task_comm}
    running = [0] * ncpu
    sleeping = list(task_comm)
    ts_ns = 1_000_000_000
    out: list[str] = []
    n = 0

    def line(cur: int, cpu: int, body: str) -> None:
        nonlocal n
        comm = task_comm.get(cur, f"swapper/{cpu}")
        out.append(f"{comm:>16}-{cur:<7} [{cpu:03d}] d..2. {ts_ns // 1_000_000_000:5d}.{ts_ns % 1_000_000_000 // 1000:06d}: {body}")
        n += 1

    while n < events:
        ts_ns += rng.randint(1_000, 4_000)
        cpu = rng.randrange(ncpu)
        cur = running[cpu]
        if sleeping and (cur == 0 or rng.random() < 0.5):
            # wake a sleeper: mostly onto its previous LLC, sometimes elsewhere
            pid = sleeping.pop(rng.randrange(len(sleeping)))
            prev = task_cpu[pid]
            r = rng.random()
            if r < 0.80:
                target = rng.choice(llc_cpus[llc_of[prev]])
            elif r < 0.95:
                target = rng.choice(llc_cpus[rng.randrange(len(llc_cpus))])
            else:
                target = prev
            line(cur, cpu, f"sched_waking: comm={task_comm[pid]} pid={pid} prio=120 target_cpu={prev:03d}")
            if target != prev:
                line(cur, cpu, f"sched_migrate_task: comm={task_comm[pid]} pid={pid} prio=120 orig_cpu={prev} dest_cpu={target}")
                task_cpu[pid] = target
            line(cur, cpu, f"sched_wakeup: comm={task_comm[pid]} pid={pid} prio=120 target_cpu={target:03d}")
            if running[target] == 0:
                prev_comm = f"swapper/{target}"
                line(0, target, f"sched_switch: prev_comm={prev_comm} prev_pid=0 prev_prio=120 prev_state=R ==> "
                     f"next_comm={task_comm[pid]} next_pid={pid} next_prio=120")
                running[target] = pid
            else:
                sleeping.append(pid)  # the model keeps no runqueue: a wakee of a busy CPU is woken again later
        elif cur != 0:
            # the running task sleeps; the CPU goes idle
            line(cur, cpu, f"sched_switch: prev_comm={task_comm[cur]} prev_pid={cur} prev_prio=120 prev_state=S ==> "
                 f"next_comm=swapper/{cpu} next_pid=0 next_prio=120")
            running[cpu] = 0
            sleeping.append(cur)
    header = ["# tracer: nop", "#", f"# entries-in-buffer/entries-written: {n}/{n}   #P:{ncpu}", "#"]
    path.write_text("\n".join(header + out) + "\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("trace", type=Path)
    ap.add_argument("topology", type=Path)
    a = ap.parse_args()
    n = write_trace(a.trace, a.events, a.tasks, a.seed)
    a.topology.write_text(json.dumps(topology()))
    print(f"wrote {n} events to {a.trace}, topology to {a.topology}")


if __name__ == "__main__":
    main()
