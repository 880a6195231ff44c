"""Command line for the placement simulator: `placemap sim` and `placemap calibrate`.

Thin: reads files, calls placemap.sim, prints. Kept out of cli.py so the simulator's commands
stay in one place; cli.py only registers them.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlencode

from placemap.settings import DEFAULT_CALIBRATION_CSV, Settings
from placemap.sim.calibration import (
    HACKBENCH_LOOPS,
    MACHINES,
    PUBLISHED_HACKBENCH_LOOPS,
    SIGNIFICANT_PCT,
    CsvError,
    calibrate,
    read_rows,
)
from placemap.sim.errors import ScenarioError
from placemap.sim.runner import run_many
from placemap.sim.scenario import parse_scenario, run_scenario
from placemap.sim.topology import PRESETS
from placemap.sim.workloads.catalog import read
from placemap.sim_inputs import trace_input
from placemap.sim_pair import baseline_of, change_pct, seed_summary, shifts, with_seeds
from placemap.sim_published import DIRECTION_TEXT, Cell, direction
from placemap.sim_published import lookup as lookup_published
from placemap.sim_sweep import MAX_POINTS
from placemap.sim_sweep_cli import sweep_main

STDIN = "-"


def read_arg(arg: str) -> str:
    """The text of the file a command-line argument names, or of standard input for `-` (so that
    `placemap-collect topology --json | placemap sim scenario.json --topology -` simulates this host)."""
    return sys.stdin.read() if arg == STDIN else Path(arg).read_text()


def _sim(args: argparse.Namespace) -> int:
    if args.scenario == STDIN and args.topology == STDIN:
        print("placemap sim: the scenario and --topology cannot both be read from stdin (-)", file=sys.stderr)
        return 2
    try:
        scenario: Any = json.loads(read_arg(args.scenario))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"placemap sim: cannot read {args.scenario}: {exc}", file=sys.stderr)
        return 2
    except RecursionError:  # json's decoder recurses once per level of nesting
        print(f"placemap sim: cannot read {args.scenario}: JSON nested too deeply", file=sys.stderr)
        return 2
    if args.topology is not None:
        try:
            scenario = with_topology(scenario, args.topology)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            print(f"placemap sim: --topology: cannot read {args.topology}: {exc}", file=sys.stderr)
            return 2
    # a sweep's --save stores its result, not its runs: its seeds are no obstacle
    if args.seeds > 1 and (not args.baseline or (args.save and args.sweep is None) or args.decisions):
        print(
            "placemap sim: --seeds runs the pair of --baseline on several seeds; it takes --baseline "
            "and neither --save nor --decisions",
            file=sys.stderr,
        )
        return 2
    # the store: to save the run, or to read the recording a trace workload replays
    settings = Settings.from_env(db_path=args.db)
    for flag, given in (("--calibrated", args.calibrated), ("--across", args.across is not None)):
        if given and args.sweep is None:
            print(f"placemap sim: {flag} is for --sweep", file=sys.stderr)
            return 2
    if args.ftrace is not None and (args.sweep is not None or args.seeds > 1):
        print(
            "placemap sim: --ftrace writes one run's events; it takes neither --sweep nor --seeds",
            file=sys.stderr,
        )
        return 2
    if args.sweep is not None:
        if args.decisions:
            print("placemap sim: --sweep does not take --decisions", file=sys.stderr)
            return 2
        return sweep_main(
            scenario,
            args.sweep,
            collector=settings.collector,
            db=settings.db_path,
            baseline=args.baseline,
            seeds=args.seeds,
            calibrated=args.calibrated,
            across=args.across,
            as_json=args.json,
            csv_path=settings.calibration_csv,
            save_to=settings.db_path if args.save else None,
            dashboard=args.dashboard,
        )
    replays = trace_input(scenario)
    if args.seeds > 1 and replays is not None:
        print(
            "placemap sim: --seeds: a trace replay draws nothing from the seed, every seed gives the "
            "same run",
            file=sys.stderr,
        )
        return 2
    store = None
    if args.save or replays == "recording":
        # the store (pyarrow) only for the runs that read or write recordings
        from placemap.store import Store  # noqa: PLC0415

        store = Store(settings.db_path)

    def one(sc: dict[str, Any], ftrace: BinaryIO | None = None) -> dict[str, Any]:
        if not args.save and ftrace is None:
            return run_scenario(
                sc, wall_clock=not args.deterministic, decisions=args.decisions or args.baseline
            )
        from placemap.sim_record import run as run_and_save  # noqa: PLC0415 - the recorder

        events_to = None
        if ftrace is not None:
            from placemap.replay.ftrace_text import FtraceFile  # noqa: PLC0415

            events_to = FtraceFile(ftrace, f"placemap sim {args.scenario}").add
        return run_and_save(
            sc,
            store=store,
            wall_clock=not args.deterministic,
            max_events=settings.sim_max_saved_events,
            decisions=args.decisions or args.baseline,
            events_to=events_to,
        )

    try:
        if replays is not None:
            from placemap.sim_profile import resolve  # noqa: PLC0415 - the importer, for a trace replay

            scenario = resolve(scenario, store, settings.collector)
        base_sc = baseline_of(scenario) if args.baseline else None
        if args.baseline and base_sc is None:
            print(
                "placemap sim: --baseline: the scenario sets no hints or features, nothing to compare",
                file=sys.stderr,
            )
            return 2
        if args.seeds > 1 and base_sc is not None:
            # each seed's run, then its baseline's, in worker processes; a bad field is named
            # here, before any of them runs
            pairs = zip(with_seeds(scenario, args.seeds), with_seeds(base_sc, args.seeds), strict=True)
            scenarios = [sc for pair in pairs for sc in pair]
            for sc in scenarios:
                parse_scenario(sc)
            published = _published(scenario, settings.calibration_csv)
            return _print_seeds(run_many(scenarios), scenarios[0]["seed"], args.json, published)
        if args.ftrace is not None:
            parse_scenario(scenario)  # a bad field is named before the file is made
            try:
                fh = Path(args.ftrace).open("wb")  # noqa: SIM115 - closed below, whatever the run does
            except OSError as exc:
                print(f"placemap sim: --ftrace: cannot write {args.ftrace}: {exc}", file=sys.stderr)
                return 2
            try:
                with fh:
                    result = one(scenario, fh)
            except BaseException:
                Path(args.ftrace).unlink(missing_ok=True)  # no file that looks whole and is not
                raise
        else:
            result = one(scenario)
        base = one(base_sc) if base_sc is not None else None
    except ScenarioError as exc:
        print(f"placemap sim: bad scenario: {exc}", file=sys.stderr)
        return 2
    finally:
        if store is not None:
            store.close()
    if base is not None:
        return _print_pair(
            result, base, args.dashboard, args.json, _published(scenario, settings.calibration_csv)
        )
    if args.json:
        _print_json(result)
    else:
        _print_result(result, args.dashboard)
        if args.decisions and "decisions" in result:
            _print_decisions(result["decisions"])
    return 0


def _print_json(obj: object) -> None:
    """One JSON document on stdout, keys sorted (byte-identical for the same run), and a newline."""
    json.dump(obj, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


def latency_text(lat: dict[str, Any]) -> str:
    """'N wakeups (us): p50 .., p90 .., p99 .., p99.9 .., max ..' of a result's latency_us."""
    values = ", ".join(f"{k.replace('_', '.')} {lat[k]}" for k in ("p50", "p90", "p99", "p99_9", "max"))
    return f"{lat['samples']} wakeups (us): {values}"


