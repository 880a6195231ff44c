"""fork_affine as the RFC's patch 4/5 ("sched/fair: Consider hints in the initial task wakeup
path") has it in find_idlest_group()'s group_has_spare case: stay in the local group while
`local_sgs.idle_cpus > local->group_weight / 2` ("consolidation until half of the local group
is filled"), after the NUMA preference, which either fork hint skips."""

from __future__ import annotations

from placemap.sim.features import HINT_FORK_AFFINE
from placemap.sim.policy import fork as f
from placemap.sim.state import State, Task
from tests.sim.scaffold import fill, make_state


def _child(st: State, hints: int) -> Task:
    p = Task(len(st.tasks) + 1, "child", hints=hints)
    st.tasks.append(p)
    return p


def test_fork_affine_consolidates_until_half_of_the_llc_is_busy() -> None:
    # zen3: LLC 0 is CPUs 0-7 and 128-135. With 7 of its 16 CPUs busy, 9 are idle (more than
    # half): the child stays in the parent's LLC; with 8 busy, 8 idle is not more than half
    # and the child goes to the idlest LLC, as tip's child does at once
    for busy, stays in ((7, True), (8, False)):
        st = make_state()
        fill(st, range(busy))
        d = f.select_task_rq_fork(st, _child(st, HINT_FORK_AFFINE), 0)
        assert (st.sd.llc_id[d.cpu] == 0) == stays, (busy, d.explain())
        tip = f.select_task_rq_fork(st, _child(st, 0), 0)
        assert st.sd.llc_id[tip.cpu] != 0, tip.explain()


def test_fork_affine_is_not_an_idle_core_rule() -> None:
    # one idle core's worth (2 idle CPUs) is not enough: 14 busy CPUs leave 2 idle
    st = make_state()
    fill(st, range(7))
    fill(st, range(128, 135))
    d = f.select_task_rq_fork(st, _child(st, HINT_FORK_AFFINE), 0)
    assert st.sd.llc_id[d.cpu] != 0, d.explain()
    assert f"NUMA: {f.R_FORK_AFFINE}" in d.via and f"PKG: {f.R_FORK_AFFINE}" not in d.via, d.explain()
