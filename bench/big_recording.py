"""Big-recording benchmark (opt-in, not in CI): does a 100M-event recording fit and load?

Builds, in one fresh SQLite file under bench/out/, a baseline recording (default 1M events) and a
big one (default 100M events), both from time-shifted copies of the real vm2-hackbench-g4 trace
(the Go importer reads g4 once; the copies go through the store's public Ingestor, the code every
import and live recording ends in). Then it starts the real server (`python -m placemap serve`,
uvicorn) on that file and measures, for both recordings side by side:
  - on-disk bytes per event (event chunks, keyframes, placement tables; whole SQLite file),
  - time (wall and CPU) to store, and the builder's peak RSS,
  - GET /api/recordings/{id}, /metrics, /overview, /chunks latency,
  - seek: GET /state?t_ns= at 200 random times (p50/p95),
  - chunk fetch: GET /chunks/{seq} at 50 random chunks (zstd as stored, p50/p95),
  - the server's RSS (VmRSS / VmHWM) after start, after serving the baseline, after serving the big one,
    and its CPU per request.
The file is deleted at the end unless --keep.

Run: scripts/bench big [--events N] [--churn] [--keep] [--reuse]
(--churn: every copy of g4 forks new pids, as reruns of hackbench do: ~225k tasks at 100M events)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import resource
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from backend_bench import build_collector  # noqa: E402 - bench/ is the script's directory

from placemap.replay.ingest import Ingestor  # noqa: E402 - after the sys.path line
from placemap.replay.topo import inferred_topology  # noqa: E402 - after the sys.path line
from placemap.replay.warmup import warm_kernels  # noqa: E402 - after the sys.path line
from placemap.store import Store  # noqa: E402 - after the sys.path line

G4 = ROOT.parent / "shared" / "traces" / "vm2-hackbench-g4.ftrace.txt.gz"
OUT = ROOT / "bench" / "out"
COLLECT = ROOT / "collectors" / "bin" / "placemap-collect"
PY = ROOT / "backend" / ".venv" / "bin" / "python"


def cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)  # all threads: ingest and chunk writer
    return ru.ru_utime + ru.ru_stime


def g4_table() -> pa.Table:
    build_collector()
    proc = subprocess.run([str(COLLECT), "import", str(G4), "--out", "-"], capture_output=True, check=True)
    return pa.ipc.open_stream(proc.stdout).read_all()


PID_STRIDE = 20_000  # above g4's largest pid (13275)
PID_WRAP = 4_194_304 - PID_STRIDE  # pids stay below pid_max (4194304 on 64-bit), reused as the kernel does
PID_COLUMNS = ("pid", "cur_pid", "next_pid", "child_pid", "old_pid", "tgid")


def fresh_pids(table: pa.Table, forked: pa.Array, offset: int) -> pa.Table:
    """The copy's forked tasks as new tasks (a rerun of hackbench forks new ones; the long-lived
    tasks around it keep their pids): pids that g4 forks, shifted by offset."""
    for name in PID_COLUMNS:
        i = table.schema.get_field_index(name)
        col = table.column(i)
        shifted = pc.if_else(pc.is_in(col, value_set=forked), pc.add(col, pa.scalar(offset, pa.int32())), col)
        table = table.set_column(i, table.schema.field(i), shifted)
    return table


def build(
    store: Store, g4: pa.Table, events: int, name: str, churn: bool = False
) -> tuple[str, float, float, int]:
    """Store ceil(events / len(g4)) shifted copies of g4 as one recording: (rid, wall s, CPU s, rows).
    With churn, every copy's forked tasks get new pids (hundreds of thousands of tasks at 100M events)."""
    ts = g4.column("ts_ns")
    span = pc.max(ts).as_py() - pc.min(ts).as_py() + 1_000_000
    forked = pc.unique(g4.column("child_pid").drop_null())
    copies = max(1, -(-events // g4.num_rows))
    rid = store.create_recording(name)
    ing = Ingestor(store, rid, None)
    wall = cpu = 0.0
    for k in range(copies):
        shifted = g4.set_column(0, "ts_ns", pc.add(ts, pa.scalar(k * span, pa.int64())))
        if churn:
            shifted = fresh_pids(shifted, forked, k * PID_STRIDE % PID_WRAP)
        t, c = time.perf_counter(), cpu_self()
        for batch in shifted.to_batches(max_chunksize=65_536):
            ing.add(batch)
        wall += time.perf_counter() - t
        cpu += cpu_self() - c
        if k % 100 == 99:
            print(f"  {name}: {(k + 1) * g4.num_rows / 1e6:.0f}M events stored", flush=True)
    t, c = time.perf_counter(), cpu_self()
    ing.flush()
    # as the importer does without a topology file: the CPUs seen, one LLC, one node
    store.set_topology(
        rid, store.put_topology(inferred_topology(ing.cpus_seen, name).model_dump(mode="json"))
    )
    ing.finish(None)
    wall += time.perf_counter() - t
    cpu += cpu_self() - c
    return rid, wall, cpu, copies * g4.num_rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (kB) of a process."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0])
    return out


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[float, bytes]:
        t = time.perf_counter()
        self.conn.request("GET", path, headers=headers or {})
        resp = self.conn.getresponse()
        body = resp.read()
        ms = (time.perf_counter() - t) * 1000
        if resp.status != 200:
            raise RuntimeError(f"GET {path}: {resp.status} {body[:300]!r}")
        return ms, body


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]


def serve_figures(client: Client, pid: int, rids: dict[str, str], seeks: int, fetches: int) -> dict[str, Any]:
    """Latencies (ms) and server CPU (ms per request) of the reads the viewer makes on opening and
    scrubbing a recording; the recordings take turns request by request, so load from other work on
    the machine hits them alike."""
    res: dict[str, Any] = {name: {"cpu": {}} for name in rids}
    recs = {name: json.loads(client.get(f"/api/recordings/{rid}")[1]) for name, rid in rids.items()}
    chunks = {name: json.loads(client.get(f"/api/recordings/{rid}/chunks")[1]) for name, rid in rids.items()}
    for rec in recs.values():
        assert rec["status"] == "ready", rec
    rng = random.Random(1)
    zstd = {"Accept-Encoding": "zstd"}

    def path_of(key: str, name: str) -> tuple[str, dict[str, str] | None]:
        rid, rec = rids[name], recs[name]
        if key == "state":
            return f"/api/recordings/{rid}/state?t_ns={rng.randint(rec['t_start_ns'], rec['t_end_ns'])}", None
        if key == "chunk":
            return f"/api/recordings/{rid}/chunks/{rng.choice(chunks[name])['seq']}", zstd
        suffix = {"recording": "", "metrics": "/metrics", "overview": "/overview?bins=1000"}
        suffix |= {"chunks": "/chunks", "topology": "/topology"}
        return f"/api/recordings/{rid}{suffix[key]}", None

    plan = {"recording": 20, "metrics": 10, "overview": 10, "chunks": 10, "topology": 10}
    plan |= {"state": seeks, "chunk": fetches}
    for key, n in plan.items():
        for name in rids:
            res[name][key] = []
            res[name]["cpu"][key] = 0.0
        for _ in range(n):
            for name in rids:
                path, headers = path_of(key, name)
                c = proc_cpu(pid)
                ms, body = client.get(path, headers)
                res[name][key].append(ms)
                res[name].setdefault("bytes", {}).setdefault(key, []).append(float(len(body)))
                res[name]["cpu"][key] += (proc_cpu(pid) - c) * 1000 / n
    for name in rids:
        res[name]["n_chunks"] = len(chunks[name])
    return res


def disk(db: Path, rid: str) -> tuple[int, int, int, int, int]:
    """Event, keyframe and placement-table bytes, events, and tasks of one recording."""
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            "SELECT sum(length(data)), sum(length(keyframe)), sum(length(placements)), sum(rows)"
            " FROM chunks WHERE recording_id = ?",
            (rid,),
        ).fetchone()
        tasks = conn.execute("SELECT count(*) FROM tasks WHERE recording_id = ?", (rid,)).fetchone()[0]
    finally:
        conn.close()
    return int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(tasks)


def remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000_000)
    ap.add_argument("--baseline-events", type=int, default=1_000_000)
    ap.add_argument(
        "--churn",
        action="store_true",
        help="new pids for g4's forked tasks in every copy (pid churn: 163 new tasks per 72k events)",
    )
    ap.add_argument("--seeks", type=int, default=200)
    ap.add_argument("--fetches", type=int, default=50)
    ap.add_argument(
        "--keep", action="store_true", help="keep bench/out/big.db (otherwise deleted at the end)"
    )
    ap.add_argument("--reuse", action="store_true", help="serve an existing bench/out/big.db (from --keep)")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / "big.db"
    load = os.getloadavg()[0]
    print(
        f"== big-recording bench: {args.events:,} events vs a {args.baseline_events:,}-event baseline, "
        f"{os.cpu_count()} cores, load average {load:.1f}",
        flush=True,
    )
    builds: dict[str, tuple[float, float, int]] = {}
    if args.reuse and db.is_file():
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT id, event_count FROM recordings ORDER BY event_count").fetchall()
        conn.close()
        base_rid, big_rid = str(rows[0][0]), str(rows[-1][0])
    else:
        remove_db(db)
        warm_kernels()  # numba kernels compiled once, as the server does at start: not in the baseline's time
        g4 = g4_table()
        store = Store(db)
        base_rid, w, c, n = build(store, g4, args.baseline_events, "baseline", args.churn)
        builds["baseline"] = (w, c, n)
        rss_base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        big_rid, w, c, n = build(store, g4, args.events, "big", args.churn)
        builds["big"] = (w, c, n)
        rss_big = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        store.close()
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        print(
            f"builder peak RSS: {rss_base / 1024:.0f} MB after the baseline,"
            f" {rss_big / 1024:.0f} MB after the big one"
        )
    db_bytes = db.stat().st_size

    port = free_port()
    env = {**os.environ, "PLACEMAP_DB": str(db)}
    server = subprocess.Popen(
        [str(PY), "-m", "placemap", "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                Client(port).get("/api/health")
                break
            except (OSError, RuntimeError):
                if server.poll() is not None or time.monotonic() > deadline:
                    assert server.stderr is not None
                    raise SystemExit(
                        f"server did not start: {server.stderr.read().decode()[-2000:]}"
                    ) from None
                time.sleep(0.3)
        client = Client(port)
        serve_figures(client, server.pid, {"baseline": base_rid}, 10, 5)  # warm-up, not reported
        rss_start = proc_status(server.pid)
        figs = serve_figures(
            client, server.pid, {"baseline": base_rid, "big": big_rid}, args.seeks, args.fetches
        )
        rss_after = proc_status(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)

    names = ("baseline", "big")
    recs: dict[str, tuple[int, int, int, int, int]] = {}
    for name, rid in zip(names, (base_rid, big_rid), strict=True):
        recs[name] = disk(db, rid)
    print(f"{'':38} {'baseline':>14} {'big':>14} {'big/baseline':>13}")

    def row(label: str, get: Callable[[str], float], fmt: str = "{:>14.2f}") -> None:
        a, b = get("baseline"), get("big")
        ratio = f"{b / a:>12.2f}x" if a else f"{'-':>13}"
        print(f"{label:38} {fmt.format(a)} {fmt.format(b)} {ratio}")

    row("events", lambda k: float(recs[k][3]), "{:>14,.0f}")
    row("chunks", lambda k: float(figs[k]["n_chunks"]), "{:>14,.0f}")
    # every task a seek returns is in each keyframe and GET state: these grow with pid churn
    row("tasks", lambda k: float(recs[k][4]), "{:>14,.0f}")
    row("bytes/event: event chunks", lambda k: recs[k][0] / recs[k][3])
    row("bytes/event: keyframes", lambda k: recs[k][1] / recs[k][3])
    row("bytes/event: placement tables", lambda k: recs[k][2] / recs[k][3])
    if builds:
        row("store: wall s", lambda k: builds[k][0], "{:>14.1f}")
        row("store: M events per CPU-s", lambda k: builds[k][2] / builds[k][1] / 1e6)
    for key, label in (
        ("recording", "GET recording"),
        ("metrics", "GET metrics"),
        ("overview", "GET overview (1000 bins)"),
        ("chunks", "GET chunks (list)"),
        ("topology", "GET topology"),
        ("state", f"GET state ({args.seeks} random t)"),
        ("chunk", f"GET chunks/{{seq}} zstd ({args.fetches})"),
    ):
        lat: dict[str, list[float]] = {k: figs[k][key] for k in names}
        cpu: dict[str, float] = {k: figs[k]["cpu"][key] for k in names}
        row(f"{label} p50 ms", lambda k: pct(lat[k], 50))  # noqa: B023 - called before the next iteration
        if key in ("state", "chunk", "recording"):
            row(f"{label} p95 ms", lambda k: pct(lat[k], 95))  # noqa: B023
        row(f"{label} server CPU ms", lambda k: cpu[k])  # noqa: B023
        if key in ("state", "chunks"):
            size: dict[str, list[float]] = {k: figs[k]["bytes"][key] for k in names}
            row(f"{label} response KB p50", lambda k: pct(size[k], 50) / 1024)  # noqa: B023
    print(
        f"whole SQLite file: {db_bytes / 1e9:.2f} GB"
        f" = {db_bytes / (recs['baseline'][3] + recs['big'][3]):.2f} B/event"
    )
    print(
        f"server RSS: {rss_start['VmRSS'] / 1024:.0f} MB after start and a warm-up on the baseline,"
        f" {rss_after['VmRSS'] / 1024:.0f} MB after serving both (peak {rss_after['VmHWM'] / 1024:.0f} MB)"
    )
    if not args.keep:
        remove_db(db)
        print(f"removed {db}")


if __name__ == "__main__":
    main()