def delay_text(d: dict[str, Any]) -> str:
    """'N wakeups (us): p50 .., p90 .., p99 .., max ..' of a result's run-queue delay (ns; the
    percentiles are their buckets' lower bounds, to three digits)."""
    values = ", ".join(f"{k[:-3]} {d[k] / 1000:.3g}" for k in ("p50_ns", "p90_ns", "p99_ns", "max_ns"))
    return f"{d['samples']} wakeups (us): {values}"


def llc_util_text(u: dict[str, Any]) -> str:
    """'LLC 0-15: 0 0 .. 20 6' of a result's llc_util: each LLC's mean busy percent over the run,
    in the topology's LLC order."""
    ids = [s["llc"] for s in u["series"]]
    span = f"{ids[0]}-{ids[-1]}" if ids == list(range(ids[0], ids[-1] + 1)) else ",".join(map(str, ids))
    return f"LLC {span}: " + " ".join(f"{100 * s['mean']:.0f}" for s in u["series"])


DASHBOARD = "http://127.0.0.1:8000"  # where scripts/run and docker compose serve it


def view_url(dashboard: str, rec: str, cmp: str | None = None) -> str:
    """The dashboard's shared link that opens recording `rec` (with `cmp` beside it)."""
    query = urlencode({"rec": rec} if cmp is None else {"rec": rec, "cmp": cmp})
    return f"{dashboard.rstrip('/')}/?{query}"


