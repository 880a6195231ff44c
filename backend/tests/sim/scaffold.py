"""Builds scheduler states by hand for the decision tests: tasks running, queued or asleep on
chosen CPUs, with chosen PELT averages. No engine, no event loop."""

from __future__ import annotations

from placemap.sim.cost import TICK_NS
from placemap.sim.engine import Engine
from placemap.sim.features import Features
from placemap.sim.state import TASK_SLEEPING, State, Task
from placemap.sim.topology import preset

NOW = 10_000_000_000  # 10 s into the run: old enough that nothing is cache hot by default


def make_state(topology: str = "zen3-2s-nps1", **features: bool | int) -> State:
    st = State(preset(topology), Features(**features))  # type: ignore[arg-type]
    st.now = NOW
    for rq in st.rqs:
        rq.pelt_ts = NOW
        rq.wake_stamp = NOW // TICK_NS  # SIS_PROP's idle prediction as fresh as at boot
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


def no_failures(st: State) -> list[list[int]]:
    """nr_balance_failed of every CPU's domains, all 0 (load_balance's `failed`)."""
    return [[0] * 8 for _ in st.rqs]


def fill(st: State, cpus: list[int] | range, util: float = 1024.0) -> list[Task]:
    """One busy task on each CPU."""
    return [task(st, c, util=util) for c in cpus]


def ticking_engine(topology: str = "zen3-2s-nps1") -> Engine:
    """An engine at NOW, every runqueue's averages as of then, whose balancer's tick
    (Balancer._on_tick) the test calls by hand after placing tasks with `task`."""
    eng = Engine(preset(topology), seed=1)
    eng.st.now = eng.env.now = NOW
    for rq in eng.st.rqs:
        rq.pelt_ts = NOW
    eng.live = 1
    return eng


def balance_intervals_ms(eng: Engine, cpu: int, level: int, n: int) -> list[int]:
    """`cpu`'s balance interval at domain `level` (ms) after each of `n` ticks, the level
    made due before each."""
    bal = eng.balancer
    seen = []
    for _ in range(n):
        bal.force_due(cpu, level)
        bal._on_tick(None, None)
        seen.append(bal.interval[cpu][level] // 1_000_000)
    return seen
