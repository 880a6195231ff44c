"""CPU lanes (replay.lanes.cpu_lanes): who ran on each CPU over a window, checked against the plain
rule read straight off the real g4 capture's sched_switch lines (vm2-hackbench-g4, 2 CPUs): each
switch ends its CPU's span of prev_pid, its next_pid runs until the CPU's next switch, and a CPU
without a switch in the window runs the next_pid of its last switch before it, idle (pid 0)
drawing nothing. Windows across chunk boundaries, one on a switch, one between two of a CPU's.
The lanes summed per part of a window (replay.lane_busy) are checked against those same spans,
summed part by part."""

from __future__ import annotations

import gzip
import itertools
import re
import threading
import time
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from ftrace_lines import G4
from test_helpers import damage_chunk, ingest

from placemap.replay import lane_busy as lane_busy_module
from placemap.replay.delays import StoredChunkError
from placemap.replay.lane_busy import BUSY_SCHEMA, lane_busy, part_edges
from placemap.replay.lanes import WindowTooWideError, cpu_lanes
from placemap.schema.events import EVENT_SCHEMA, Kind
from placemap.store import Store

SWITCH = re.compile(
    r"^\s*.*-\d+\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): sched_switch: prev_comm=(.*) prev_pid=(\d+) .*"
    r"==> next_comm=(.*) next_pid=(\d+) next_prio"
)

Span = tuple[int, int, int, int, str]  # cpu, start, end, pid, comm


@pytest.fixture(scope="module")
def switches() -> list[tuple[int, int, int, str, int, str]]:
    """(ts, cpu, prev_pid, prev_comm, next_pid, next_comm) of every sched_switch line of g4."""
    out = []
    with gzip.open(G4, "rt", errors="replace") as f:
        for line in f:
            m = SWITCH.match(line)
            if m:
                cpu, sec, frac, pcomm, ppid, ncomm, npid = m.groups()
                ts = int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
                out.append((ts, int(cpu), int(ppid), pcomm, int(npid), ncomm))
    assert len(out) > 10_000
    return out


def reference(sw: list[tuple[int, int, int, str, int, str]], t0: int, t1: int) -> list[Span]:
    """The lanes of [t0, t1] by the plain rule (the module docstring's)."""
    spans: list[Span] = []
    for cpu in sorted({s[1] for s in sw}):
        mine = [s for s in sw if s[1] == cpu]
        before = [s for s in mine if s[0] <= t0]
        inside = [s for s in mine if t0 < s[0] <= t1]
        if not inside:
            if before:
                spans.append((cpu, t0, t1, before[-1][4], before[-1][5]))
            continue
        start = t0
        for ts, _, ppid, pcomm, _, _ in inside:
            spans.append((cpu, start, ts, ppid, pcomm))
            start = ts
        spans.append((cpu, start, t1, inside[-1][4], inside[-1][5]))
    return [s for s in spans if s[3] > 0 and s[2] > s[1]]


def _spans(table: pa.Table) -> list[Span]:
    cols = [table.column(n).to_pylist() for n in ("cpu", "start_ns", "end_ns", "pid")]
    comms = [str(c) for c in table.column("comm").to_pylist()]
    return [(c, s, e, p, n) for (c, s, e, p), n in zip(zip(*cols, strict=True), comms, strict=True)]


@pytest.fixture(scope="module")
def g4_lanes(tmp_path_factory: pytest.TempPathFactory, g4_table: pa.Table) -> tuple[Store, str]:
    store = Store(tmp_path_factory.mktemp("lanes") / "lanes.db")
    return store, ingest(store, g4_table, chunk_rows=3_000)


