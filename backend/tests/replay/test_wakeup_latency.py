"""The run-queue delay after a wakeup that a recording's metrics give (kernel.wakeup_delays, the
ingest's histogram): against the delays read straight from the real ftrace text of
vm2-hackbench-g4 (../shared/traces) by the rule written out here, across chunk boundaries; the
histogram's buckets; a wakeup of a task that was still running; and a ring-buffer loss."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3

import numpy as np
import pyarrow as pa
import pytest
from ftrace_lines import G4
from test_helpers import ingest

from placemap.api.models import Metrics
from placemap.replay import delays
from placemap.replay import kernel as kn
from placemap.replay.delays import (
    DELAYS_UNREAD,
    METRICS,
    StoredChunkError,
    delays_from_store,
    fill_wakeup_latency,
)
from placemap.schema.events import EVENT_SCHEMA
from placemap.store import Store

_LINE = re.compile(r"\s(\d+)\.(\d+):\s+(sched_wakeup_new|sched_wakeup|sched_switch):\s+(.*)$")


def _ns(sec: str, frac: str) -> int:
    return int(sec) * 1_000_000_000 + int(frac.ljust(9, "0"))


def oracle_delays(path: str) -> list[int]:
    """Every wakeup -> switch-in delay of the text, in ns: a sched_wakeup(_new) of pid P opens one,
    P's next sched_switch in (next_pid=P) closes it, and P switched out first drops it."""
    pending: dict[int, int] = {}
    out: list[int] = []
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            m = _LINE.search(line)
            if m is None:
                continue
            ts, event, rest = _ns(m[1], m[2]), m[3], m[4]
            fields = dict(re.findall(r"(\w+)=(\S+)", rest))
            if event != "sched_switch":
                pending[int(fields["pid"])] = ts
                continue
            pending.pop(int(fields["prev_pid"]), None)
            nxt = int(fields["next_pid"])
            if nxt > 0 and nxt in pending:
                out.append(ts - pending.pop(nxt))
    return out


