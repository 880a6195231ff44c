"""Builds scheduler states by hand for the decision tests: tasks running, queued or asleep on
chosen CPUs, with chosen PELT averages. No engine, no event loop."""

from __future__ import annotations

from placemap.sim.features import Features
from placemap.sim.state import TASK_SLEEPING, State, Task
from placemap.sim.topology import preset

NOW = 10_000_000_000  # 10 s into the run: old enough that nothing is cache hot by default


def make_state(topology: str = "zen3-2s-nps1", **features: bool | int) -> State:
    st = State(preset(topology), Features(**features))  # type: ignore[arg-type]
    st.now = NOW
    for rq in st.rqs:
        rq.pelt_ts = NOW
    return st


def task(
    st: State,
    cpu: int,
    *,
    state: str = "running",
    util: float = 0.0,
    load: float | None = None,
    hints: int = 0,
    ran_ago_ns: int = 10**9,
) -> Task:
    """A task on `cpu`: "running" (curr, or queued when the CPU already runs one), "queued",
    or "sleeping" (blocked, last ran there)."""
    p = Task(len(st.tasks) + 1, f"t{len(st.tasks) + 1}", hints=hints)
    st.tasks.append(p)
    p.util = util
    p.load = util if load is None else load
    p.pelt_ts = st.now
    p.last_ran_ns = st.now - ran_ago_ns
    if state == "sleeping":
        p.state = TASK_SLEEPING
        st.attach(p, cpu)
        return p
    st.enqueue(p, cpu)
    rq = st.rqs[cpu]
    if state == "running" and rq.curr is None:
        st.set_curr(rq, p)
    return p


def fill(st: State, cpus: list[int] | range, util: float = 1024.0) -> list[Task]:
    """One busy task on each CPU."""
    return [task(st, c, util=util) for c in cpus]
