/**
 * Test-only: a minimal ftrace-text reader turning real trace excerpts (../shared/traces) into
 * EventRow objects, so Arrow fixtures and replay tests use real kernel data. Not a product
 * parser (that is the Go collector's job); it understands just the sched lines in those files.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Kind } from "../client/events";
import type { EventRow } from "../client/events";

const LINE = /^\s*(.+)-(\d+)\s+(?:\(\s*\d+\)\s+)?\[(\d+)\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s+(.*)$/;
const WAKE = /^comm=(.*) pid=(\d+) prio=(-?\d+) target_cpu=(\d+)/;
const MIGRATE = /^comm=(.*) pid=(\d+) prio=(-?\d+) orig_cpu=(\d+) dest_cpu=(\d+)/;
const SWITCH = /^prev_comm=(.*) prev_pid=(\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+) next_prio=(-?\d+)/;
const FORK = /^comm=(.*) pid=(\d+) child_comm=(.*) child_pid=(\d+)/;
const EXIT = /^comm=(.*) pid=(\d+) prio=(-?\d+)/;
const EXEC = /^filename=(\S+) pid=(\d+) old_pid=(\d+)/;

export function emptyRow(ts: bigint, cpu: number, kind: number, curPid: number): EventRow {
  return {
    ts_ns: ts,
    cpu,
    kind,
    cur_pid: curPid,
    tgid: null,
    pid: 0,
    comm: "",
    prio: null,
    target_cpu: null,
    orig_cpu: null,
    dest_cpu: null,
    prev_state: null,
    next_pid: null,
    next_comm: null,
    next_prio: null,
    child_pid: null,
    child_comm: null,
    filename: null,
    old_pid: null,
    llc: null,
    util: null,
    lost_events: null,
  };
}

export function parseFtrace(text: string): EventRow[] {
  const rows: EventRow[] = [];
  for (const line of text.split("\n")) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, task = "", curPidS = "0", cpuS = "0", secS = "0", fracS = "0", ev = "", rest = ""] = m;
    const ts = BigInt(secS) * 1_000_000_000n + BigInt(fracS.padEnd(9, "0").slice(0, 9));
    const cpu = Number(cpuS);
    const curPid = Number(curPidS);
    let r: RegExpExecArray | null;
    switch (ev) {
      case "sched_wakeup_new":
      case "sched_waking":
      case "sched_wakeup": {
        if (!(r = WAKE.exec(rest))) continue;
        const kind = ev === "sched_wakeup_new" ? Kind.WakeupNew : ev === "sched_waking" ? Kind.Waking : Kind.Wakeup;
        const row = emptyRow(ts, cpu, kind, curPid);
        row.comm = r[1] ?? "";
        row.pid = Number(r[2]);
        row.prio = Number(r[3]);
        row.target_cpu = Number(r[4]);
        rows.push(row);
        break;
      }
      case "sched_migrate_task": {
        if (!(r = MIGRATE.exec(rest))) continue;
        const row = emptyRow(ts, cpu, Kind.Migrate, curPid);
        row.comm = r[1] ?? "";
        row.pid = Number(r[2]);
        row.prio = Number(r[3]);
        row.orig_cpu = Number(r[4]);
        row.dest_cpu = Number(r[5]);
        rows.push(row);
        break;
      }
      case "sched_switch": {
        if (!(r = SWITCH.exec(rest))) continue;
        const row = emptyRow(ts, cpu, Kind.Switch, curPid);
        row.comm = r[1] ?? "";
        row.pid = Number(r[2]);
        row.prio = Number(r[3]);
        row.prev_state = r[4] ?? null;
        row.next_comm = r[5] ?? null;
        row.next_pid = Number(r[6]);
        row.next_prio = Number(r[7]);
        rows.push(row);
        break;
      }
      case "sched_process_fork": {
        if (!(r = FORK.exec(rest))) continue;
        const row = emptyRow(ts, cpu, Kind.Fork, curPid);
        row.comm = r[1] ?? "";
        row.pid = Number(r[2]);
        row.child_comm = r[3] ?? null;
        row.child_pid = Number(r[4]);
        rows.push(row);
        break;
      }
      case "sched_process_exit": {
        if (!(r = EXIT.exec(rest))) continue;
        const row = emptyRow(ts, cpu, Kind.Exit, curPid);
        row.comm = r[1] ?? "";
        row.pid = Number(r[2]);
        row.prio = Number(r[3]);
        rows.push(row);
        break;
      }
      case "sched_process_exec": {
        if (!(r = EXEC.exec(rest))) continue;
        const row = emptyRow(ts, cpu, Kind.Exec, curPid);
        row.comm = task.trim();
        row.filename = r[1] ?? null;
        row.pid = Number(r[2]);
        row.old_pid = Number(r[3]);
        rows.push(row);
        break;
      }
      default:
        break;
    }
  }
  return rows;
}

export function readTrace(path: string): string {
  const buf = readFileSync(path);
  return (path.endsWith(".gz") ? gunzipSync(buf) : buf).toString("utf8");
}
