"""The load balancer as the RFC patch (5/5, "sched/fair: Add exception for hints in load
balancing path") and tip at 5531ecffa4b9 (v6.0-rc) have it:

- only the wakeup hints (wake_affine, wake_hold) hold a task on its LLC: can_migrate_task
  tests `p->hint & (PR_SCHED_HINT_WAKE_AFFINE | PR_SCHED_HINT_WAKE_HOLD)`; the fork hints act
  at fork only;
- the hold is tested before LBF_ALL_PINNED is cleared, so a runqueue whose every task is held
  ends the balance at out_all_pinned: nr_balance_failed back to 0 (no active balance follows)
  and the interval backs off up to MAX_PINNED_INTERVAL;
- the active balance stopper sets ignore_hint = sd->flags & SD_SHARE_PKG_RESOURCES: above the
  LLC it never pushes a hinted running task, whatever the LLC's load;
- nr_balance_failed is reset by a balanced outcome, a successful pull, and by the active
  balance stopper once it has pushed the task (active_load_balance_cpu_stop(): "Active
  balancing done, reset the failure counter"; v5.13's 23fb06d9602b only dropped the
  cache_nice_tries+1 write made when the stopper is kicked).
"""

from __future__ import annotations

from placemap.sim.features import HINT_FORK_AFFINE, HINT_FORK_SPREAD, HINT_WAKE_AFFINE, HINT_WAKE_HOLD
from placemap.sim.policy import balance as b
from placemap.sim.state import State
from tests.sim.scaffold import balance_intervals_ms, fill, make_state, no_failures, task, ticking_engine

MC, PKG, NUMA = 1, 2, 3  # level indices on zen3-2s-nps1: SMT, MC, PKG, NUMA


def _two_queued(hints: int) -> State:
    """LLC 1 (CPUs 8-15, 136-143): CPU 8 runs one task and has two queued with `hints`;
    LLC 0 is idle."""
    st = make_state()
    task(st, 8)
    task(st, 8, state="queued", hints=hints)
    task(st, 8, state="queued", hints=hints)
    return st


def test_only_the_wakeup_hints_hold_a_task_against_the_balancer() -> None:
    # the patch's can_migrate_task: "Only consider the hints from the wakeup path to maintain
    # data locality" -- a fork_affine or fork_spread task is pulled like anyone's
    for hints, pulled in (
        (0, 1),
        (HINT_FORK_AFFINE, 1),
        (HINT_FORK_SPREAD, 1),
        (HINT_WAKE_AFFINE, 0),
        (HINT_WAKE_HOLD, 0),
        (HINT_FORK_AFFINE | HINT_WAKE_AFFINE, 0),
    ):
        st = _two_queued(hints)
        moves, _ = b.load_balance(st, 0, PKG, b.CPU_IDLE, no_failures(st))
        assert len(moves) == pulled, (hints, moves)


def test_a_runqueue_whose_every_task_is_held_ends_all_pinned_and_resets_the_failures() -> None:
    # the running task is unhinted but runs (it would clear LBF_ALL_PINNED in the kernel, and
    # the balance would count as failed); with every task hinted the flag stays set
    st = make_state()
    task(st, 8, hints=HINT_WAKE_AFFINE)
    task(st, 8, state="queued", hints=HINT_WAKE_AFFINE)
    nf = no_failures(st)
    nf[0][PKG] = 7  # many failed tries before: an active balance would be due
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)
    assert moves == [] and why == b.R_ALL_PINNED
    assert nf[0][PKG] == 0, "out_all_pinned: sd->nr_balance_failed = 0"

    st = make_state()
    task(st, 8)  # unhinted running task: not all pinned, a plain failure
    task(st, 8, state="queued", hints=HINT_WAKE_AFFINE)
    nf = no_failures(st)
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)
    assert moves == [] and why == b.R_ALL_HOT_OR_PINNED and nf[0][PKG] == 1


def test_a_balanced_outcome_resets_the_failure_count() -> None:
    st = make_state()  # nothing runs anywhere: no busiest group
    nf = no_failures(st)
    nf[0][PKG] = 3
    moves, why = b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)
    assert moves == [] and why == b.R_NO_BUSIEST and nf[0][PKG] == 0


def test_a_successful_active_push_resets_the_failure_count() -> None:
    # a whole core of LLC 1 busy plus CPU 9, LLC 0 idle: CPU 0 fails to pull (nothing queued)
    # until nr_balance_failed > cache_nice_tries + 2, then pushes the running task of the
    # busiest runqueue; the stopper, having pushed it, resets the count, so the next push
    # needs cache_nice_tries + 3 failures again (the state is not changed here: the same
    # imbalance stays)
    st = make_state()
    fill(st, [8, 136])
    fill(st, [9])
    nf = no_failures(st)
    nice = st.sd.per_cpu[0][PKG].cache_nice_tries
    whys = [b.load_balance(st, 0, PKG, b.CPU_IDLE, nf)[1] for _ in range(2 * (nice + 3))]
    fail, push = b.R_ALL_HOT_OR_PINNED, b.R_ACTIVE
    assert whys == 2 * ([fail] * (nice + 2) + [push]), whys
    assert nf[0][PKG] == 0


def test_the_active_stopper_never_pushes_a_wake_hinted_task_across_llcs() -> None:
    # LLC 1 overloaded (18 runnable on 16 CPUs): the periodic pull may take hinted tasks, but
    # the stopper's ignore_hint is 0 above the LLC whatever its load
    st = make_state()
    held = task(st, 8, hints=HINT_WAKE_AFFINE)
    fill(st, [*range(9, 16), *range(136, 144)])
    task(st, 9, state="queued")
    task(st, 10, state="queued")
    assert not b.hint_holds(st, held, 8, 0)
    assert b.hint_holds(st, held, 8, 0, active=True)
    assert not b.hint_holds(st, held, 8, 9, active=True), "inside the LLC hints are ignored"


def test_an_all_pinned_balance_backs_the_interval_off_up_to_max_pinned_interval() -> None:
    # the balancer of a run: CPU 0's PKG-level balance finds only held tasks on LLC 1 and
    # doubles its interval each time, past max_interval (2 x 128 ms) up to 512 ms
    eng = ticking_engine()
    st = eng.st
    task(st, 8, hints=HINT_WAKE_HOLD)
    # the queued one is also bound to CPU 8, so that no CPU of its own LLC (where hints do not
    # hold) takes it and the runqueue stays as it is from tick to tick
    task(st, 8, state="queued", hints=HINT_WAKE_HOLD).cpus_allowed = frozenset({8})
    seen = balance_intervals_ms(eng, 0, PKG, 6)
    assert seen[-1] == b.MAX_PINNED_INTERVAL_MS > st.sd.per_cpu[0][PKG].max_interval_ms, seen
    assert seen == sorted(seen)