def _print_result(result: dict[str, Any], dashboard: str) -> None:
    m = result["metric"]
    print(f"{m['name']} = {m['value']} ({m['better']} is better)")
    if not result["sim"]["complete"]:
        print(f"incomplete run: {result['sim']['incomplete']}")
    if (lat := result.get("latency_us")) is not None and lat["samples"]:
        print(f"wakeup latency over {latency_text(lat)}")
        if lat["note"]:
            print(lat["note"])
    for line in counter_lines(result["counters"]):
        print(line)
    if (d := result.get("wakeup_latency")) is not None:
        print(f"run-queue delay (wakeup -> run, every task) over {delay_text(d)}")
    if (t := result.get("cpu_time")) is not None:
        ran, waited = f"{t['run_ms']:,.3f}", f"{t['wait_ms']:,.3f}"
        print(f"tasks ran {ran} ms on a CPU and waited {waited} ms runnable ({t['waits']:,} waits)")
    if (u := result.get("llc_util")) is not None and u["series"]:
        print(f"busy % per LLC over the run, {llc_util_text(u)}")
    print(f"simulated events {result['sim']['events']} in {result['sim']['wall_s']} s")
    if "recording_id" in result:
        print(f"saved as recording {result['recording_id']}: {view_url(dashboard, result['recording_id'])}")


def _named_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in counts.items())


def counter_lines(c: dict[str, Any]) -> list[str]:
    """The result's counters as lines to read, each count named (migrations by the level they
    crossed and their cause; wakeups by the level between the waker's CPU and the one chosen, the
    rest on the waker's own CPU); every figure of `counters` in --json, none left out."""
    mig, wk = c["migrations"], c["wakeups"]
    same_cpu = wk["total"] - sum(wk["by_level"].values())
    return [
        f"migrations {mig['total']:,}: by level {_named_counts(mig['by_level'])}; "
        f"by cause {_named_counts(mig['by_cause'])}",
        f"wakeups {wk['total']:,}, {wk['affine']:,} affine; by level from the waker's CPU: same CPU "
        f"{same_cpu:,}, {_named_counts(wk['by_level'])}",
        *waker_lines(wk.get("by_waker")),
        f"context switches {c['context_switches']:,}; CPU utilization {100 * c['cpu_utilization']:.1f}%; "
        f"mean wait {c['avg_wait_us']} us",
    ]


def waker_lines(bw: dict[str, int] | None) -> list[str]:
    """The wakeups by where their waker ran (counters.wakeups.by_waker), as a line: the ones from
    another LLC than the wakee's prev CPU, where wake_affine() chooses, and which LLC they woke in
    (none for a result saved before they were counted)."""
    if bw is None:
        return []
    cross = bw["cross_llc"]

    def share(n: int) -> str:
        return f" ({100 * n / cross:.1f}%)" if cross else ""

    return [
        f"wakeups whose waker ran in another LLC than the task's prev CPU {cross:,}: woke in the "
        f"waker's LLC {bw['to_waker_llc']:,}{share(bw['to_waker_llc'])}, in prev's "
        f"{bw['to_prev_llc']:,}{share(bw['to_prev_llc'])}, in neither {bw['elsewhere']:,}; waker in "
        f"prev's LLC {bw['shared_llc']:,}; on the waker's CPU {bw['on_waker_cpu']:,}"
    ]


Published = tuple[list[Cell], str | None]  # the cells, and why none


