"""A task that blocks stays on_cpu until its CPU switches away from it: when the CPU
newidle-balances first (pick_next_task() pulls a task while prev is still on_cpu), a wakeup of
the sleeper in that window waits for the switch-out, as try_to_wake_up() spins on p->on_cpu
before choosing a CPU. So the sleeper never runs elsewhere before it left its CPU, and the
event stream never shows one task on two CPUs."""

from __future__ import annotations

from placemap.sim.engine import EXIT, SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset
from placemap.sim.trace import SWITCH, WAKING, EventLog


class Burn:
    """`work_ns` of CPU work, then exit."""

    def __init__(self, work_ns: int) -> None:
        self.work_ns = work_ns
        self.started = False

    def step(self, eng: Engine, p: Task) -> int:
        if self.started:
            return EXIT
        self.started = True
        return self.work_ns


class SleepWokenAtOnce:
    """Run 1 ms, then block with a timer that wakes it at the same instant (so the wakeup
    lands while its CPU is still balancing), then run 1 ms and exit."""

    def __init__(self) -> None:
        self.steps = 0
        self.slept_at = -1

    def step(self, eng: Engine, p: Task) -> int:
        self.steps += 1
        if self.steps == 1:
            return 1_000_000
        if self.steps == 2:
            self.slept_at = eng.env.now
            eng.wake_at(eng.env.now, p)
            return SLEEP
        if self.steps == 3:
            return 1_000_000
        return EXIT


def test_a_sleeper_woken_while_its_cpu_newidle_balances_is_switched_out_first() -> None:
    log = EventLog()
    eng = Engine(preset("bdw-1s-20"), log=log)
    s = SleepWokenAtOnce()
    ps = eng.spawn("sleeper", s, 0)
    # two burners on CPU 5: one runs, one waits there for CPU 0's newidle balance to pull it
    for name in ("b1", "b2"):
        eng.spawn(name, Burn(50_000_000), 5)
    eng.run(20_000_000)
    assert s.steps == 4, "the sleeper was woken and finished"
    assert eng.migrations_by_cause["balance"] >= 1, "CPU 0 pulled a burner when the sleeper blocked"

    c = log.columns()
    rows = [
        (c["ts_ns"][i], c["kind"][i], c["cpu"][i], c["pid"][i], c["next_pid"][i]) for i in range(len(log))
    ]
    out = [(ts, cpu) for ts, k, cpu, pid, _n in rows if k == SWITCH and pid == ps.pid and ts >= s.slept_at]
    ins = [(ts, cpu) for ts, k, cpu, _p, nxt in rows if k == SWITCH and nxt == ps.pid and ts >= s.slept_at]
    wakes = [ts for ts, k, _c, pid, _n in rows if k == WAKING and pid == ps.pid]
    assert out and ins and wakes
    out_ts, out_cpu = out[0]
    assert out_cpu == 0 and out_ts > s.slept_at, "CPU 0 balanced before switching the sleeper out"
    # the wakeup waited for on_cpu: it happens at the switch-out, and the sleeper runs after it
    assert wakes[0] == out_ts
    assert ins[0][0] >= out_ts
    on: dict[int, int] = {}  # pid -> the CPU it was switched in on, until switched out there
    for _ts, k, cpu, pid, nxt in rows:
        if k != SWITCH:
            continue
        if pid and on.get(pid) == cpu:
            del on[pid]
        if nxt:
            assert nxt not in on, f"pid {nxt} switched in on CPU {cpu} while on CPU {on[nxt]}"
            on[nxt] = cpu
