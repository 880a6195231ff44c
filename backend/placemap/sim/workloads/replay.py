"""trace: a recording's tasks replayed under other toggles (placement-model.md section 5,
"trace-driven: the wakeup graph, run lengths and sleep lengths of a recording").

The workload takes a profile (built outside this package from a recording's events, see
placemap.sim_profile): per recorded task its first CPU, how it began (running, asleep, or
forked by another task) and its program, a flat list of (op, argument) pairs in the order the
task did them:
  RUN ns     CPU work (the recorded time on a CPU, between its switches in and out)
  WAKE pid   wake the task `pid` (a sched_waking whose waker was this task)
  WAIT       sleep until another task's WAKE (the recorded sleep ended by a task)
  SLEEP ns   sleep for ns (a recorded sleep ended by a timer or an interrupt)
  FORK pid   fork the task `pid` (sched_wakeup_new with this task as the parent)
  EXIT
Every WAIT has exactly one WAKE that ended it in the recording; a WAKE that finds its task not
yet waiting is kept as a token that its next WAIT takes, so no wakeup is lost whichever order
the replayed schedule runs them in (the recording's own order is one valid order, so the
replay cannot deadlock). Placement (fork, wakeup and balance) is the simulated kernel's; only
the work and the wakeup graph come from the trace. The recording does not say which wakeups
were WF_SYNC, so none is. Tasks that were alive at the start of the recording start on their
first recorded CPU (modulo the simulated machine's online CPUs) at time 0, running (runnable)
or asleep in their first op as the recording began. Metric: runtime_s, the time until every task ended
(lower is better); the recording's own span is `recorded_ns`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from placemap.sim.engine import EXIT, SLEEP, Engine, Program
from placemap.sim.errors import ScenarioError
from placemap.sim.state import Task
from placemap.sim.workloads.params import check_keys

OP_RUN: Final = 0
OP_WAKE: Final = 1
OP_WAIT: Final = 2
OP_SLEEP: Final = 3
OP_FORK: Final = 4
OP_EXIT: Final = 5
OP_NAMES: Final = ("run", "wake", "wait", "sleep", "fork", "exit")
STARTS: Final = ("running", "asleep", "forked")
MAX_TASKS: Final = 200_000
MAX_OPS: Final = 20_000_000  # (op, argument) pairs over all tasks: ~0.3 GB of Python ints at most
MAX_NS: Final = 3_600 * 10**9  # one RUN or SLEEP: an hour


class TaskProfile:
    """One recorded task: its pid and name in the recording, first CPU, start and program."""

    __slots__ = ("comm", "cpu", "ops", "pid", "start")

    def __init__(self, pid: int, comm: str, cpu: int, start: str, ops: list[int]) -> None:
        self.pid = pid
        self.comm = comm
        self.cpu = cpu
        self.start = start
        self.ops = ops


class _Replayed(Program):
    """One task's recorded program, op by op."""

    def __init__(self, rp: TraceReplay, tp: TaskProfile) -> None:
        self.rp = rp
        self.tp = tp
        self.i = 0
        self.waiting = False  # blocked in a WAIT (a WAKE wakes it instead of leaving a token)
        self.tokens = 0  # WAKEs that came before their WAIT

    def step(self, eng: Engine, p: Task) -> int:
        rp = self.rp
        ops = self.tp.ops
        n = len(ops)
        i = self.i
        while i < n:
            op = ops[i]
            arg = ops[i + 1]
            i += 2
            if op == OP_RUN:
                if arg > 0:
                    self.i = i
                    return arg
            elif op == OP_WAKE:
                rp.wake(eng, p, arg)
            elif op == OP_WAIT:
                if self.tokens:
                    self.tokens -= 1
                else:
                    self.i = i
                    self.waiting = True
                    return SLEEP
            elif op == OP_SLEEP:
                self.i = i
                eng.wake_at(eng.env.now + arg, p)
                return SLEEP
            elif op == OP_FORK:
                rp.fork(eng, p, arg)
            else:
                break
        self.i = n
        rp.exited(eng)
        return EXIT