def _published(scenario: dict[str, Any], path: Path) -> Published | None:
    """The published cells the pair reproduces (sim_published.lookup), as the API serves them;
    None when there is nothing to say (a hint's pair without the tables file). A file that cannot
    be read is said on stderr: the runs still count."""
    try:
        cells, reason, _index = lookup_published(path, scenario)
    except (OSError, UnicodeDecodeError, csv.Error, CsvError) as exc:
        print(f"placemap sim: published tables {path}: {exc}", file=sys.stderr)
        return None
    return (cells, reason) if cells or reason else None


def _published_json(published: Published | None) -> dict[str, Any] | None:
    if published is None:
        return None
    cells, reason = published
    return {"cells": [asdict(c) for c in cells], "reason": reason}


def _print_published(published: Published | None, changes: list[float | None]) -> None:
    """The published cells, each with the way the run points against it: one change (the pair),
    or each seed's (--seeds), where the way may differ from seed to seed."""
    if published is None:
        return
    cells, reason = published
    if not cells:
        print(f"no published measurement to compare: {reason}")
        return
    measured = [pct for pct in changes if pct is not None]
    print("the real kernel, published:")
    for c in cells:
        known = c.tip_value is not None and c.value is not None
        values = f" ({c.metric} {c.tip_value:g} -> {c.value:g})" if known else ""
        effect = f"{c.published_pct:+.1f}% {'better' if c.published_pct >= 0 else 'worse'}{values}"
        ways = [direction(c, pct) for pct in measured]
        how = ""
        if ways and len(set(ways)) == 1:
            every = len(changes) > 1 and ways[0] != "no-direction"
            how = f": {DIRECTION_TEXT[ways[0]]}" + (" on every seed" if every else "")
        elif ways:
            counts = ", ".join(f"{w} on {ways.count(w)}" for w in sorted(set(ways)))
            how = f": the seed decides the way this run points ({counts})"
        uncertain = ", its reading marked uncertain" if c.uncertain else ""
        print(f"  {c.section}, {c.machine}, {c.x} {c.x_name}, {c.config}{uncertain}: {effect}{how}")
        print(f"    published in {c.reference}")
        if c.differs:
            diff = ", ".join(f"{d.field} {d.calibration} (here {d.yours})" for d in c.differs)
            print(f"    {c.compared_by} runs it with {diff}")


def _print_pair(
    result: dict[str, Any],
    base: dict[str, Any],
    dashboard: str,
    as_json: bool,
    published: Published | None = None,
) -> int:
    """The scenario's result beside its baseline's: the metric's change, the decisions that
    moved most, and the published cells the pair reproduces (when the tables are there)."""
    m = result["metric"]
    # an incomplete run's metric is no result (a lower bound, or nothing measured): no change
    both = result["sim"]["complete"] and base["sim"]["complete"]
    pct = change_pct(m["better"], base["metric"]["value"], m["value"]) if both else None
    moved = shifts(base["decisions"], result["decisions"])
    if as_json:
        _print_json(
            {
                "result": result,
                "baseline": base,
                "change_pct": pct,
                "shifts": moved,
                "published": _published_json(published),
            }
        )
        return 0
    _print_result(result, dashboard)
    verdict = "the same" if not pct else ("better" if pct > 0 else "worse")
    if not both:
        change = "n/a (a run did not complete: no change is measured)"
    elif pct is None:
        change = "n/a (baseline 0)"
    else:
        change = f"{pct:+.1f}%, {verdict} ({m['better']} is better)"
    print(f"baseline (no hints, default features): {m['name']} = {base['metric']['value']}: {change}")
    if (lat := base.get("latency_us")) is not None and lat["note"]:
        print(f"baseline: {lat['note']}")
    for line in counter_lines(base["counters"]):
        print(f"baseline: {line}")
    if (u := base.get("llc_util")) is not None and u["series"]:
        print(f"baseline: busy % per LLC over the run, {llc_util_text(u)}")
    if "recording_id" in base:
        print(
            f"baseline saved as recording {base['recording_id']}: {view_url(dashboard, base['recording_id'])}"
        )
        if "recording_id" in result:
            print(f"side by side: {view_url(dashboard, result['recording_id'], base['recording_id'])}")
    print("decisions that moved most (share of the kind's decisions, baseline in brackets):")
    for x in moved:
        print(f"  {x['kind']:<6} {100 * x['share']:5.1f}% ({100 * x['baseline_share']:5.1f}%)  {x['reason']}")
    _print_published(published, [pct])
    return 0


