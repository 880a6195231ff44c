"""CPU lanes (GET lanes.arrow): what drawing who ran on each CPU over a window costs the server and
the wire, against the baseline of sending that window's events (GET events.arrow, what the page
would otherwise fetch to work the lanes out itself).

Builds once, in bench/out/, a synthetic but well-formed ftrace recording on a 384-CPU EPYC 9654
topology (bench/make_synthetic.py; every CPU busy), imports it as the upload does, then for windows
holding about 10k, 50k and 100k context switches (the page's limit) prints side by side, best of
--repeats: the lanes' server time (the route's work: spans from the stored chunks and the state at
the window's start, encoded as Arrow IPC) and bytes, the events' time and bytes, and the ratios.
Then the whole run (too busy to draw span by span) summed in 500, 1000 and 2000 parts (GET
lanes_busy.arrow, zstd as the route sends it to a browser) against the whole run's events, and
the same window asked again about one task with its spans kept against read again. Last, the whole
run summed in one read against one run of parts at a time (lane_busy.GROUP_ROWS events each), each in
a fresh process: its time and its peak memory (max RSS), the same answer.
Run: backend/.venv/bin/python bench/lanes_bench.py [--events N] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))
sys.path.insert(0, str(ROOT / "bench"))

from backend_bench import COLLECT, OUT, build_collector, fresh_store  # noqa: E402

from placemap.importer import import_file  # noqa: E402
from placemap.replay import lane_busy as lane_busy_module  # noqa: E402
from placemap.replay.lane_busy import lane_busy  # noqa: E402
from placemap.replay.lanes import cpu_lanes  # noqa: E402
from placemap.replay.queries import window_batches  # noqa: E402
from placemap.schema.events import EVENT_SCHEMA, Kind  # noqa: E402
from placemap.schema.models.topology_schema import Topology  # noqa: E402
from placemap.store import Store  # noqa: E402


def ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def events_ipc(store: Store, rid: str, t0: int, t1: int) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, EVENT_SCHEMA) as w:
        for batch in window_batches(store, rid, t0, t1):
            w.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


def best(fn: object, repeats: int) -> tuple[float, bytes]:
    out = b""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return min(times), out


def recording(events: int) -> tuple[Store, str]:
    trace = OUT / f"lanes-synth-{events}.ftrace.txt"
    topo = OUT / f"lanes-synth-{events}.topology.json"
    if not trace.is_file():
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "make_synthetic.py"), "--events", str(events), "--tasks", "3000",
             str(trace), str(topo)],
            check=True,
        )  # fmt: skip
    build_collector()
    store = fresh_store("bench-lanes.db")
    rid = store.create_recording(trace.name)
    import_file(store, COLLECT, rid, trace, topology=Topology.model_validate(json.loads(topo.read_text())))
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    return store, rid


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    store, rid = recording(args.events)
    ts = np.concatenate(
        [
            b.column("ts_ns").to_numpy()[
                pc.equal(b.column("kind"), int(Kind.SWITCH)).to_numpy(zero_copy_only=False)
            ]
            for b in window_batches(store, rid, None, None)
        ]
    )
    rec = store.get_recording(rid)
    assert rec is not None
    print(f"recording: {rec.event_count:,} events on 384 CPUs, {len(ts):,} context switches")
    print(f"{'switches':>9} {'window':>9} {'lanes ms':>9} {'lanes KB':>9} {'spans':>8} {'events ms':>10} "
          f"{'events KB':>10} {'time x':>7} {'bytes x':>8}")  # fmt: skip
    start = len(ts) // 4
    for n in (10_000, 50_000, 100_000):
        t0, t1 = int(ts[start]), int(ts[start + n - 1])
        lt, lb = best(lambda t0=t0, t1=t1: ipc(cpu_lanes(store, rid, t0, t1, limit=100_000)), args.repeats)
        et, eb = best(lambda t0=t0, t1=t1: events_ipc(store, rid, t0, t1), args.repeats)
        spans = pa.ipc.open_stream(lb).read_all().num_rows
        print(f"{n:>9,} {(t1 - t0) / 1e6:>7.1f}ms {lt * 1e3:>9.1f} {len(lb) / 1e3:>9.0f} {spans:>8,} "
              f"{et * 1e3:>10.1f} {len(eb) / 1e3:>10.0f} {et / lt:>7.2f} {len(eb) / len(lb):>8.1f}")  # fmt: skip
    # the whole run, too busy to draw span by span: summed per part (the page asks one per pixel
    # column), sent zstd as browsers accept it, against the whole run's events
    t0, t1 = rec.t_start_ns, rec.t_end_ns
    assert t0 is not None and t1 is not None
    print(
        f"\nthe whole run summed per part ({len(ts):,} switches, {(t1 - t0) / 1e6:.0f} ms), against its events:"
    )
    print(f"{'parts':>6} {'summed ms':>10} {'rows':>8} {'KB':>7} {'zstd KB':>8} {'events ms':>10} {'events KB':>10} "
          f"{'time x':>7} {'bytes x':>8}")  # fmt: skip
    et, eb = best(lambda: events_ipc(store, rid, t0, t1), max(1, args.repeats // 2))
    zstd = pa.Codec("zstd", compression_level=3)
    for parts in (500, 1000, 2000):
        bt, bb = best(
            lambda parts=parts: zstd.compress(ipc(lane_busy(store, rid, t0, t1, parts=parts, limit=2_000_000)), asbytes=True),
            args.repeats,
        )  # fmt: skip
        raw = ipc(lane_busy(store, rid, t0, t1, parts=parts, limit=2_000_000))
        rows = pa.ipc.open_stream(raw).read_all().num_rows
        print(f"{parts:>6} {bt * 1e3:>10.1f} {rows:>8,} {len(raw) / 1e3:>7.0f} {len(bb) / 1e3:>8.0f} {et * 1e3:>10.1f} "
              f"{len(eb) / 1e3:>10.0f} {et / bt:>7.2f} {len(eb) / len(bb):>8.1f}")  # fmt: skip
    # a task selected: the same window asked again about it (1,000 parts), its spans kept from the
    # first ask (a ready recording's, as the route keeps them) against read again
    pids = lane_busy(store, rid, t0, t1, parts=1000, limit=2_000_000).column("pid").to_pylist()
    ask = [int(p) for p in pids[:: max(1, len(pids) // args.repeats)][: args.repeats]]
    t = time.perf_counter()
    lane_busy(store, rid, t0, t1, parts=1000, limit=2_000_000, keep=True)
    cold = time.perf_counter() - t
    kept = min(
        timed(lambda p=p: lane_busy(store, rid, t0, t1, parts=1000, limit=2_000_000, pid=p, keep=True))
        for p in ask
    )
    read = min(
        timed(lambda p=p: lane_busy(store, rid, t0, t1, parts=1000, limit=2_000_000, pid=p)) for p in ask
    )
    print(f"\nasked again about a task (1,000 parts): {kept * 1e3:.1f} ms with the window's spans kept, "
          f"{read * 1e3:.1f} ms read again ({read / kept:.1f}x); the first ask {cold * 1e3:.1f} ms")  # fmt: skip
    store.close()
    # the whole run, 1,000 parts, in one read against runs of parts (each in a fresh process: its
    # peak memory is its own); the answers' digests must agree
    print(
        f"\nthe whole run summed (1,000 parts) in one read against one run of parts at a time, each in a fresh process:"
    )
    print(f"{'events per run':>15} {'runs':>5} {'ms':>8} {'+max RSS MB':>12}  answer")
    rows = []
    for cap in (10**12, lane_busy_module.GROUP_ROWS, lane_busy_module.GROUP_ROWS // 4):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(OUT / "bench-lanes.db"), rid, str(t0), str(t1), str(cap)],
            check=True, capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        rows.append(out)
        label = "all (one read)" if cap == 10**12 else f"{cap:,}"
        print(f"{label:>15} {out[0]:>5} {float(out[1]):>8.0f} {float(out[2]):>12.0f}  {out[3][:12]}")
    one, runs = rows[0], rows[1]
    print(f"runs of {lane_busy_module.GROUP_ROWS:,} events against one read: x{float(runs[1]) / float(one[1]):.2f} the time, "
          f"x{float(runs[2]) / float(one[2]):.2f} the peak memory; same answer: {all(r[3] == one[3] for r in rows)}")  # fmt: skip


def peak_rss_mb() -> float:
    """This process's peak resident memory, MB: VmHWM (ru_maxrss would carry the parent's over exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(db: str, rid: str, t0: int, t1: int, cap: int) -> None:
    """One summed ask of the whole run in this fresh process: its runs, ms, how much its max RSS grew
    (MB) and a digest of the answer's values."""
    import hashlib

    lane_busy_module.GROUP_ROWS = cap
    store = Store(Path(db))
    before = peak_rss_mb()
    runs = lane_busy_module.part_runs(
        store.list_chunks(rid, t0, t1), lane_busy_module.part_edges(t0, t1, 1000), cap
    )
    t = time.perf_counter()
    table = lane_busy(store, rid, t0, t1, parts=1000, limit=100_000_000)
    ms = (time.perf_counter() - t) * 1e3
    # (the values: the comm dictionary's order may differ)
    plain = table.set_column(
        table.schema.get_field_index("comm"), "comm", pc.cast(table.column("comm"), pa.string())
    )
    digest = hashlib.sha256(ipc(plain)).hexdigest()
    rss = peak_rss_mb()
    print(len(runs), f"{ms:.1f}", f"{rss - before:.1f}", digest)


def timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
