"""The event loop orders by (time, priority, sequence) and stops on request."""

from __future__ import annotations

import heapq
import random

import pytest

from placemap.sim import core
from placemap.sim.core import NORMAL, URGENT, Environment

# both queue layouts, whichever build runs: the heap of int keys (interpreted default) and
# the heap of Event objects (compiled default)
LAYOUTS = pytest.mark.parametrize("objects", [False, True], ids=["int-keys", "event-objects"])


@LAYOUTS
def test_events_run_in_time_then_priority_then_insertion_order(objects: bool) -> None:
    env = Environment(objects=objects)
    seen: list[tuple[int, str]] = []

    def note(a: str, _b: object) -> None:
        seen.append((env.now, a))

    env.schedule(20, NORMAL, note, "t20")
    env.schedule(10, NORMAL, note, "t10-normal-1")
    env.schedule(10, URGENT, note, "t10-urgent")
    env.schedule(10, NORMAL, note, "t10-normal-2")
    env.run(100)
    assert seen == [(10, "t10-urgent"), (10, "t10-normal-1"), (10, "t10-normal-2"), (20, "t20")]
    assert env.now == 100 and env.events == 4


@LAYOUTS
def test_run_stops_at_until_and_on_stop(objects: bool) -> None:
    env = Environment(objects=objects)
    seen: list[int] = []
    env.schedule(5, NORMAL, lambda a, b: seen.append(a), 5)
    env.schedule(50, NORMAL, lambda a, b: seen.append(a), 50)
    env.run(10)
    assert seen == [5] and len(env) == 1
    env.schedule(20, NORMAL, lambda a, b: env.stop(), None)
    env.run(100)
    assert seen == [5] and env.now == 20, "stop() ends the run at the stopping event"


@LAYOUTS
def test_past_times_are_clamped_to_now(objects: bool) -> None:
    env = Environment(objects=objects)
    env.run(30)
    seen: list[int] = []
    env.schedule(10, NORMAL, lambda a, b: seen.append(env.now), None)
    env.run(40)
    assert seen == [30]


@LAYOUTS
def test_order_holds_across_renumbering_and_growth(objects: bool) -> None:
    # More events than the first slot lists hold (4096), many pending at once (growth), events
    # posted from events at the same instant and later (renumbering while running): each event
    # run is the smallest pending (time, priority, post number), as a heap of tuples says.
    rng = random.Random(7)
    env = Environment(objects=objects)
    pending: list[tuple[int, int, int]] = []  # the reference queue
    prio_of: list[int] = []  # by post number
    ran: list[int] = []

    def post(t: int, prio: int) -> None:
        k = len(prio_of)
        prio_of.append(prio)
        heapq.heappush(pending, (max(t, env.now), prio, k))
        env.schedule(t, prio, on_event, k)

    def on_event(k: int, _b: object) -> None:
        assert heapq.heappop(pending) == (env.now, prio_of[k], k)
        ran.append(k)
        if len(prio_of) < 30_000:
            for _ in range(rng.randrange(3)):
                post(env.now + (0 if rng.random() < 0.3 else rng.randrange(5_000)), rng.randrange(2))

    for _ in range(6_000):
        post(rng.randrange(1_000), rng.randrange(2))
    env.run(10**9)
    assert len(ran) == len(prio_of) > 20_000 and not pending


def test_the_event_heap_keeps_its_invariant_and_pops_in_order() -> None:
    # the sifts of the heap of Events against a sorted model of (tk, seq); many equal tk, as
    # events at one instant are
    rng = random.Random(5)
    heap: list[core.Event] = []
    model: list[tuple[int, int]] = []

    def event(seq: int) -> core.Event:
        ev = core.Event()
        ev.tk = rng.randrange(40)
        ev.seq = seq
        return ev

    def key(ev: core.Event) -> tuple[int, int]:
        return (ev.tk, ev.seq)

    for seq in range(5000):
        op = rng.random()
        ev = event(seq)
        if op < 0.45 or not heap:
            core._ev_push(heap, ev)
            model.append(key(ev))
        elif op < 0.8:
            model.remove(min(model))
            core._ev_replace(heap, ev)
            model.append(key(ev))
        else:
            first = core._ev_pop(heap)
            assert key(first) == min(model)
            model.remove(key(first))
        assert all(key(heap[(i - 1) // 2]) < key(heap[i]) for i in range(1, len(heap))), "heap invariant"
        assert sorted(map(key, heap)) == sorted(model)
        assert all(ev.pos == i for i, ev in enumerate(heap)), "each Event knows its place"
    assert first.pos == -1, "a popped Event is off the heap"
    drained = []
    while heap:
        drained.append(key(core._ev_pop(heap)))
    assert drained == sorted(model)


def test_post_gen_over_takes_the_stale_event_s_place() -> None:
    """On the heap of Events, post_gen_over moves a still pending `old` to the new event's key
    (the heap then holds what a post would leave, less old); an old that has run, or is
    running, is left alone and the post is a plain one."""
    rng = random.Random(7)
    env = Environment(objects=True)
    mine: list[core.Event] = []  # events returned so far (some popped since)
    taken = 0
    for i in range(3000):
        env.now = i // 4  # many events at one instant
        old = rng.choice(mine) if mine and rng.random() < 0.5 else None
        pending = {(ev.tk, ev.seq) for ev in env._evheap}
        was_pending = old is not None and old.pos >= 0
        if was_pending:
            assert old is not None and old is env._evheap[old.pos]
            pending.discard((old.tk, old.seq))
            taken += 1
        ev = env.post_gen_over(old, env.now + rng.randrange(50), rng.randrange(2), 0, None, i)
        assert ev is not None and ev.g == i and ev.seq == i
        assert (ev is old) == was_pending
        pending.add((ev.tk, ev.seq))
        heap = env._evheap
        assert {(e.tk, e.seq) for e in heap} == pending
        keys = [(e.tk, e.seq) for e in heap]
        assert all(keys[(j - 1) // 2] < keys[j] for j in range(1, len(keys))), "heap invariant"
        assert all(e.pos == j for j, e in enumerate(heap))
        mine.append(ev)
        if rng.random() < 0.4:
            core._ev_pop(heap)
    assert taken > 500
    # interpreted layout: a plain post, nothing to return
    env = Environment(objects=False)
    assert env.post_gen_over(None, 5, URGENT, 0, None, 1) is None and len(env) == 1


def test_an_engine_run_is_the_same_on_both_layouts() -> None:
    """The engine posts its CPUs' events with post_gen: on the heap of Events the generation
    waits unboxed and comes back through handle_gen, on the int keys as handle's b. A hackbench
    run gives the same counters and metric either way."""
    from placemap.sim.engine import Engine  # noqa: PLC0415 - the engine only here
    from placemap.sim.scenario import build, parse_scenario  # noqa: PLC0415

    sc = parse_scenario(
        {"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 2, "loops": 20}, "seed": 3}
    )
    out = []
    ran = []
    for objects in (False, True):
        eng = Engine(sc.topology, sc.features, sc.seed)
        eng.env = Environment(eng, objects=objects)
        wl = build(sc.workload_spec)
        wl.setup(eng, sc.hints)
        eng.run(sc.duration_ns)
        out.append((eng.counters(eng.env.now), wl.metric(eng, eng.env.now), eng.env.now))
        ran.append(eng.env.events)
    assert out[0] == out[1]
    assert out[0][0]["context_switches"] > 100
    # the same run, less the stale events the heap of Events let later posts take over
    # (Engine._post_gen) instead of popping them to be ignored
    assert ran[0] > ran[1] > ran[0] * 0.7