class TraceReplay:
    """The workload; `profile` as placemap.sim_profile builds it (see the module docstring)."""

    metric_name = "runtime_s"
    better = "lower"
    PARAMS: ClassVar[tuple[str, ...]] = ("profile",)

    def __init__(self, tasks: Sequence[TaskProfile], recorded_ns: int = 0, source: str = "") -> None:
        self.profiles = {tp.pid: tp for tp in tasks}
        self.order = list(tasks)
        self.recorded_ns = recorded_ns
        self.source = source
        self.programs: dict[int, _Replayed] = {}
        self.tasks: dict[int, Task] = {}  # by recorded pid, once created
        # WAKEs of tasks not forked yet in this replay (their parent is behind the recording's
        # order): the tokens they start with
        self.early: dict[int, int] = {}
        self.hints = 0
        self.alive = 0
        self.t_end = -1

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> TraceReplay:
        check_keys(spec, cls.PARAMS, field)
        prof = spec.get("profile")
        f = f"{field}.profile"
        if not isinstance(prof, Mapping):
            raise ScenarioError(f, "expected a trace profile (placemap sim resolves a recording into one)")
        raw = prof.get("tasks")
        if not isinstance(raw, list) or not raw:
            raise ScenarioError(f"{f}.tasks", "expected a non-empty list of tasks")
        if len(raw) > MAX_TASKS:
            raise ScenarioError(f"{f}.tasks", f"{len(raw)} tasks; at most {MAX_TASKS}")
        recorded = prof.get("recorded_ns", 0)
        if isinstance(recorded, bool) or not isinstance(recorded, int) or recorded < 0:
            raise ScenarioError(f"{f}.recorded_ns", f"expected a non-negative integer, got {recorded!r}")
        source = prof.get("source", "")
        tasks: list[TaskProfile] = []
        seen: set[int] = set()
        total = 0
        for k, t in enumerate(raw):
            tf = f"{f}.tasks[{k}]"
            if not isinstance(t, Mapping):
                raise ScenarioError(tf, "expected an object")
            pid = _int(t.get("pid"), f"{tf}.pid", 1, 2**31 - 1)
            if pid in seen:
                raise ScenarioError(f"{tf}.pid", f"duplicate pid {pid}")
            seen.add(pid)
            comm = t.get("comm", "")
            if not isinstance(comm, str):
                raise ScenarioError(f"{tf}.comm", "expected a string")
            cpu = _int(t.get("cpu"), f"{tf}.cpu", 0, 2**31 - 1)
            start = t.get("start")
            if start not in STARTS:
                raise ScenarioError(f"{tf}.start", f"expected one of {', '.join(STARTS)}, got {start!r}")
            ops = t.get("ops")
            if not isinstance(ops, list) or len(ops) % 2:
                raise ScenarioError(f"{tf}.ops", "expected a flat list of (op, argument) pairs")
            total += len(ops) // 2
            if total > MAX_OPS:
                raise ScenarioError(f"{tf}.ops", f"more than {MAX_OPS} ops in the profile")
            for j in range(0, len(ops), 2):
                op, arg = ops[j], ops[j + 1]
                of = f"{tf}.ops[{j}]"
                if isinstance(op, bool) or not isinstance(op, int) or not 0 <= op < len(OP_NAMES):
                    known = ", ".join(f"{i} {name}" for i, name in enumerate(OP_NAMES))
                    raise ScenarioError(of, f"unknown op {op!r}; known: {known}")
                hi = MAX_NS if op in (OP_RUN, OP_SLEEP) else 2**31 - 1
                _int(arg, f"{tf}.ops[{j + 1}]", 0, hi)
            if start == "asleep" and ops and ops[0] not in (OP_WAIT, OP_SLEEP):
                raise ScenarioError(f"{tf}.ops[0]", "an asleep task must begin with a wait or a sleep")
            tasks.append(TaskProfile(pid, comm[:15], cpu, str(start), [int(x) for x in ops]))
        start_of = {tp.pid: tp.start for tp in tasks}
        for k, tp in enumerate(tasks):
            ops = tp.ops
            for j in range(0, len(ops), 2):
                target = ops[j + 1]
                af = f"{f}.tasks[{k}].ops[{j + 1}]"
                if ops[j] in (OP_WAKE, OP_FORK) and target not in start_of:
                    raise ScenarioError(af, f"no task with pid {target}")
                if ops[j] == OP_FORK and start_of[target] != "forked":
                    raise ScenarioError(af, "forks a task that does not start as forked")
        return cls(tasks, recorded, str(source))

    def setup(self, eng: Engine, hints: int) -> None:
        self.hints = hints
        cpus = eng.st.cpus
        for tp in self.order:
            if tp.start == "forked" or (tp.start == "asleep" and not tp.ops):
                continue  # forked later; or asleep for the whole recording
            prog = _Replayed(self, tp)
            self.programs[tp.pid] = prog
            self.alive += 1
            cpu = cpus[tp.cpu % len(cpus)]
            if tp.start == "running":
                self.tasks[tp.pid] = eng.spawn(tp.comm, prog, cpu, hints=hints)
                continue
            # asleep from the start, in its first op: a WAIT, or a SLEEP that a timer ends
            p = self.tasks[tp.pid] = eng.spawn_asleep(tp.comm, prog, cpu, hints=hints)
            prog.i = 2
            if tp.ops[0] == OP_WAIT:
                prog.waiting = True
            else:
                eng.wake_at(eng.env.now + tp.ops[1], p)

    def fork(self, eng: Engine, parent: Task, pid: int) -> None:
        if pid in self.tasks:
            return  # forked once already (a profile that names it twice)
        tp = self.profiles[pid]
        prog = _Replayed(self, tp)
        prog.tokens = self.early.pop(pid, 0)
        self.programs[pid] = prog
        self.alive += 1
        self.tasks[pid] = eng.fork(parent, tp.comm, prog)

    def wake(self, eng: Engine, waker: Task, pid: int) -> None:
        prog = self.programs.get(pid)
        if prog is None:
            # not forked yet in this replay (the recording woke it after its fork): its first
            # WAIT takes the token
            self.early[pid] = self.early.get(pid, 0) + 1
            return
        if prog.waiting:
            prog.waiting = False
            eng.wake(self.tasks[pid], waker)
        else:
            prog.tokens += 1

    def exited(self, eng: Engine) -> None:
        self.alive -= 1
        if self.alive == 0:
            self.t_end = eng.env.now
            eng.env.stop()

    def complete(self) -> bool:
        return self.t_end >= 0

    def metric(self, eng: Engine, duration_ns: int) -> float:
        end = self.t_end if self.t_end >= 0 else eng.env.now
        return round(end / 1e9, 9)


def _int(v: Any, field: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ScenarioError(field, f"expected an integer in {lo}..{hi}, got {v!r}")
    return v
