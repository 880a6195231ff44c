"""The simulated event stream, in the columns of the project's event schema
(schemas/events.json): what `placemap sim --save` turns into a recording (source
"simulated") so the dashboard can replay a run.

Columns are plain Python lists (the simulator stays free of pyarrow); `columns()` hands
them to whoever builds the Arrow batches. Rows are appended in simulated-time order, so
they are already ordered by ts_ns. Recording is off unless an EventLog is given to the
Engine; the hot path then pays one `is None` test per event.
"""

from __future__ import annotations

from placemap.sim.state import Task

WAKEUP_NEW = 0
WAKING = 1
WAKEUP = 2
MIGRATE = 3
SWITCH = 4
FORK = 5
EXIT = 6

PRIO = 120  # every simulated task is nice 0

COLUMNS = (
    "ts_ns",
    "cpu",
    "kind",
    "cur_pid",
    "pid",
    "comm",
    "prio",
    "target_cpu",
    "orig_cpu",
    "dest_cpu",
    "prev_state",
    "next_pid",
    "next_comm",
    "next_prio",
    "child_pid",
    "child_comm",
)


def idle_comm(cpu: int) -> str:
    return f"swapper/{cpu}"


class EventLog:
    """Columns of simulated events; None where a column does not apply to the kind."""

    def __init__(self, limit: int = 50_000_000) -> None:
        self.cols: dict[str, list[object]] = {c: [] for c in COLUMNS}
        self.limit = limit
        self.dropped = 0

    def __len__(self) -> int:
        return len(self.cols["ts_ns"])

    def _row(
        self, kind: int, ts: int, cpu: int, cur_pid: int, subject: tuple[int, str], **extra: object
    ) -> None:
        if len(self) >= self.limit:
            self.dropped += 1
            return
        c = self.cols
        c["ts_ns"].append(ts)
        c["cpu"].append(cpu)
        c["kind"].append(kind)
        c["cur_pid"].append(cur_pid)
        c["pid"].append(subject[0])
        c["comm"].append(subject[1])
        c["prio"].append(PRIO)  # the idle task prints prio 120 too
        for name in COLUMNS[7:]:
            c[name].append(extra.get(name))

    def wakeup_new(
        self, ts: int, cpu: int, cur_pid: int, p: Task, *, target: int, why: tuple[str, str] | None = None
    ) -> None:
        """`why`: the decision's (path, pick), as DecisionCounts counts it; a log that keeps
        reasons (placemap.sim_record) stores it, this one has no column for it."""
        self._row(WAKEUP_NEW, ts, cpu, cur_pid, (p.pid, p.name), target_cpu=target)

    def waking(self, ts: int, cpu: int, cur_pid: int, p: Task, *, prev: int) -> None:
        self._row(WAKING, ts, cpu, cur_pid, (p.pid, p.name), target_cpu=prev)

    def wakeup(self, ts: int, cpu: int, cur_pid: int, p: Task, why: tuple[str, str] | None = None) -> None:
        """`why` as for wakeup_new."""
        self._row(WAKEUP, ts, cpu, cur_pid, (p.pid, p.name), target_cpu=cpu)

    def migrate(
        self,
        ts: int,
        cpu: int,
        cur_pid: int,
        p: Task,
        *,
        orig: int,
        dest: int,
        why: tuple[str, str] | None = None,
    ) -> None:
        """`why` as for wakeup_new: a balancing move's (its balance and domain, the outcome); a
        wakeup's or fork's move has its reason on the wakeup or wakeup_new that follows."""
        self._row(MIGRATE, ts, cpu, cur_pid, (p.pid, p.name), orig_cpu=orig, dest_cpu=dest)

    def switch(self, ts: int, cpu: int, prev: tuple[int, str], *, state: str, nxt: tuple[int, str]) -> None:
        self._row(
            SWITCH,
            ts,
            cpu,
            prev[0],
            prev,
            prev_state=state,
            next_pid=nxt[0],
            next_comm=nxt[1],
            next_prio=PRIO,
        )

    def fork(self, ts: int, cpu: int, parent: Task, child: Task) -> None:
        self._row(
            FORK, ts, cpu, parent.pid, (parent.pid, parent.name), child_pid=child.pid, child_comm=child.name
        )

    def exit(self, ts: int, cpu: int, p: Task) -> None:
        self._row(EXIT, ts, cpu, p.pid, (p.pid, p.name))

    def columns(self) -> dict[str, list[object]]:
        """The columns, by schema name (missing schema columns are all null)."""
        return self.cols