def test_the_lanes_are_the_switch_lines_own(
    g4_lanes: tuple[Store, str], switches: list[tuple[int, int, int, str, int, str]]
) -> None:
    store, rid = g4_lanes
    chunks = store.list_chunks(rid)
    first, last = switches[0][0], switches[-1][0]
    mid = chunks[len(chunks) // 2]
    # the whole run; across three chunk boundaries; starting on a switch; a window between two of
    # CPU 1's switches (it runs one task throughout, from the state at the window's start)
    cpu1 = [s[0] for s in switches if s[1] == 1]
    gap = max(range(len(cpu1) - 1), key=lambda i: cpu1[i + 1] - cpu1[i])
    quiet = (cpu1[gap] + 1, cpu1[gap] + (cpu1[gap + 1] - cpu1[gap]) // 2)
    on_switch = switches[len(switches) // 3][0]
    # no switch on any CPU: the longest pause between two of the machine's switches
    gaps = [(switches[i + 1][0] - switches[i][0], i) for i in range(len(switches) - 1)]
    _, g = max(gaps)
    still = (switches[g][0] + 1, switches[g + 1][0] - 1)
    for t0, t1 in (
        (first - 1, last + 1),
        (chunks[3].t_start_ns + 7, chunks[6].t_end_ns - 7),
        (mid.t_start_ns, mid.t_end_ns),
        (on_switch, on_switch + 2_000_000),
        quiet,
        still,
        (still[0], still[0]),  # an instant: nothing has a length
    ):
        got = _spans(cpu_lanes(store, rid, t0, t1, limit=1_000_000))
        want = reference(switches, t0, t1)
        assert got == want, (t0, t1)
        assert bool(got) == (t1 > t0), (t0, t1)
    lane = _spans(cpu_lanes(store, rid, *quiet, limit=1_000))
    assert [s[0] for s in lane if s[0] == 1] == [1], "CPU 1 runs one task through the quiet window"


def test_a_window_with_more_switches_than_asked_for_is_refused(
    g4_lanes: tuple[Store, str], switches: list[tuple[int, int, int, str, int, str]]
) -> None:
    store, rid = g4_lanes
    t0, t1 = switches[100][0], switches[199][0]
    n = sum(1 for s in switches if t0 <= s[0] <= t1)
    assert n == 100
    assert len(cpu_lanes(store, rid, t0, t1, limit=n)) > 0
    with pytest.raises(WindowTooWideError, match=f"more than {n - 1} context switches"):
        cpu_lanes(store, rid, t0, t1, limit=n - 1)


def test_each_span_names_its_thread_group_where_the_source_recorded_one(
    store: Store, g4_table: pa.Table
) -> None:
    """g4 with a thread group recorded for one task's events before a window only (as ftrace's
    record-tgid or perf give one, per cur_pid): its spans in the window name it, the others -1."""
    ts = g4_table.column("ts_ns")
    t0 = int(ts[len(ts) // 4].as_py())
    t1 = t0 + 2_000_000
    plain = ingest(store, g4_table)
    pid = int(cpu_lanes(store, plain, t0, t1, limit=1_000_000).column("pid")[0].as_py())
    before = pc.and_(pc.equal(g4_table.column("cur_pid"), pid), pc.less(ts, t0))
    assert pc.any(before).as_py()
    tgid = pc.if_else(before, pa.scalar(4242, pa.int32()), pa.nulls(1, pa.int32())[0])
    rid = ingest(store, g4_table.set_column(g4_table.schema.get_field_index("tgid"), "tgid", tgid))
    table = cpu_lanes(store, rid, t0, t1, limit=1_000_000)
    pids, tgids = table.column("pid").to_pylist(), table.column("tgid").to_pylist()
    assert any(p == pid for p in pids)
    assert all((t == 4242) == (p == pid) for p, t in zip(pids, tgids, strict=True))
    assert all(t == -1 for p, t in zip(pids, tgids, strict=True) if p != pid)


def test_a_recording_without_switches_has_no_lanes(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table.filter(pc.not_equal(g4_table.column("kind"), int(Kind.SWITCH))))
    ts = g4_table.column("ts_ns")
    assert cpu_lanes(store, rid, int(ts[0].as_py()), int(ts[-1].as_py()), limit=10).num_rows == 0


def test_a_damaged_chunk_is_named(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table, chunk_rows=3_000)
    seq = damage_chunk(store, rid)
    ts = g4_table.column("ts_ns")
    with pytest.raises(StoredChunkError, match=f"stored chunk {seq}: "):
        cpu_lanes(store, rid, int(ts[0].as_py()), int(ts[-1].as_py()), limit=1_000_000)


def _with_losses(g4_table: pa.Table, at: list[int], cpu: int) -> pa.Table:
    """g4 with ring-buffer loss records on `cpu` at the times `at`, in time order (stable: a loss
    dated at an event's time comes after it, as the importer dates it by the line before)."""
    n = len(at)
    rows: dict[str, list[object]] = {name: [None] * n for name in EVENT_SCHEMA.names}
    rows.update(ts_ns=list(at), cpu=[cpu] * n, kind=[int(Kind.LOST)] * n, cur_pid=[0] * n, pid=[0] * n)
    rows.update(comm=[""] * n, lost_events=[17] * n)
    table = pa.concat_tables([g4_table, pa.table(rows, schema=EVENT_SCHEMA)])
    return table.take(pc.sort_indices(table, sort_keys=[("ts_ns", "ascending")]))


def _marked(lanes: pa.Table) -> list[tuple[int, int, int]]:
    cols = (lanes.column(n).to_pylist() for n in ("cpu", "start_ns", "end_ns", "lost"))
    return [(c, s, e) for c, s, e, lost in zip(*cols, strict=True) if lost]


def test_a_span_during_which_its_cpu_lost_events_is_marked_whatever_the_zoom(
    store: Store, g4_table: pa.Table, switches: list[tuple[int, int, int, str, int, str]]
) -> None:
    """g4 with a ring-buffer loss recorded on CPU 1 between two of its switches, and one dated at a
    later switch of CPU 1 (the events lost after it): the span holding each is marked, no other;
    and still when the window cuts the span after the loss or before it."""
    cpu1 = [s[0] for s in switches if s[1] == 1]
    k = len(cpu1) // 2
    lost_at = (cpu1[k] + cpu1[k + 1]) // 2
    assert cpu1[k] < lost_at < cpu1[k + 1]
    rid = ingest(store, _with_losses(g4_table, [lost_at, cpu1[k + 3]], 1))
    lanes = cpu_lanes(store, rid, cpu1[k] - 5_000_000, cpu1[k + 1] + 5_000_000, limit=1_000_000)
    assert _marked(lanes) == [(1, cpu1[k], cpu1[k + 1]), (1, cpu1[k + 3], cpu1[k + 4])]
    after = cpu_lanes(store, rid, lost_at + 1, cpu1[k + 1] + 1, limit=1_000_000)
    assert _marked(after) == [(1, lost_at + 1, cpu1[k + 1])]
    before = cpu_lanes(store, rid, cpu1[k] - 1, lost_at - 1, limit=1_000_000)
    assert _marked(before) == [(1, cpu1[k], lost_at - 1)]


# cpu, start, end, pid, comm, lost, busy, share, spans, mine
Part = tuple[int, int, int, int, str, bool, float, float, int, float]


def busy_reference(
    spans: list[Span], lost: set[tuple[int, int]], t0: int, t1: int, n: int, *, mine: int = -1
) -> list[Part]:
    """The spans summed per part by the plain rule: [t0, t1] cut in n equal parts (whole ns, at most
    one per ns); per CPU and part the share some task ran, the task that ran most of it (a tie: the
    lower pid) and its share, how many spans touch it, whether one of them is marked lost, and the
    share task `mine` ran."""
    n = max(1, min(n, t1 - t0))
    edges = [t0 + (t1 - t0) * i // n for i in range(n + 1)]
    out: list[Part] = []
    for cpu in sorted({sp[0] for sp in spans}):
        own = [sp for sp in spans if sp[0] == cpu]
        for a, b in itertools.pairwise(edges):
            ran: dict[int, int] = {}
            comm: dict[int, str] = {}
            touch = [sp for sp in own if sp[1] < b and sp[2] > a]
            for sp in touch:
                ran[sp[3]] = ran.get(sp[3], 0) + min(sp[2], b) - max(sp[1], a)
                comm.setdefault(sp[3], sp[4])
            if not touch:
                continue
            top = min(ran, key=lambda p: (-ran[p], p))
            hit = any((sp[0], sp[1]) in lost for sp in touch)
            busy, share = sum(ran.values()) / (b - a), ran[top] / (b - a)
            out.append((cpu, a, b, top, comm[top], hit, busy, share, len(touch), ran.get(mine, 0) / (b - a)))
    return out


def _parts(table: pa.Table) -> list[Part]:
    names = ("cpu", "start_ns", "end_ns", "pid", "comm", "lost", "busy", "share", "spans", "mine")
    return [tuple(r) for r in zip(*(table.column(k).to_pylist() for k in names), strict=True)]  # type: ignore[misc]


def _same(got: list[Part], want: list[Part]) -> None:
    assert [g[:6] + g[8:9] for g in got] == [w[:6] + w[8:9] for w in want]
    for g, w in zip(got, want, strict=True):
        assert g[6] == pytest.approx(w[6], rel=1e-6) and g[7] == pytest.approx(w[7], rel=1e-6), (g, w)
        assert g[9] == pytest.approx(w[9], rel=1e-6, abs=1e-9), (g, w)


def test_the_lanes_summed_per_part_are_the_spans_own(
    g4_lanes: tuple[Store, str], switches: list[tuple[int, int, int, str, int, str]]
) -> None:
    """The whole run in 1, 7 and 200 parts; a zoomed window across chunks; a window of 10 ns asked
    for in 100 parts (10 of 1 ns); two parts meeting on a switch (the span it ends does not touch
    the second); the parts tile each CPU's busy time exactly; each asked for the share one task ran
    (where it ran, though another ran more)."""
    store, rid = g4_lanes
    chunks = store.list_chunks(rid)
    first, last = switches[0][0] - 1, switches[-1][0] + 1
    mid = chunks[len(chunks) // 2].t_start_ns
    on = switches[len(switches) // 2][0]
    # a task asked about: the third busiest by spans, so that in some parts others ran more
    mine = Counter(sp[3] for sp in reference(switches, first, last)).most_common(3)[2][0]
    hidden = 0
    for t0, t1, n in (
        (first, last, 1),
        (first, last, 7),
        (first, last, 200),
        (chunks[3].t_start_ns + 7, chunks[6].t_end_ns - 7, 50),
        (mid, mid + 10, 100),
        (on - 1_000_000, on + 1_000_000, 2),
    ):
        spans = reference(switches, t0, t1)
        got = _parts(lane_busy(store, rid, t0, t1, parts=n, limit=1_000_000, pid=mine))
        _same(got, busy_reference(spans, set(), t0, t1, n, mine=mine))
        assert got, (t0, t1, n)
        hidden += sum(1 for g in got if g[9] > 0 and g[3] != mine)
        for cpu in {sp[0] for sp in spans}:
            ran = sum(sp[2] - sp[1] for sp in spans if sp[0] == cpu)
            assert sum(round(g[6] * (g[2] - g[1])) for g in got if g[0] == cpu) == pytest.approx(
                ran, rel=1e-6
            )
    assert hidden > 0, "the task asked about ran in parts where another ran most"
    one = _parts(lane_busy(store, rid, first, last, parts=1, limit=1_000_000))
    assert [g[0] for g in one] == [0, 1] and all(0 < g[7] <= g[6] <= 1 for g in one)
    assert len(_parts(lane_busy(store, rid, mid, mid + 10, parts=100, limit=1_000_000))) <= 20


def test_a_part_touched_by_a_span_that_lost_events_is_marked(
    store: Store, g4_table: pa.Table, switches: list[tuple[int, int, int, str, int, str]]
) -> None:
    cpu1 = [s[0] for s in switches if s[1] == 1]
    k = len(cpu1) // 2
    lost_at = (cpu1[k] + cpu1[k + 1]) // 2
    rid = ingest(store, _with_losses(g4_table, [lost_at], 1))
    t0, t1 = cpu1[k] - 5_000_000, cpu1[k + 1] + 5_000_000
    spans = reference(switches, t0, t1)
    got = _parts(lane_busy(store, rid, t0, t1, parts=40, limit=1_000_000))
    _same(got, busy_reference(spans, {(1, cpu1[k])}, t0, t1, 40))
    assert any(g[5] for g in got) and all(g[0] == 1 for g in got if g[5])


def test_the_summed_lanes_are_refused_past_the_limit_as_the_spans_are(
    g4_lanes: tuple[Store, str], switches: list[tuple[int, int, int, str, int, str]]
) -> None:
    store, rid = g4_lanes
    t0, t1 = switches[100][0], switches[199][0]
    assert lane_busy(store, rid, t0, t1, parts=10, limit=100).num_rows > 0
    with pytest.raises(WindowTooWideError, match="more than 99 context switches"):
        lane_busy(store, rid, t0, t1, parts=10, limit=99)
    assert lane_busy(store, rid, t0, t0, parts=10, limit=100).num_rows == 0


def test_a_part_two_tasks_ran_equally_names_the_lower_pid(store: Store) -> None:
    """A made-up CPU 0: task 10 runs 100 ns, then task 5 100 ns, then idle: in one part of [0, 200],
    each ran half (the tie goes to the lower pid, 5, though 10 came first); in two, each its own."""
    rows = [(0, 0, "swapper/0", 10, "ten"), (100, 10, "ten", 5, "five"), (200, 5, "five", 0, "swapper/0")]
    cols: dict[str, list[object]] = {f.name: [None] * 3 for f in EVENT_SCHEMA}
    cols.update(
        ts_ns=[r[0] for r in rows],
        cpu=[0] * 3,
        kind=[int(Kind.SWITCH)] * 3,
        cur_pid=[r[1] for r in rows],
        pid=[r[1] for r in rows],
        comm=[r[2] for r in rows],
        prio=[120] * 3,
        prev_state=["R"] * 3,
        next_pid=[r[3] for r in rows],
        next_comm=[r[4] for r in rows],
        next_prio=[120] * 3,
    )
    rid = ingest(store, pa.Table.from_pydict(cols, schema=EVENT_SCHEMA))
    one = _parts(lane_busy(store, rid, 0, 200, parts=1, limit=10))
    assert one == [(0, 0, 200, 5, "five", False, 1.0, 0.5, 2, 0.0)]
    asked = _parts(lane_busy(store, rid, 0, 200, parts=1, limit=10, pid=10))
    assert asked == [(0, 0, 200, 5, "five", False, 1.0, 0.5, 2, 0.5)]
    two = _parts(lane_busy(store, rid, 0, 200, parts=2, limit=10))
    assert two == [
        (0, 0, 100, 10, "ten", False, 1.0, 1.0, 1, 0.0),
        (0, 100, 200, 5, "five", False, 1.0, 1.0, 1, 0.0),
    ]


def test_part_edges_stay_whole_and_in_order_over_any_window() -> None:
    """Equal parts to a ns, and no product leaving int64 however long the window (a 2^62 ns one in
    8,000 parts; the whole int64 range in one)."""
    assert part_edges(5, 17, 5).tolist() == [5 + k * 12 // 5 for k in range(6)]
    assert part_edges(0, 10, 100).tolist() == list(range(11))
    wide = part_edges(0, 2**62, 8_000)
    assert wide[-1] == 2**62 and bool((wide[1:] > wide[:-1]).all())
    assert part_edges(-(2**63), 2**63 - 1, 1).tolist() == [-(2**63), 2**63 - 1]


def _count_reads(monkeypatch: pytest.MonkeyPatch, name: str, *, pause: float = 0.0) -> list[tuple[int, int]]:
    """The windows lane_busy reads through its `name` (cpu_lanes, read_lanes), each after `pause` s."""
    reads: list[tuple[int, int]] = []
    real = getattr(lane_busy_module, name)

    def counted(store: Store, rid: str, t0: int, t1: int, *, limit: int) -> object:
        reads.append((t0, t1))
        time.sleep(pause)
        return real(store, rid, t0, t1, limit=limit)

    monkeypatch.setattr(lane_busy_module, name, counted)
    return reads


def test_a_ready_windows_spans_are_kept_for_the_same_window_asked_again(
    g4_lanes: tuple[Store, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked again about another task or in other parts, a kept window is summed from its spans as
    read the first time (the same answers as unkept); another window, or an unkept ask, reads them."""
    store, rid = g4_lanes
    reads = _count_reads(monkeypatch, "cpu_lanes")
    chunks = store.list_chunks(rid)
    t0, t1 = chunks[1].t_start_ns, chunks[4].t_end_ns
    first = lane_busy(store, rid, t0, t1, parts=50, limit=1_000_000, keep=True)
    again = lane_busy(
        store, rid, t0, t1, parts=80, limit=1_000_000, pid=int(first.column("pid")[0].as_py()), keep=True
    )
    assert reads == [(t0, t1)]
    assert again.equals(
        lane_busy(store, rid, t0, t1, parts=80, limit=1_000_000, pid=int(first.column("pid")[0].as_py()))
    )
    assert reads == [(t0, t1), (t0, t1)], "unkept: read again"
    lane_busy(store, rid, t0, t1 - 1, parts=50, limit=1_000_000, keep=True)
    assert reads[-1] == (t0, t1 - 1)


@pytest.fixture
def runs_of_one_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long window's runs cut as small as they go: every part read on its own (GROUP_ROWS 1), so
    every part edge cuts the spans across it."""
    monkeypatch.setattr(lane_busy_module, "GROUP_ROWS", 1)


def test_a_long_window_summed_one_run_at_a_time_is_the_switch_lines_own(
    g4_lanes: tuple[Store, str],
    switches: list[tuple[int, int, int, str, int, str]],
    runs_of_one_part: None,
) -> None:
    """Read one part at a time, the whole run and a window across chunks sum as the plain rule does
    over the whole window: the spans the runs' edges cut count once per part, a task's share, the
    task that ran most and its comm are the whole window's."""
    store, rid = g4_lanes
    chunks = store.list_chunks(rid)
    first, last = switches[0][0] - 1, switches[-1][0] + 1
    mine = Counter(sp[3] for sp in reference(switches, first, last)).most_common(3)[2][0]
    for t0, t1, n in ((first, last, 60), (chunks[3].t_start_ns + 7, chunks[6].t_end_ns - 7, 25)):
        edges = part_edges(t0, t1, n)
        assert len(lane_busy_module.part_runs(store.list_chunks(rid, t0, t1), edges, 1)) == n
        table = lane_busy(store, rid, t0, t1, parts=n, limit=1_000_000, pid=mine)
        got = _parts(table)
        _same(got, busy_reference(reference(switches, t0, t1), set(), t0, t1, n, mine=mine))
        assert table.schema.equals(BUSY_SCHEMA)


def test_a_lost_span_cut_by_the_runs_is_marked_on_every_part_it_touched(
    store: Store,
    g4_table: pa.Table,
    switches: list[tuple[int, int, int, str, int, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CPU 1's longest span of a task, a loss recorded early in it: read in runs of one part and of
    a few, every part the span touches is marked, on both sides of the runs' edges, as a single read
    marks them; no other part."""
    on1 = [s for s in switches if s[1] == 1]
    k = max((i for i in range(len(on1) - 1) if on1[i][4] > 0), key=lambda i: on1[i + 1][0] - on1[i][0])
    s0, s1 = on1[k][0], on1[k + 1][0]
    lossy = _with_losses(g4_table, [s0 + (s1 - s0) // 10], 1)
    # (chunks of 10 events: the span crosses several, and most runs' reads do not touch the loss's)
    rid = ingest(store, lossy, chunk_rows=10)
    t0, t1 = s0 - (s1 - s0), s1 + (s1 - s0)
    assert len(store.list_chunks(rid, s0, s1)) >= 3
    n = 30
    want = busy_reference(reference(switches, t0, t1), {(1, s0)}, t0, t1, n)
    inner = 0  # runs in which the span starts on an edge between two of the run's parts
    for cap in (1, 25, 100, 150, 300):
        monkeypatch.setattr(lane_busy_module, "GROUP_ROWS", cap)
        runs = lane_busy_module.part_runs(store.list_chunks(rid, t0, t1), part_edges(t0, t1, n), cap)
        assert len(runs) > 1
        inner += any(a < 10 < b for a, b in runs)  # (s0 is the 10th edge)
        got = _parts(lane_busy(store, rid, t0, t1, parts=n, limit=1_000_000))
        _same(got, want)
        marked = [g for g in got if g[5]]
        assert {g[0] for g in marked} == {1} and len(marked) >= 10
    assert inner > 0
    # one read whose window ends on the switch that starts the lost span, or starts on the one that
    # ends it: the span on the other side of that switch is not cut there, so not marked
    whole = ingest(store, lossy, chunk_rows=3_000)
    assert _marked(cpu_lanes(store, whole, t0, s0, limit=1_000_000)) == []
    assert _marked(cpu_lanes(store, whole, s1, t1, limit=1_000_000)) == []
    assert _marked(cpu_lanes(store, whole, s0, s1, limit=1_000_000)) == [(1, s0, s1)]


def test_a_long_windows_thread_groups_are_the_whole_windows(
    store: Store, g4_table: pa.Table, runs_of_one_part: None
) -> None:
    """One task's thread group recorded only in the window's first half: read one part at a time,
    the parts it ran most of name it in every run, the last quarter's too, whose chunks never do."""
    ts = g4_table.column("ts_ns")
    t0, t1 = int(ts[0].as_py()), int(ts[len(ts) - 1].as_py())
    half, quarter = t0 + (t1 - t0) // 2, t1 - (t1 - t0) // 4
    named_early = set(pc.filter(g4_table.column("cur_pid"), pc.less(ts, half)).to_pylist())
    plain = ingest(store, g4_table, chunk_rows=3_000)
    tops = lane_busy(store, plain, t0, t1, parts=20, limit=1_000_000)
    late = [
        p
        for p, s in zip(tops.column("pid").to_pylist(), tops.column("start_ns").to_pylist(), strict=True)
        if s >= quarter and p in named_early
    ]
    pid = Counter(late).most_common(1)[0][0]
    early = pc.and_(pc.equal(g4_table.column("cur_pid"), pid), pc.less(ts, half))
    tgid = pc.if_else(early, pa.scalar(4242, pa.int32()), pa.nulls(1, pa.int32())[0])
    rid = ingest(
        store, g4_table.set_column(g4_table.schema.get_field_index("tgid"), "tgid", tgid), chunk_rows=3_000
    )
    assert all(c.t_start_ns > half for c in store.list_chunks(rid, quarter, t1))
    got = lane_busy(store, rid, t0, t1, parts=20, limit=1_000_000)
    rows = list(
        zip(
            got.column("pid").to_pylist(),
            got.column("tgid").to_pylist(),
            got.column("start_ns").to_pylist(),
            strict=True,
        )
    )
    assert all((t == 4242) == (p == pid) for p, t, _ in rows)
    assert any(p == pid and s >= quarter for p, _, s in rows), "named where the chunks read do not"


def test_a_long_window_is_refused_past_the_limit_counting_a_switch_on_a_runs_edge_once(
    g4_lanes: tuple[Store, str], switches: list[tuple[int, int, int, str, int, str]], runs_of_one_part: None
) -> None:
    """Three parts read one at a time, the first or the last edge between them on a switch (read by
    both runs): refused past the window's own count of switches, not one more."""
    store, rid = g4_lanes
    on = switches[150][0]
    start = switches[100][0] - (on - switches[100][0]) % 2
    for t0, t1, edge in ((start, start + 3 * (on - start), 1), (start, start + 3 * (on - start) // 2, 2)):
        assert part_edges(t0, t1, 3).tolist()[edge] == on
        n = sum(1 for s in switches if t0 <= s[0] <= t1)
        assert lane_busy(store, rid, t0, t1, parts=3, limit=n).num_rows > 0
        with pytest.raises(WindowTooWideError, match=f"more than {n - 1:,} context switches"):
            lane_busy(store, rid, t0, t1, parts=3, limit=n - 1)


def test_runs_tile_the_parts_each_touching_chunks_of_at_most_the_cap(g4_lanes: tuple[Store, str]) -> None:
    store, rid = g4_lanes
    chunks = store.list_chunks(rid)
    t0, t1 = chunks[0].t_start_ns, chunks[-1].t_end_ns
    edges = part_edges(t0, t1, 500)
    for cap in (1, 3_000, 9_000, 10**9):
        runs = lane_busy_module.part_runs(chunks, edges, cap)
        assert runs[0][0] == 0 and runs[-1][1] == 500
        assert all(a < b for a, b in runs) and all(b == a2 for (_, b), (a2, _) in itertools.pairwise(runs))
        for a, b in runs:
            touched = store.list_chunks(rid, int(edges[a]), int(edges[b]))
            assert b - a == 1 or sum(c.rows for c in touched) <= cap
            # (and as long as it may be: one more part would pass the cap)
            if b < 500:
                more = store.list_chunks(rid, int(edges[a]), int(edges[b + 1]))
                assert sum(c.rows for c in more) > cap
    assert len(lane_busy_module.part_runs(chunks, edges, 10**9)) == 1


def test_a_long_windows_sums_are_kept_for_a_ready_recording_and_any_task_asked_about(
    g4_lanes: tuple[Store, str], monkeypatch: pytest.MonkeyPatch, runs_of_one_part: None
) -> None:
    store, rid = g4_lanes
    reads = _count_reads(monkeypatch, "read_lanes")
    chunks = store.list_chunks(rid)
    t0, t1 = chunks[1].t_start_ns, chunks[4].t_end_ns
    first = lane_busy(store, rid, t0, t1, parts=8, limit=1_000_000, keep=True)
    assert len(reads) == 8
    assert lane_busy(store, rid, t0, t1, parts=8, limit=1_000_000, keep=True).equals(first)
    assert len(reads) == 8, "kept: not read again"
    assert lane_busy(store, rid, t0, t1, parts=8, limit=1_000_000).equals(first)
    assert len(reads) == 16, "not ready: read again"
    # asked about a task: its share of each part from the kept window, as an unkept ask reads it
    for pid in {int(p) for p in first.column("pid").to_pylist()[:5]}:
        asked = lane_busy(store, rid, t0, t1, parts=8, limit=1_000_000, pid=pid, keep=True)
        assert len(reads) == 16, "a task asked about: not read again"
        assert max(asked.column("mine").to_pylist()) > 0
        assert asked.equals(lane_busy(store, rid, t0, t1, parts=8, limit=1_000_000, pid=pid))
        del reads[16:]
    lane_busy(store, rid, t0, t1 + 1, parts=8, limit=1_000_000, keep=True)
    assert len(reads) > 16, "another window: read"
    # a window with more (part, task) times than may be kept: read each time
    monkeypatch.setattr(lane_busy_module, "KEEP_PAIRS_MAX", 0)
    del reads[:]
    for _ in range(2):
        lane_busy(store, rid, t0, t1 - 1, parts=8, limit=1_000_000, keep=True)
    assert len(reads) == 16


def test_a_lost_span_whose_ends_name_different_tasks_is_marked_as_one_across_the_runs(
    store: Store,
    g4_table: pa.Table,
    switches: list[tuple[int, int, int, str, int, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CPU 1's longest span of a task, its ending switch made to name another task switched out (as
    where events were lost) and a loss recorded early in it: read one part at a time, the parts its
    pieces touch are marked lost as one read marks them, though the runs name its pieces apart."""
    on1 = [s for s in switches if s[1] == 1]
    k = max((i for i in range(len(on1) - 1) if on1[i][4] > 0), key=lambda i: on1[i + 1][0] - on1[i][0])
    s0, s1 = on1[k][0], on1[k + 1][0]
    ts, cpu, kind = (g4_table.column(n).to_numpy(zero_copy_only=False) for n in ("ts_ns", "cpu", "kind"))
    at = np.flatnonzero((ts == s1) & (cpu == 1) & (kind == int(Kind.SWITCH)))
    assert len(at) == 1
    other = pc.if_else(
        pa.array(np.arange(len(ts)) == at[0]), pa.scalar(4_000_000, pa.int32()), g4_table.column("pid")
    )
    index = g4_table.schema.get_field_index("pid")
    holed = g4_table.set_column(index, g4_table.schema.field(index), other)
    rid = ingest(store, _with_losses(holed, [s0 + (s1 - s0) // 10], 1), chunk_rows=10)
    t0, t1, n = s0 - (s1 - s0), s1 + (s1 - s0), 30
    one = lane_busy(store, rid, t0, t1, parts=n, limit=1_000_000)
    assert 4_000_000 in one.column("pid").to_pylist()
    monkeypatch.setattr(lane_busy_module, "GROUP_ROWS", 1)
    runs = lane_busy(store, rid, t0, t1, parts=n, limit=1_000_000)
    assert 4_000_000 in runs.column("pid").to_pylist() and on1[k][4] in runs.column("pid").to_pylist()
    for name in ("cpu", "start_ns", "lost", "busy", "spans"):
        assert runs.column(name).equals(one.column(name)), name
    assert sum(runs.column("lost").to_pylist()) >= 10


def test_a_part_whose_own_chunks_hold_more_than_one_read_takes_is_refused(
    g4_lanes: tuple[Store, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, rid = g4_lanes
    chunks = store.list_chunks(rid)
    t0, t1 = chunks[0].t_start_ns, chunks[-1].t_end_ns
    monkeypatch.setattr(lane_busy_module, "GROUP_ROWS", 1)
    monkeypatch.setattr(lane_busy_module, "PART_ROWS_MAX", 7_000)
    assert lane_busy(store, rid, t0, t1, parts=2_000, limit=1_000_000).num_rows > 0
    for parts in (3, 1):
        with pytest.raises(lane_busy_module.PartTooWideError, match="more than 7,000 events: zoom in"):
            lane_busy(store, rid, t0, t1, parts=parts, limit=1_000_000)


def test_a_long_window_asked_again_while_it_is_summed_waits_for_that_sum(
    g4_lanes: tuple[Store, str], monkeypatch: pytest.MonkeyPatch, runs_of_one_part: None
) -> None:
    """The page's first ask of a long window and a task selected while it is summed (the same window
    asked about a task): summed once, the second answered from it when it is done, as an unkept ask
    about that task answers."""
    store, rid = g4_lanes
    # (each read slowed, so that the second ask comes while the first is summed)
    reads = _count_reads(monkeypatch, "read_lanes", pause=0.02)
    chunks = store.list_chunks(rid)
    t0, t1 = chunks[2].t_start_ns, chunks[5].t_end_ns
    pid = int(lane_busy(store, rid, t0, t1, parts=10, limit=1_000_000).column("pid")[0].as_py())
    del reads[:]
    out: dict[str, pa.Table] = {}
    first = threading.Thread(
        target=lambda: out.update(first=lane_busy(store, rid, t0, t1, parts=10, limit=1_000_000, keep=True))
    )
    first.start()
    while not reads:
        time.sleep(0.001)
    out["asked"] = lane_busy(store, rid, t0, t1, parts=10, limit=1_000_000, pid=pid, keep=True)
    first.join()
    assert len(reads) == 10, "summed once"
    assert out["asked"].equals(lane_busy(store, rid, t0, t1, parts=10, limit=1_000_000, pid=pid))
    assert max(out["asked"].column("mine").to_pylist()) > 0 and not any(
        out["first"].column("mine").to_pylist()
    )