@pytest.mark.parametrize("chunk_rows", [65_536, 3_000])
def test_the_delays_of_a_real_trace_as_read_from_its_text(
    store: Store, g4_table: pa.Table, chunk_rows: int
) -> None:
    want = sorted(oracle_delays(str(G4)))
    assert len(want) > 1000
    rid = ingest(store, g4_table, chunk_rows=chunk_rows)
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    got = json.loads(blob)["wakeup_latency"]
    assert got["samples"] == len(want)
    assert got["max_ns"] == want[-1]
    for key, permille in (("p50_ns", 500), ("p90_ns", 900), ("p99_ns", 990)):
        exact = want[(permille * (len(want) - 1)) // 1000]
        # a bucket's lower bound: at most 1/16 below the delay it stands for, never above
        assert exact - exact // 16 - 1 <= got[key] <= exact, (key, got[key], exact)


def test_a_bucket_holds_the_delays_from_its_lower_bound_to_the_next_ones() -> None:
    rng = np.random.default_rng(5)
    values = [0, 1, 15, 16, 17, 31, 32, 33, 1000, 2**40 + 12345, *rng.integers(0, 2**45, 2000).tolist()]
    for v in values:
        b = kn.delay_bucket(v)
        assert kn.delay_bucket_low(b) <= v < kn.delay_bucket_low(b + 1)
        assert v - kn.delay_bucket_low(b) <= v // 16
    assert kn.delay_bucket(2**63 - 1) < kn.DELAY_BUCKETS


def _rows(rows: list[dict[str, object]]) -> pa.Table:
    cols = {f.name: [r.get(f.name) for r in rows] for f in EVENT_SCHEMA}
    return pa.Table.from_pydict(cols, schema=EVENT_SCHEMA)


def test_a_wakeup_of_a_running_task_is_not_measured_to_its_next_switch_in(store: Store) -> None:
    base = {"cpu": 0, "comm": "t", "prio": 120}
    rows: list[dict[str, object]] = [
        # pid 7 woken, runs 1000 ns later: one delay of 1000
        {**base, "ts_ns": 1_000, "kind": 2, "pid": 7, "target_cpu": 0},
        {**base, "ts_ns": 2_000, "kind": 4, "pid": 0, "comm": "swapper/0", "next_pid": 7, "next_comm": "t",
         "next_prio": 120, "prev_state": "R"},
        # woken again while still running (the kernel traces it), then it blocks and runs much later
        {**base, "ts_ns": 3_000, "kind": 2, "pid": 7, "target_cpu": 0},
        {**base, "ts_ns": 4_000, "kind": 4, "pid": 7, "next_pid": 0, "next_comm": "swapper/0",
         "next_prio": 120, "prev_state": "S"},
        {**base, "ts_ns": 90_000, "kind": 4, "pid": 0, "comm": "swapper/0", "next_pid": 7, "next_comm": "t",
         "next_prio": 120, "prev_state": "R"},
    ]  # fmt: skip
    rid = ingest(store, _rows(rows))
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    got = json.loads(blob)["wakeup_latency"]
    # 1000 ns lies in the bucket [992, 1024): 512 + 15 x 32 (16 buckets per power of two)
    assert got == {"samples": 1, "p50_ns": 992, "p90_ns": 992, "p99_ns": 992, "max_ns": 1000}


def test_a_loss_between_a_wakeup_and_its_switch_in_drops_the_wakeup(store: Store) -> None:
    base = {"cpu": 0, "comm": "t", "prio": 120}
    switch_in = {"kind": 4, "pid": 0, "comm": "swapper/0", "next_pid": 7, "next_comm": "t", "next_prio": 120,
                 "prev_state": "R"}  # fmt: skip
    switch_out = {
        "kind": 4,
        "pid": 7,
        "next_pid": 0,
        "next_comm": "swapper/0",
        "next_prio": 120,
        "prev_state": "S",
    }
    rows: list[dict[str, object]] = [
        {**base, "ts_ns": 1_000, "kind": 2, "pid": 7, "target_cpu": 0},
        # the buffer lost events here: the switch that ran pid 7 may be among them
        {**base, "ts_ns": 1_500, "kind": 9, "pid": None, "comm": None, "prio": None, "lost_events": 12},
        {**base, **switch_in, "ts_ns": 50_000},
        {**base, **switch_out, "ts_ns": 60_000},
        # after the loss: measured again
        {**base, "ts_ns": 70_000, "kind": 2, "pid": 7, "target_cpu": 0},
        {**base, **switch_in, "ts_ns": 72_000},
    ]
    rid = ingest(store, _rows(rows))
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    got = json.loads(blob)["wakeup_latency"]
    assert got["samples"] == 1 and got["max_ns"] == 2_000


def test_metrics_stored_before_the_delays_were_measured_still_read(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table)
    blob = store.derived(rid, "metrics.json")
    assert blob is not None
    body = json.loads(blob)
    assert Metrics.model_validate(body).wakeup_latency is not None
    del body["wakeup_latency"]  # as an older version stored them
    assert Metrics.model_validate(body).wakeup_latency is None


# --- recordings stored before the delays were measured (replay.delays.fill_wakeup_latency) ------


def _as_older_version_stored(store: Store, rid: str) -> dict[str, object]:
    """Drop wakeup_latency from the stored metrics, as versions before it stored them; returns
    what the ingest had measured."""
    blob = store.derived(rid, METRICS)
    assert blob is not None
    body = json.loads(blob)
    measured: dict[str, object] = body.pop("wakeup_latency")
    assert store.put_derived(rid, METRICS, json.dumps(body).encode())
    return measured


@pytest.mark.parametrize("chunk_rows", [65_536, 3_000])
def test_an_older_recording_gets_the_delays_the_ingest_measures_from_its_chunks(
    store: Store, g4_table: pa.Table, chunk_rows: int
) -> None:
    rid = ingest(store, g4_table, chunk_rows=chunk_rows)
    assert len(store.list_chunks(rid)) > (1 if chunk_rows == 65_536 else 20)
    measured = _as_older_version_stored(store, rid)
    assert isinstance(measured, dict) and measured["samples"] == len(oracle_delays(str(G4)))
    older = json.loads(store.derived(rid, METRICS) or b"{}")
    filled = fill_wakeup_latency(store, rid, older)
    assert filled["wakeup_latency"] == measured
    assert {k: v for k, v in filled.items() if k != "wakeup_latency"} == older, "nothing else changes"
    # kept with the document: the next read finds it stored
    assert json.loads(store.derived(rid, METRICS) or b"{}")["wakeup_latency"] == measured


def test_the_filled_delays_keep_the_rules_for_running_tasks_and_losses(store: Store) -> None:
    base = {"cpu": 0, "comm": "t", "prio": 120}
    switch_in = {"kind": 4, "pid": 0, "comm": "swapper/0", "next_pid": 7, "next_comm": "t", "next_prio": 120,
                 "prev_state": "R"}  # fmt: skip
    switch_out = {"kind": 4, "pid": 7, "next_pid": 0, "next_comm": "swapper/0", "next_prio": 120,
                  "prev_state": "S"}  # fmt: skip
    rows: list[dict[str, object]] = [
        {**base, "ts_ns": 1_000, "kind": 2, "pid": 7, "target_cpu": 0},
        {**base, **switch_in, "ts_ns": 2_000},  # 1000 ns
        {**base, "ts_ns": 3_000, "kind": 2, "pid": 7, "target_cpu": 0},  # while running: dropped
        {**base, **switch_out, "ts_ns": 4_000},
        {**base, **switch_in, "ts_ns": 90_000},
        {**base, **switch_out, "ts_ns": 91_000},
        {**base, "ts_ns": 92_000, "kind": 2, "pid": 7, "target_cpu": 0},
        {**base, "ts_ns": 92_500, "kind": 9, "pid": None, "comm": None, "prio": None, "lost_events": 3},
        {**base, **switch_in, "ts_ns": 150_000},  # after a loss: dropped
        {**base, **switch_out, "ts_ns": 151_000},
        {**base, "ts_ns": 160_000, "kind": 2, "pid": 7, "target_cpu": 0},
        {**base, **switch_in, "ts_ns": 163_000},  # 3000 ns
    ]
    rid = ingest(store, _rows(rows), chunk_rows=4)  # the pending wakeups cross chunk boundaries
    measured = _as_older_version_stored(store, rid)
    assert measured == {"samples": 2, "p50_ns": 992, "p90_ns": 992, "p99_ns": 992, "max_ns": 3_000}
    older = json.loads(store.derived(rid, METRICS) or b"{}")
    assert fill_wakeup_latency(store, rid, older)["wakeup_latency"] == measured


def test_stored_delays_are_not_read_again(store: Store, g4_table: pa.Table) -> None:
    rid = ingest(store, g4_table)
    body = json.loads(store.derived(rid, METRICS) or b"{}")
    body["wakeup_latency"] = None  # measured and empty: no wakeup was followed by its switch-in
    assert store.put_derived(rid, METRICS, json.dumps(body).encode())
    assert fill_wakeup_latency(store, rid, body)["wakeup_latency"] is None
    assert json.loads(store.derived(rid, METRICS) or b"{}")["wakeup_latency"] is None


def test_a_recording_that_is_not_ready_gets_no_derived_document(store: Store) -> None:
    rid = store.create_recording("importing")
    assert not store.put_derived(rid, METRICS, b"{}")
    assert store.derived(rid, METRICS) is None
    assert not store.put_derived("no-such-id", METRICS, b"{}")


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_chunk_leaves_the_delays_out_and_the_other_metrics_readable(
    store: Store, g4_table: pa.Table, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rid = ingest(store, g4_table, chunk_rows=3_000)
    _as_older_version_stored(store, rid)
    older = json.loads(store.derived(rid, METRICS) or b"{}")
    seq = store.list_chunks(rid)[5].seq
    conn = sqlite3.connect(store.path)
    with conn:
        where = "WHERE recording_id = ? AND seq = ?"
        (blob,) = conn.execute(f"SELECT data FROM chunks {where}", (rid, seq)).fetchone()
        bad = b"\x00not zstd\xff" * 50 if damage == "garbage" else bytes(blob)[: len(blob) // 2]
        conn.execute(f"UPDATE chunks SET data = ? {where}", (bad, rid, seq))
    conn.close()
    with pytest.raises(StoredChunkError, match=f"stored chunk {seq}: "):
        delays_from_store(store, rid)
    got = Metrics.model_validate(fill_wakeup_latency(store, rid, older))
    assert got.wakeup_latency is None
    assert (got.wakeup_latency_unread or "").startswith(f"stored chunk {seq}: "), "the API says why"
    assert got.model_copy(update={"wakeup_latency_unread": None}) == Metrics.model_validate(older)
    kept = json.loads(store.derived(rid, METRICS) or b"{}")
    assert "wakeup_latency" not in kept, "no delays made up"
    assert kept[DELAYS_UNREAD].startswith(f"stored chunk {seq}: "), "why is kept with the document"
    assert {k: v for k, v in kept.items() if k != DELAYS_UNREAD} == older, "the other metrics kept"

    # the next reads, with the stored document or the one read before the mark, scan no chunk again
    def no_scan(*_: object) -> None:
        raise AssertionError("the stored chunks scanned again")

    monkeypatch.setattr(delays, "delays_from_store", no_scan)
    again = Metrics.model_validate(fill_wakeup_latency(store, rid, kept))
    assert again.wakeup_latency is None and again.wakeup_latency_unread == kept[DELAYS_UNREAD]
    assert DELAYS_UNREAD in fill_wakeup_latency(store, rid, older)