SAME_ON_EVERY_SEED = (
    "every seed gave the same change: a seed picks only the CPU the workload starts on and its own "
    "jitter, and they move nothing here (the model has no other noise)"
)


def _print_seeds(
    runs: list[dict[str, Any]], first: int, as_json: bool, published: Published | None = None
) -> int:
    """`--seeds N --baseline`: each seed's metric beside its baseline's (runs alternate run,
    baseline from seed `first` on), then how the change spreads (sim_pair.seed_summary), and the
    published cells with the way each seed's change points against them."""
    m = runs[0]["metric"]
    rows: list[dict[str, Any]] = []
    for i in range(0, len(runs), 2):
        r, b = runs[i], runs[i + 1]
        both = r["sim"]["complete"] and b["sim"]["complete"]
        rows.append(
            {
                "seed": first + i // 2,
                "value": r["metric"]["value"],
                "baseline": b["metric"]["value"],
                "change_pct": change_pct(m["better"], b["metric"]["value"], r["metric"]["value"])
                if both
                else None,
                "incomplete": r["sim"]["incomplete"] or b["sim"]["incomplete"],
            }
        )
    summary = seed_summary([row["change_pct"] for row in rows])
    if as_json:
        _print_json(
            {
                "metric": {"name": m["name"], "better": m["better"]},
                "runs": rows,
                "summary": summary,
                "published": _published_json(published),
            }
        )
        return 0
    last = rows[-1]["seed"]
    print(
        f"{m['name']} on {len(rows)} seeds ({first}..{last}), each beside its baseline (no hints, default "
        f"features); {m['better']} is better:"
    )
    for row in rows:
        if row["incomplete"] is not None:
            what = f"incomplete run: {row['incomplete']} (not compared)"
        elif row["change_pct"] is None:
            what = "n/a (baseline 0)"
        else:
            what = f"{row['change_pct']:+.1f}%"
        print(f"  seed {row['seed']}: {row['value']} against {row['baseline']}: {what}")
    if summary["measured"]:
        lo, hi = summary["min_pct"], summary["max_pct"]
        spread = f"median {summary['median_pct']:+.1f}%, range {lo:+.1f}% .. {hi:+.1f}%"
        print(f"{summary['verdict']}: {spread} ({summary['measured']} of {len(rows)} seeds measured)")
        if summary["identical"]:
            print(SAME_ON_EVERY_SEED)
    else:
        print(f"{summary['verdict']} (every seed has a run that did not complete, or a baseline of 0)")
    _print_published(published, [row["change_pct"] for row in rows])
    return 0


def _print_decisions(dec: dict[str, list[dict[str, Any]]], top: int = 8) -> None:
    """The most frequent reasons of each decision kind, with their share of the kind."""
    for kind, rows in dec.items():
        total = sum(r["count"] for r in rows)
        print(f"{kind} decisions: {total}")
        for r in rows[:top]:
            what = " / ".join(str(r[k]) for k in r if k != "count" and r[k])
            print(f"  {r['count']:>9} {100 * r['count'] / total:5.1f}%  {what}")
        if len(rows) > top:
            print(f"  ... {len(rows) - top} more (--json lists all)")


def print_incomplete_runs(out: dict[str, Any]) -> None:
    """calibrate's runs that ended before their workload did: their cells are left out."""
    for r in out["incomplete_runs"]:
        print(f"did not complete within its simulated time, its cells left out: {r['machine']} "
              f"{r['benchmark']} x={r['x']} hints {r['hints'] or 'none'} (seeds {r['seeds']})")  # fmt: skip


