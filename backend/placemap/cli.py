"""Command line: `python -m placemap serve|openapi|admin|token|sim|calibrate|domains ...` (bin/placemap
wraps it).

Each command imports what it needs when it runs, not at start: the server's stack (FastAPI, uvicorn,
the importer's numba kernels, pyarrow) takes about 1.5 s to import, which `placemap sim` on a small
scenario, `calibrate` and `domains` never use (tests/test_cli_startup.py holds them to it).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from placemap.domains_cli import register as register_domains
from placemap.settings import Settings
from placemap.sim_cli import register as register_sim


def _serve(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 - the server's stack, imported by the commands that run it

    from placemap.api import create_app  # noqa: PLC0415
    from placemap.realtime import RealtimeError, make_current_thread_realtime  # noqa: PLC0415

    try:
        settings = Settings.from_env(
            db_path=args.db, host=args.host, port=args.port, realtime_priority=args.realtime
        )
    except (ValidationError, ValueError) as exc:
        print(f"placemap serve: bad setting: {exc}", file=sys.stderr)
        return 2
    app = create_app(settings)
    if settings.realtime_priority is not None:
        # uvicorn runs the event loop in this thread (the app's lifespan gives the loop real-time executor
        # threads too; placemap.realtime says why and what stays ordinary)
        try:
            make_current_thread_realtime(settings.realtime_priority)
        except RealtimeError as exc:
            print(f"placemap serve --realtime: {exc}", file=sys.stderr)
            return 2
    # No permessage-deflate: the viewers' live frames are compressed once per batch by the hub (one
    # compression for every viewer instead of one per connection, at zlib's default level 6 in the event
    # loop: measured 3 us/event per viewer), and collectors' batches carry zstd bodies already.
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level="info",
        ws_per_message_deflate=False,
    )
    return 0


def _openapi(_: argparse.Namespace) -> int:
    from placemap.api import create_app  # noqa: PLC0415

    # The document does not depend on the database: build the app over a throwaway one.
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Settings.from_env(db_path=Path(tmp) / "openapi.db"))
        json.dump(app.openapi(), sys.stdout, indent=2, sort_keys=False)
        sys.stdout.write("\n")
        app.state.store.close()
    return 0


def _show(store: Any, rid: str, *, as_json: bool) -> int:
    """`admin show ID`: the recording's whole-run numbers, as the dashboard's whole-run panel shows
    them (its metrics, filled as GET metrics fills a recording stored before a field existed)."""
    from placemap.metrics_text import header_lines, metrics_lines, task_lines  # noqa: PLC0415
    from placemap.replay.delays import METRICS, fill_wakeup_latency  # noqa: PLC0415
    from placemap.replay.waker_refill import fill_by_waker, fill_tasks  # noqa: PLC0415
    from placemap.schema.models.topology_schema import Topology  # noqa: PLC0415

    rec = store.get_recording(rid)
    blob = None if rec is None else store.derived(rid, METRICS)
    if rec is None or blob is None:
        why = "" if rec is None or not rec.error else f" ({rec.error})"
        print(
            f"no recording {rid}" if rec is None else f"recording {rid} is {rec.status}: no counts{why}",
            file=sys.stderr,
        )
        return 1
    topo = None if rec.topology_id is None else store.get_topology(rec.topology_id)
    metrics = fill_wakeup_latency(store, rid, json.loads(blob))
    metrics = fill_by_waker(
        store, rid, metrics, lambda: None if topo is None else Topology.model_validate(topo)
    )
    if as_json:
        from placemap.api.models import Metrics  # noqa: PLC0415

        # as GET /api/recordings/{id}/metrics serves it: the model's fields, nulls where absent
        print(json.dumps(Metrics.model_validate(metrics).model_dump(mode="json"), indent=1))
        return 0
    fill_tasks(store, rid, lambda: None if topo is None else Topology.model_validate(topo))
    tasks = store.tasks(rid, None, 5, "cross_llc")
    for line in [*header_lines(rec, topo), *metrics_lines(metrics), *task_lines(tasks)]:
        print(line)
    return 0


def _pairs(store: Any, rid: str, waker_llc: int, llc: int, limit: int) -> int:
    """`admin pairs ID WAKER_LLC LLC`: the tasks behind one cell of the wakeups by LLC pair, most
    often woken first (GET llc-pairs/{waker_llc}/{llc}/tasks)."""
    from placemap.replay.pair_tasks import PairsUncountedError, cell_tasks, llc_out_of_range  # noqa: PLC0415
    from placemap.replay.topo import LevelMap  # noqa: PLC0415
    from placemap.schema.models.topology_schema import Topology  # noqa: PLC0415

    if limit < 1:
        print(f"--limit {limit}: list at least 1 task", file=sys.stderr)
        return 1
    rec = store.get_recording(rid)
    if rec is None or rec.status != "ready":
        print(f"no recording {rid}" if rec is None else f"recording {rid} is {rec.status}", file=sys.stderr)
        return 1
    topo = None if rec.topology_id is None else store.get_topology(rec.topology_id)
    topology = None if topo is None else Topology.model_validate(topo)
    levels = LevelMap(topology)
    out_of_range = llc_out_of_range(levels, waker_llc, llc)
    if out_of_range is not None:
        print(out_of_range, file=sys.stderr)
        return 1
    try:
        n, tasks = cell_tasks(store, rid, topology, waker_llc, llc, limit=limit)
    except PairsUncountedError as exc:
        print(f"recording {rid}: {exc}", file=sys.stderr)
        return 1
    shown = f", the {len(tasks)} woken most" if sum(t.wakeups for t in tasks) < n else ""
    print(f"LLC {waker_llc} -> {llc}: {n:,} wakeup{'' if n == 1 else 's'}{shown}")
    for t in tasks:
        print(f"  {t.pid}\t{t.comm}\t{t.wakeups:,}")
    return 0


def _admin(args: argparse.Namespace) -> int:
    from placemap.importer import import_file  # noqa: PLC0415
    from placemap.importer.machine import llc_index_problem, preset_topology  # noqa: PLC0415
    from placemap.schema.models.topology_schema import Topology  # noqa: PLC0415
    from placemap.sim.topology import PRESETS  # noqa: PLC0415
    from placemap.store import Store  # noqa: PLC0415

    settings = Settings.from_env(db_path=args.db)
    store = Store(settings.db_path)
    if args.action == "list":
        for r in store.list_recordings():
            print(
                f"{r.id}\t{r.status}\t{r.event_count}\t{r.created_at}\t{r.name}"
                + (f"\t{r.error}" if r.error else "")
            )
        return 0
    if args.action == "show":
        return _show(store, args.id, as_json=args.json)
    if args.action == "pairs":
        return _pairs(store, args.id, args.waker_llc, args.llc, args.limit)
    if args.action == "export":
        from placemap.replay.ftrace_text import recording_text  # noqa: PLC0415

        rec = store.get_recording(args.id)
        if rec is None or rec.status not in ("ready", "live"):
            print(
                f"no recording {args.id} with events"
                if rec is None
                else f"recording {args.id} is {rec.status}",
                file=sys.stderr,
            )
            return 1
        try:
            out = sys.stdout.buffer if args.out in (None, "-") else open(args.out, "wb")  # noqa: SIM115
        except OSError as exc:
            print(f"cannot write {args.out}: {exc}", file=sys.stderr)
            return 1
        try:
            for piece in recording_text(store, rec):
                out.write(piece)
        finally:
            if out is not sys.stdout.buffer:
                out.close()
            else:
                out.flush()
        return 0
    if args.action == "delete":
        if not store.delete_recording(args.id):
            print(f"no recording {args.id}", file=sys.stderr)
            return 1
        return 0
    path = Path(args.file)
    if not path.is_file():
        print(f"no such file: {path}", file=sys.stderr)
        return 1
    topology = None
    topology_id = None
    if args.topology:
        try:
            if args.topology in PRESETS:  # a preset's name (a file of that name: ./NAME)
                topology = Topology.model_validate(preset_topology(args.topology))
            else:
                topology = Topology.model_validate_json(Path(args.topology).read_text())
        except (OSError, UnicodeDecodeError, ValidationError) as exc:
            print(
                f"topology {args.topology}: {exc} (a topology JSON file, or a preset: {', '.join(PRESETS)})",
                file=sys.stderr,
            )
            return 1
        problem = llc_index_problem(topology)
        if problem is not None:
            print(f"topology {args.topology}: {problem}", file=sys.stderr)
            return 1
        topology_id = store.put_topology(topology.model_dump(mode="json", exclude_none=True))
    name = args.name or path.name
    rid = store.create_recording(name, topology_id=topology_id)
    import_file(store, settings.collector, rid, path, fmt=args.format, topology=topology, machine=name)
    rec = store.get_recording(rid)
    assert rec is not None
    if rec.status != "ready":
        print(f"{rid}\tfailed: {rec.error}", file=sys.stderr)
        return 1
    print(f"{rid}\t{rec.event_count} events\t{rec.chunk_count} chunks\t{rec.bytes_stored} bytes")
    return 0


def _token(args: argparse.Namespace) -> int:
    from placemap.store import Store  # noqa: PLC0415
    from placemap.store.live import LiveStore  # noqa: PLC0415

    live = LiveStore(Store(Settings.from_env(db_path=args.db).db_path))
    if args.action == "create":
        tid, secret = live.create_token(args.name)
        print(f"{tid}\t{secret}")
        print("the token is shown once; only its sha256 is stored", file=sys.stderr)
        return 0
    if args.action == "list":
        for t in live.list_tokens():
            state = f"revoked {t.revoked_at}" if t.revoked_at else "active"
            print(f"{t.id}\t{t.name}\t{t.created_at}\t{state}")
        return 0
    if not live.revoke_token(args.id):
        print(f"no token {args.id}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="placemap",
        description="placemap: serve the dashboard, manage recordings and collector tokens, and run the "
        "placement simulator (sim, calibrate, domains)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--db", help="SQLite file (default data/placemap.db, env PLACEMAP_DB)")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument(
        "--realtime",
        type=int,
        metavar="PRIO",
        help="run the event loop thread at SCHED_FIFO PRIO (1-99, root; env PLACEMAP_REALTIME): keeps the "
        "live feed flowing on a saturated traced host, like perf record -r; what it starts stays ordinary",
    )
    serve.set_defaults(func=_serve)
    openapi = sub.add_parser("openapi", help="print the OpenAPI document")
    openapi.set_defaults(func=_openapi)
    admin = sub.add_parser("admin", help="manage recordings without the server")
    admin.add_argument("--db", help="SQLite file (default data/placemap.db, env PLACEMAP_DB)")
    actions = admin.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="list recordings")
    imp = actions.add_parser("import", help="import a trace file")
    imp.add_argument("file")
    imp.add_argument("--name")
    imp.add_argument("--format", default="auto")
    imp.add_argument(
        "--topology",
        help="the machine it was recorded on: a Topology JSON file (placemap-collect topology --json) or a "
        "simulator preset (zen3-2s-nps1, ...; a file named like a preset: ./NAME); every CPU the trace "
        "names must be one of its online CPUs",
    )
    show = actions.add_parser(
        "show", help="a recording's whole-run numbers, as the dashboard's whole-run panel shows them"
    )
    show.add_argument("id")
    show.add_argument(
        "--json", action="store_true", help="its metrics document (GET /api/recordings/{id}/metrics)"
    )
    pairs = actions.add_parser(
        "pairs",
        help="the tasks woken in LLC LLC by a waker in LLC WAKER_LLC (a cell of show's wakeups by LLC pair)",
    )
    pairs.add_argument("id")
    pairs.add_argument("waker_llc", type=int)
    pairs.add_argument("llc", type=int)
    pairs.add_argument("--limit", type=int, default=20, help="the tasks to list, most often woken first")
    export = actions.add_parser(
        "export", help="write a recording's events as ftrace text (as `cat trace` prints them), any source"
    )
    export.add_argument("id", help="recording id")
    export.add_argument("--out", help="file to write (default: standard output)")
    delete = actions.add_parser("delete", help="delete a recording")
    delete.add_argument("id", help="recording id (one made before ids avoided a leading '-' goes after '--')")
    admin.set_defaults(func=_admin)
    token = sub.add_parser("token", help="manage the ingest tokens of live collectors")
    token.add_argument("--db", help="SQLite file (default data/placemap.db, env PLACEMAP_DB)")
    tactions = token.add_subparsers(dest="action", required=True)
    tcreate = tactions.add_parser("create", help="create a token; prints ID<TAB>TOKEN (shown once)")
    tcreate.add_argument("--name", default="collector")
    tactions.add_parser("list", help="list tokens (ids and names, never the secrets)")
    trevoke = tactions.add_parser("revoke", help="revoke a token by id")
    trevoke.add_argument("id")
    token.set_defaults(func=_token)
    register_sim(sub)
    register_domains(sub)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
