"""The fair class's per-task state against v6.0's kernel/sched/fair.c and core.c: what a forked
child inherits, where vruntime is placed, when the running task is preempted."""

from __future__ import annotations

from placemap.sim.engine import EXIT, SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset


class Fanout:
    """Wake each of `wakees` in turn (each a different task: record_wakee() counts a flip per
    change of wakee), then fork one child and exit."""

    def __init__(self, wakees: list[Task]) -> None:
        self.wakees = wakees
        self.child: Task | None = None
        self.done = False

    def step(self, eng: Engine, p: Task) -> int:
        if self.done:
            return EXIT
        for w in self.wakees:
            eng.wake(w, p)
        self.child = eng.fork(p, "child", Idle())
        self.done = True
        return 10_000


class Idle:
    def step(self, eng: Engine, p: Task) -> int:
        return SLEEP


def test_a_forked_child_inherits_its_parents_wakee_flips() -> None:
    """dup_task_struct() copies the task_struct and __sched_fork() resets no wakee field, so a
    parent that fanned out to many wakees hands its wakee_flips, wakee_flip_decay_ts and
    last_wakee to its child (wake_wide() of the child's first wakeups sees them)."""
    eng = Engine(preset("bdw-1s-20"))
    sleepers = [eng.spawn_asleep(f"s{i}", Idle(), 5) for i in range(6)]
    f = Fanout(sleepers)
    parent = eng.spawn("parent", f, 0)
    eng.run(1_000_000)
    assert f.child is not None
    assert parent.wakee_flips == 6
    assert f.child.wakee_flips == parent.wakee_flips
    assert f.child.last_wakee is sleepers[-1]
    assert f.child.wakee_flip_decay_ns == parent.wakee_flip_decay_ns