def _calibrate(args: argparse.Namespace) -> int:
    path = Path(args.csv)
    try:
        with path.open(newline="") as f:
            rows, skipped = read_rows(f)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        print(f"placemap calibrate: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    except CsvError as exc:
        print(f"placemap calibrate: {path}: {exc}", file=sys.stderr)
        return 2
    for s in skipped:
        print(f"placemap calibrate: {path}: line {s['line']} skipped: {s['reason']}", file=sys.stderr)
    if not rows:
        print(f"placemap calibrate: {path}: no usable rows", file=sys.stderr)
        return 2

    def progress(i: int, n: int, key: object) -> None:
        if not args.json:
            print(f"\r[{i + 1}/{n}] {key}".ljust(100)[:100], end="", file=sys.stderr, flush=True)

    out = calibrate(
        rows,
        seeds=range(1, args.seeds + 1),
        progress=progress,
        jobs=args.jobs,
        hackbench_loops=args.hackbench_loops,
    )
    if not args.json:
        print(file=sys.stderr)
    out["skipped_rows"] = skipped
    if args.json:
        _print_json(out)
        return 0
    for name, t in out["tables"].items():
        print(f"{name}: sign agreement {t['sign_agreement']} on {t['significant']} cells > 5%, "
              f"median simulated/published {t['median_ratio']}")  # fmt: skip
        wrong = _disagreeing(t["cells"])
        for c in wrong:
            print(f"  disagrees: {c['config']} at {c['x']}: published {c['published_pct']:+.1f}%, "
                  f"simulated {c['simulated_pct']:+.1f}%")  # fmt: skip
        section = why_section(name)
        if wrong and section is not None:
            print(f'  why we think it does: docs/calibration.md, "{section}"')
    o = out["overall"]
    print(f"overall: sign agreement {o['sign_agreement']} on {o['significant']} cells, "
          f"median ratio {o['median_ratio']}, {out['runs']} runs")  # fmt: skip
    b = o["beyond_noise"]
    print(f"beyond each table's published noise band: {b['sign_agreement']} on {b['cells']} cells")
    print_incomplete_runs(out)
    if skipped:
        rows_word = "row" if len(skipped) == 1 else "rows"
        print(f"{len(skipped)} malformed {rows_word} of {path.name} skipped (their lines are on stderr)")
    if "seed_stable" in o:
        st = o["seed_stable"]
        sb = st["beyond_noise"]
        si = st["invariant"]
        print(f"seed-stable (every seed gives the same sign): {st['sign_agreement']} on {st['cells']} cells, "
              f"{sb['sign_agreement']} on {sb['cells']} of them beyond the noise band; {si['cells']} of the "
              f"{st['cells']} have the same effect on every seed (the seeds, which pick only the start CPU "
              f"and the workloads' jitter, move nothing there), {si['sign_agreement']} on them")  # fmt: skip
        print(f"{o['zero_on_every_seed']} cells are 0 on every seed (the hint or feature changes nothing "
              "there in the model)")  # fmt: skip
    for tp in out["turning_points"]:
        if tp["holds"] is None:
            print(f"turning point not checked (none of its cells in {path.name}): {tp['name']}")
            continue
        turn = ""
        if "simulated_turn" in tp:
            sim, pub = _pair(tp["simulated_turn"]), _pair(tp["published_turn"])
            turn = f": turns between {sim}, published between {pub}"
        print(f"turning point {'holds' if tp['holds'] else 'DOES NOT hold'}: {tp['name']}{turn}")
        print(f"  simulated (published) by x: {_by_x(tp['cells'])}")
    _print_absolute(out["absolute"])
    return 0


# docs/calibration.md's section on each machine's benchmark ("Per table: where the model
# disagrees, and why we think it does"), by its heading's start; a test holds them to the file
WHY_SECTIONS = {
    ("zen3-2s-nps1", "hackbench"): "hackbench, Zen3",
    ("icx-2s", "hackbench"): "Why the hints change nothing on ICX in the model",
    ("zen3-2s-nps1", "schbench"): "schbench, Zen3",
    ("icx-2s", "schbench"): "schbench, ICX",
    ("zen3-2s-nps1", "tbench"): "tbench, Zen3",
    ("icx-2s", "tbench"): "tbench, ICX",
    ("icx-2s", "stream"): "Stream, ICX",
}


def why_section(table: str) -> str | None:
    """The docs/calibration.md section on a report table ("machine | section | benchmark")."""
    parts = [p.strip() for p in table.split("|")]
    if len(parts) != 3:
        return None
    return WHY_SECTIONS.get((MACHINES.get(parts[0], ""), parts[2].split("-")[0]))


def _disagreeing(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A table's cells beyond 5% published whose simulated effect has not their sign (0 is no
    sign): the cells its sign agreement counts against it, in the table's order."""
    return [
        c
        for c in cells
        if abs(c["published_pct"]) > SIGNIFICANT_PCT and c["published_pct"] * c["simulated_pct"] <= 0
    ]


def _print_absolute(groups: list[dict[str, Any]]) -> None:
    """calibration.absolute: the baseline's own metric, simulated / published, by x."""
    if groups:
        print("tip's own metric, simulated / published (the model's scale, before any hint):")
    for a in groups:
        metric = f"{a['metric']}, " if a["metric"] else ""
        head = f"  {a['machine']} | {a['benchmark']} ({metric}{a['better']} is better)"
        if a["cells"]:
            by_x = ", ".join(f"{c['x']}: {c['ratio']}" for c in a["cells"])
            print(f"{head}: median {a['median_ratio']}; by x: {by_x}")
        elif "not_compared" in a:
            print(f"{head}: not compared ({a['not_compared']})")
        else:
            print(f"{head}: no usable published value")
        if a["values_skipped"]:
            n = a["values_skipped"]
            print(f"    {n} tip {'row' if n == 1 else 'rows'} without a usable value left out")


def _loops(text: str) -> int:
    """--hackbench-loops, within the hackbench workload's own bounds on `loops`."""
    try:
        return read({"loops": int(text)}, "hackbench", "--hackbench-loops").int("loops")
    except ScenarioError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


MAX_SEEDS = 64


def _seeds(text: str) -> int:
    """--seeds: 1..MAX_SEEDS."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= n <= MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"expected 1..{MAX_SEEDS} seeds, got {n}")
    return n


def _pair(turn: list[int] | tuple[int, int] | None) -> str:
    return "none" if turn is None else f"{turn[0]} and {turn[1]}"


def _by_x(cells: list[tuple[int, float, float]]) -> str:
    """Simulated (published) effects by x; a range where several tables share an x."""

    def span(v: list[float]) -> str:
        lo, hi = min(v), max(v)
        return f"{lo:+.1f}%" if lo == hi else f"{lo:+.1f}..{hi:+.1f}%"

    xs: dict[int, list[tuple[float, float]]] = {}
    for x, p, s in cells:
        xs.setdefault(x, []).append((p, s))
    return ", ".join(f"{x}: {span([s for _, s in v])} ({span([p for p, _ in v])})" for x, v in xs.items())


def topology_spec(arg: str) -> Any:
    """A machine named on the command line, as a scenario's `topology`: a preset's name as it is,
    else the Topology JSON file's object (what `placemap-collect topology --json` prints for a
    host; `-`: read from stdin). Read, not validated (OSError and JSON errors are the caller's to
    report)."""
    return arg if arg in PRESETS else json.loads(read_arg(arg))


def with_topology(scenario: Any, arg: str) -> Any:
    """The scenario on the topology `--topology` names (topology_spec), put inline; validated with
    the rest of the scenario, whose errors then name `topology...`. A scenario that is no object
    is left as it is, for the scenario's own error."""
    return {**scenario, "topology": topology_spec(arg)} if isinstance(scenario, dict) else scenario


