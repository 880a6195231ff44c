"""A recording's events -> the trace workload's profile (placemap.sim.workloads.replay): per
task, how it began, its first CPU and its program of RUN / WAKE / WAIT / SLEEP / FORK / EXIT
ops, read from sched_switch, sched_waking (sched_wakeup where a source has no sched_waking) and
sched_wakeup_new. Also resolves a scenario's {"kind": "trace", "recording": ID} (from the
store) or {"kind": "trace", "file": PATH} (read by the importer) into {"kind": "trace",
"profile": ...}, and the topology "recorded" into the recording's host topology, so that the
simulator package itself reads no SQLite and runs no importer.

How each event reads (ts from the recording's first event):
- switch on CPU c, prev -> next: prev's time on c since it was switched in is RUN; if its
  prev_state is not runnable (R, R+) it blocks: a sleep whose kind its wakeup decides; in state
  X or Z (dead, zombie) it ends: EXIT (sched_process_exit comes earlier: an exiting task still
  runs, may be preempted and wakes its parent). next starts running (a task first seen here
  was runnable at the start).
- waking of p by cur_pid w on CPU c: when p is asleep and w is a task running on c, w's RUN so
  far then WAKE p, and p's sleep is a WAIT; when the waker is no task (cur_pid 0: an interrupt
  or timer) p's sleep is SLEEP for as long as it slept. A wakeup of p while it still runs (it
  set its sleeping state, the waker came before its switch out) is kept if p then switches out
  asleep. A task first seen being woken was asleep at the start.
- wakeup_new of p by w: w's RUN so far then FORK p.
A sleep never ended before the recording ends ends the task's program; a pid seen again after
its task ended is a new task (pid reuse). What the recording lacks is counted in `skipped`:
switches missing (a CPU's switch out of a task other than the one its last switch ran: the
time between is split at the moment the earlier task was last seen running), sleeps ended by
a switch in with no wakeup recorded (replayed as a SLEEP of their length), wakeups of pid 0.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from placemap.schema.events import EVENT_SCHEMA, Kind
from placemap.sim.errors import ScenarioError
from placemap.sim.scenario import parse_scenario
from placemap.sim.workloads.replay import OP_EXIT, OP_FORK, OP_RUN, OP_SLEEP, OP_WAIT, OP_WAKE
from placemap.sim_inputs import trace_input
from placemap.store import RecordingRow, Store
from placemap.store.codec import decode_chunk

RUNNABLE_STATES = ("R", "R+")
BATCH = 65_536  # events made into Python objects at a time
# profile keys of tasks whose pid an earlier task of the recording had (above PID_MAX_LIMIT, 2^22)
REUSED_PID_BASE = 1 << 30
COLUMNS = (
    "ts_ns", "cpu", "kind", "cur_pid", "pid", "comm", "target_cpu", "prev_state", "next_pid", "next_comm",
)  # fmt: skip


class ProfileError(ValueError):
    """The events cannot make a profile (no task ran)."""


@dataclass
class _Task:
    pid: int
    comm: str
    cpu: int
    start: str
    ops: list[int] = field(default_factory=list)
    run_cpu: int = -1  # the CPU it runs on now, -1 when not running
    run_since: int = 0
    pending_run: int = 0  # run time not yet written as a RUN op
    sleep_at: int = -1  # the ops index of the open sleep's op, -1 when not asleep
    sleep_since: int = 0
    done: bool = False
    # a wakeup while it still ran (it had set TASK_INTERRUPTIBLE, the waker came before its
    # switch out): the waker and the index of the WAKE op written for it
    prewake: tuple[_Task, int] | None = None

    def flush(self) -> None:
        if self.pending_run > 0:
            if len(self.ops) >= 2 and self.ops[-2] == OP_RUN:
                self.ops[-1] += self.pending_run
            else:
                self.ops += [OP_RUN, self.pending_run]
        self.pending_run = 0

    def ran_until(self, ts: int) -> None:
        if self.run_cpu >= 0:
            self.pending_run += max(0, ts - self.run_since)
            self.run_since = ts


def profile_from_table(table: pa.Table, source: str = "", name: str = "") -> dict[str, Any]:
    """The trace workload's profile of an event table in the project's event schema; `source`
    says where the events came from ("recording ID", "file NAME"), `name` is what the replay's
    own recording is named after (the recording's or the file's name)."""
    n = table.num_rows
    if n == 0:
        raise ProfileError("the recording has no events")
    t0 = table.column("ts_ns")[0].as_py()
    has_waking = pc.any(pc.equal(table.column("kind"), int(Kind.WAKING))).as_py()
    wake_kind = Kind.WAKING if has_waking else Kind.WAKEUP
    tasks: dict[int, _Task] = {}  # by recorded pid, its latest task
    every: list[_Task] = []  # every task, in the order first seen
    skipped = {"sleeps_without_wakeup": 0, "switches_missing": 0, "idle_subjects": 0}
    on_cpu: dict[int, _Task] = {}  # per CPU, the task switched in last (none: idle or not seen)
    cpu_since: dict[int, int] = {}  # per CPU, the time of its last switch

    def get(pid: int, comm: str, cpu: int, start: str) -> _Task:
        t = tasks.get(pid)
        if t is None or t.done:
            # a pid seen after its task ended is a new task (the pid was reused): its own key
            key = pid if t is None else REUSED_PID_BASE + len(every)
            t = tasks[pid] = _Task(key, comm, cpu, start)
            every.append(t)
            if start == "asleep":
                t.ops += [OP_WAIT, 0]
                t.sleep_at = 0
                t.sleep_since = t0
        return t

    def end_sleep(t: _Task, ts: int, by: _Task | None) -> None:
        if by is not None:
            t.ops[t.sleep_at] = OP_WAIT
            t.ops[t.sleep_at + 1] = 0
            by.ran_until(ts)
            by.flush()
            by.ops += [OP_WAKE, t.pid]
        else:
            t.ops[t.sleep_at] = OP_SLEEP
            t.ops[t.sleep_at + 1] = max(0, ts - t.sleep_since)
        t.sleep_at = -1

    def _events(cols: dict[str, list[Any]]) -> None:
        kinds = cols["kind"]
        ts_c, cpu_c, cur_c = cols["ts_ns"], cols["cpu"], cols["cur_pid"]
        pid_c, comm_c = cols["pid"], cols["comm"]
        for i in range(len(kinds)):
            k = kinds[i]
            ts = ts_c[i] - t0
            cpu = cpu_c[i]
            if k == Kind.SWITCH:
                prev = pid_c[i]
                cur = on_cpu.get(cpu)  # the task the recording last switched in on this CPU
                p = get(prev, comm_c[i], cpu, "running") if prev else None
                if cur is not None and cur is not p and cur.run_cpu == cpu:
                    # cur's switch out is missing: it ran until last seen running, and p (or the
                    # idle task) from there
                    skipped["switches_missing"] += 1
                    cur.run_cpu = -1
                    gap_from: int | None = cur.run_since
                else:
                    gap_from = None
                if p is not None:
                    if p.sleep_at >= 0:
                        # asleep, yet on a CPU: its switch in (or wakeup) was not recorded
                        skipped["sleeps_without_wakeup"] += 1
                        end_sleep(p, ts, None)
                    if p.run_cpu != cpu and not p.done:
                        if gap_from is not None:
                            p.run_cpu, p.run_since = cpu, gap_from
                        elif cpu not in cpu_since and not p.ops and p.pending_run == 0:
                            p.run_cpu, p.run_since = cpu, 0  # running since before the recording began
                        elif cur is None or cur is not p:
                            skipped["switches_missing"] += 1
                            p.run_cpu, p.run_since = cpu, cpu_since.get(cpu, 0)
                    p.ran_until(ts)
                    p.run_cpu = -1
                    state = cols["prev_state"][i] or "R"
                    pre, p.prewake = p.prewake, None
                    if p.done:
                        pass
                    elif state[0] in "XZ":
                        p.flush()
                        p.ops += [OP_EXIT, 0]
                        p.done = True
                    elif state not in RUNNABLE_STATES:
                        p.flush()
                        p.sleep_at = len(p.ops)
                        p.sleep_since = ts
                        p.ops += [OP_WAIT, 0]  # its wakeup decides WAIT or SLEEP
                        if pre is not None:
                            p.sleep_at = -1  # woken before it was off the CPU: its WAKE is written
                            pre = None
                    if pre is not None:
                        # the wakeup found it running and it did not sleep: no WAKE after all
                        _cancel_wake(pre)
                cpu_since[cpu] = ts
                on_cpu.pop(cpu, None)
                nxt = cols["next_pid"][i]
                if nxt:
                    q = get(nxt, cols["next_comm"][i] or "", cpu, "running")
                    if q.sleep_at >= 0:
                        skipped["sleeps_without_wakeup"] += 1
                        end_sleep(q, ts, None)
                    q.run_cpu, q.run_since = cpu, ts
                    on_cpu[cpu] = q
            elif k == wake_kind:
                pid = pid_c[i]
                if not pid:
                    skipped["idle_subjects"] += 1
                    continue
                tcpu = cols["target_cpu"][i]
                p = get(pid, comm_c[i], tcpu if tcpu is not None and tcpu >= 0 else cpu, "asleep")
                w = tasks.get(cur_c[i]) if has_waking and cur_c[i] else None
                waker = w if w is not None and w.run_cpu == cpu and w is not p and not w.done else None
                if p.done:
                    continue
                if p.sleep_at < 0:
                    if p.run_cpu >= 0 and waker is not None and p.prewake is None:
                        # woken while still on its CPU: a WAKE now, kept if it then switches out asleep
                        waker.ran_until(ts)
                        waker.flush()
                        p.prewake = (waker, len(waker.ops))
                        waker.ops += [OP_WAKE, p.pid]
                    continue
                end_sleep(p, ts, waker)
            elif k == Kind.WAKEUP_NEW:
                pid = pid_c[i]
                if not pid:
                    skipped["idle_subjects"] += 1
                    continue
                tcpu = cols["target_cpu"][i]
                parent = tasks.get(cur_c[i]) if cur_c[i] else None
                if pid in tasks and not tasks[pid].done:
                    continue
                if parent is not None and parent.run_cpu == cpu:
                    child = get(pid, comm_c[i], tcpu if tcpu is not None and tcpu >= 0 else cpu, "forked")
                    parent.ran_until(ts)
                    parent.flush()
                    parent.ops += [OP_FORK, child.pid]
                else:
                    # no parent task seen running: the child starts when the recording saw it
                    c = get(pid, comm_c[i], tcpu if tcpu is not None and tcpu >= 0 else cpu, "asleep")
                    end_sleep(c, ts, None)

    # a batch at a time as Python lists: memory for one batch's objects, not the recording's
    for batch in table.select(list(COLUMNS)).to_batches(max_chunksize=BATCH):
        cols = {c: batch.column(c).to_pylist() for c in COLUMNS}
        _events(cols)

    end = table.column("ts_ns")[n - 1].as_py() - t0
    out = []
    for t in every:
        if t.prewake is not None:
            _cancel_wake(t.prewake)
        if t.sleep_at >= 0:
            del t.ops[t.sleep_at :]  # asleep at the end: the program ends there
        t.ran_until(end)
        t.flush()
        out.append({"pid": t.pid, "comm": t.comm, "cpu": t.cpu, "start": t.start, "ops": t.ops})
    if not out:
        raise ProfileError("no task ran in the recording")
    return {"source": source, "name": name, "recorded_ns": end, "tasks": out, "skipped": skipped}


def _cancel_wake(pre: tuple[_Task, int]) -> None:
    """A WAKE written for a wakeup of a task that then did not sleep: a RUN of 0 (skipped)."""
    w, at = pre
    w.ops[at] = OP_RUN
    w.ops[at + 1] = 0


def recording_table(store: Store, rid: str) -> pa.Table:
    """Every stored event of recording `rid`, in order, as one table (EVENT_SCHEMA)."""
    seqs = [c.seq for c in store.list_chunks(rid)]
    tables = [decode_chunk(data, raw) for _seq, data, raw in store.iter_chunk_data(rid, seqs)]
    if not tables:
        return EVENT_SCHEMA.empty_table()
    return pa.concat_tables(tables)


def resolve(scenario: Any, store: Store | None = None, collector: Path | None = None) -> Any:
    """The scenario with a trace workload's "recording" (from `store`) or "file" (a trace file
    read by the importer, `collector`) replaced by its profile, and the topology "recorded" by
    the recording's host topology; any other scenario as it is. A recording that does not exist
    or has no host topology, or a file the importer refuses, is a ScenarioError naming the field."""
    what = trace_input(scenario)
    if what is None:
        return scenario
    wl = scenario["workload"]
    rec: RecordingRow | None = None
    if what == "recording":
        if store is None:
            raise ScenarioError("workload.recording", "no store to read recordings from")
        rid = wl["recording"]
        rec = _ready_recording(rid, store)
        table, source, name = recording_table(store, rid), f"recording {rid}", rec.name
    else:
        if collector is None:
            raise ScenarioError("workload.file", "placemap sim reads trace files; the API replays recordings")
        path = wl["file"]
        if not isinstance(path, str):
            raise ScenarioError("workload.file", f"expected a path, got {path!r}")
        table, source = file_table(collector, Path(path)), f"file {Path(path).name}"
        name = Path(path).name
    try:
        profile = profile_from_table(table, source=source, name=name)
    except ProfileError as exc:
        raise ScenarioError(f"workload.{what}", str(exc)) from exc
    out = dict(scenario)
    out["workload"] = {**{k: v for k, v in wl.items() if k != what}, "profile": profile}
    if scenario.get("topology") == "recorded":
        if rec is None:
            raise ScenarioError("topology", "a trace file brings no host topology: name a preset or give one")
        assert store is not None
        out["topology"] = _recorded_topology(rec, store)
    return out


def file_table(collector: Path, path: Path) -> pa.Table:
    """A trace file (ftrace text, trace-cmd, perf script, raw tracefs; as placemap-collect import
    reads it) as one table in the event schema; ScenarioError("workload.file") when it cannot."""
    if not path.is_file():
        raise ScenarioError("workload.file", f"no file {str(path)!r}")
    if not collector.is_file():
        raise ScenarioError("workload.file", f"no importer binary at {collector}: run scripts/install")
    proc = subprocess.run(
        [str(collector), "import", str(path), "--out", "-"], capture_output=True, check=False, timeout=3600
    )
    if proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise ScenarioError("workload.file", (msg[-1] if msg else f"the importer exited {proc.returncode}"))
    try:
        table = pa.ipc.open_stream(proc.stdout).read_all()
    except pa.ArrowInvalid as exc:
        raise ScenarioError("workload.file", f"the importer's output was not an Arrow stream: {exc}") from exc
    return pa.Table.from_arrays([table.column(f.name) for f in EVENT_SCHEMA], schema=EVENT_SCHEMA)


def _ready_recording(rid: Any, store: Store) -> RecordingRow:
    rec = store.get_recording(rid) if isinstance(rid, str) else None
    if rec is None:
        raise ScenarioError("workload.recording", f"no recording {rid!r}")
    if rec.status != "ready":
        raise ScenarioError("workload.recording", f"recording {rid!r} is {rec.status}, not ready")
    return rec


def _recorded_topology(rec: RecordingRow, store: Store) -> dict[str, Any]:
    topo = store.get_topology(rec.topology_id) if rec.topology_id else None
    if topo is None:
        raise ScenarioError("topology", f"recording {rec.id!r} has no host topology; name a preset")
    return topo


def recorded_host(scenario: Any, store: Store | None) -> dict[str, Any]:
    """The host topology of the recording a trace replay names (its "recorded" machine, for a
    sweep that runs it there beside presets). A ScenarioError names the field when there is no
    recording (a trace file brings no host topology) or the recording has no host topology."""
    wl = scenario.get("workload") if isinstance(scenario, dict) else None
    if not isinstance(wl, dict) or "recording" not in wl or store is None:
        raise ScenarioError("topology", "only a stored recording brings its host topology ('recorded')")
    return _recorded_topology(_ready_recording(wl["recording"], store), store)


def for_meta(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario as a recording's metadata keeps it: a trace workload's profile (which can be
    megabytes) shortened to its source, span and task count."""
    out = dict(scenario)
    wl = out.get("workload")
    if isinstance(wl, Mapping) and wl.get("kind") == "trace" and isinstance(wl.get("profile"), Mapping):
        prof = wl["profile"]
        tasks = prof.get("tasks")
        out["workload"] = {
            **{k: v for k, v in wl.items() if k != "profile"},
            "profile": {
                "source": prof.get("source", ""),
                "name": prof.get("name", ""),
                "recorded_ns": prof.get("recorded_ns", 0),
                "tasks": len(tasks) if isinstance(tasks, list) else 0,
                "skipped": prof.get("skipped", {}),
            },
        }
    return out


def validate(scenario: Any, store: Store) -> None:
    """Check a scenario as the API takes it, without building a recording's profile (that is the
    job's work): the recording exists and is ready, "recorded" has a topology, and every other
    field is valid. ScenarioError names the first bad field."""
    if not isinstance(scenario, dict):
        parse_scenario(scenario)
        return
    what = trace_input(scenario)
    if what == "file":
        raise ScenarioError("workload.file", "the API replays stored recordings: upload the trace first")
    if what is None:
        parse_scenario(scenario)
        return
    wl = scenario["workload"]
    rec = _ready_recording(wl["recording"], store)
    out = dict(scenario)
    if scenario.get("topology") == "recorded":
        out["topology"] = _recorded_topology(rec, store)
    stub = {"tasks": [{"pid": 1, "comm": "", "cpu": 0, "start": "running", "ops": []}]}
    out["workload"] = {**{k: v for k, v in wl.items() if k != "recording"}, "profile": stub}
    parse_scenario(out)