def register(sub: Any) -> None:
    """Add the `sim` and `calibrate` subcommands to the main parser's subparsers."""
    sim = sub.add_parser("sim", help="run one placement-simulator scenario")
    sim.add_argument("scenario", help="scenario JSON file (-: read it from stdin)")
    sim.add_argument(
        "--topology",
        metavar="PRESET|FILE",
        help="run on this machine instead of the scenario's topology: a preset name, or a Topology JSON "
        "file (`placemap-collect topology --json` of a host; -: read it from stdin)",
    )
    sim.add_argument("--json", action="store_true", help="print the result as JSON")
    sim.add_argument("--deterministic", action="store_true", help="wall_s as 0: byte-identical output")
    sim.add_argument(
        "--baseline",
        action="store_true",
        help="also run the scenario without its hints and feature changes and print the change and the "
        "decisions that moved most (with --save both are stored)",
    )
    sim.add_argument(
        "--seeds",
        type=_seeds,
        default=1,
        help="with --baseline: run the pair on N seeds (the scenario's seed and the N-1 after it, "
        f"up to {MAX_SEEDS}) and print each seed's change and whether its sign holds on all of them",
    )
    sim.add_argument(
        "--sweep",
        metavar="[PARAM=]V1,V2,...",
        help=f"run the scenario at each value of one workload parameter (default the one the published "
        f"tables vary: groups, workers, clients, threads, pairs; 2 to {MAX_POINTS} values), in worker "
        "processes, with --baseline each beside its baseline (and --seeds on several seeds), and print where "
        "the change turns; topology=MACHINE,MACHINE,... runs it on each machine instead (a preset, "
        "or a topology file NAME.json, e.g. placemap-collect topology's dump of a host, named NAME), and "
        "toggle=T1,T2,... (or toggle=all) with each toggle instead of its own hints and features, "
        "always beside the baseline (a toggle: hints and features joined by +, NO_ turning a feature "
        "off: fork_affine+wake_affine, NO_SIS_UTIL, STEAL+steal_node_limit=8), and print where the "
        "change helps and where it hurts; a trace replay sweeps topology= or toggle= (the "
        "recording's feature table)",
    )
    sim.add_argument(
        "--calibrated",
        action="store_true",
        help="with --sweep over the parameter the published tables vary (hackbench groups, schbench "
        "workers, tbench clients, stream threads): run each point as placemap calibrate runs the "
        "published cell at that value, with the calibration's workload parameters and run length "
        "(tbench's grows with its clients)",
    )
    sim.add_argument(
        "--across",
        metavar="MACHINE,MACHINE,...",
        help="with --sweep over a parameter or toggles: run the whole sweep on each of these machines "
        "(2 to 10, in the order given: presets, or topology files NAME.json, a recorded host's "
        "topology, named NAME) and print, beside each machine's sweep, the change at every value on "
        "every machine as one table (toggle=all --across: the feature table across machines)",
    )
    sim.add_argument(
        "--decisions",
        action="store_true",
        help="count every placement decision by its reason and print them (a --save run always keeps them)",
    )
    sim.add_argument(
        "--save",
        action="store_true",
        help="also store the run as a recording (source simulated) to replay; with --sweep, store the "
        "sweep's result (its runs are not saved) and print the link that opens it",
    )
    sim.add_argument(
        "--ftrace",
        metavar="FILE",
        help="also write the run's scheduler events (not its baseline's) to FILE as ftrace text, the "
        "lines cat trace prints, while it runs: for grep, awk, a diff against a real capture (not with "
        "--sweep or --seeds)",
    )
    sim.add_argument(
        "--db",
        help="SQLite file for --save and a trace workload's recording (default data/placemap.db, "
        "env PLACEMAP_DB)",
    )
    sim.add_argument(
        "--dashboard",
        default=DASHBOARD,
        metavar="URL",
        help=f"with --save: the dashboard serving that database, for the links that open the saved runs "
        f"(default {DASHBOARD})",
    )
    sim.set_defaults(func=_sim)
    cal = sub.add_parser("calibrate", help="compare the simulator with the published result tables")
    cal.add_argument(
        "--csv", default=str(DEFAULT_CALIBRATION_CSV), help="result table (default: shared/calibration)"
    )
    cal.add_argument("--seeds", type=int, default=1, help="seeds per cell (the metric is averaged)")
    cal.add_argument("--json", action="store_true")
    cal.add_argument(
        "--jobs", type=int, default=0, help="worker processes (default: one per CPU; same results for any)"
    )
    cal.add_argument(
        "--hackbench-loops",
        type=_loops,
        default=HACKBENCH_LOOPS,
        help=f"messages per sender and receiver in each hackbench run (default {HACKBENCH_LOOPS}; "
        f"the published runs' {PUBLISHED_HACKBENCH_LOOPS}: ~17 minutes on 2 CPUs)",
    )
    cal.set_defaults(func=_calibrate)
