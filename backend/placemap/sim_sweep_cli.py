"""`placemap sim SCENARIO --sweep [PARAM=]V1,V2,...`: the scenario at each value of one workload
parameter, on each machine (`topology=PRESET,...`) or with each toggle (`toggle=T1,...`, `toggle=all`)
(with `--baseline`, or always for toggles, each beside its baseline), run in worker processes, each
distinct run once, printed as a table with the change at each x, the published effect where the pair
is a published cell, and where the change turns (sim_sweep), or for machines and toggles where it
helps and where it hurts (a trace replay: over machines or toggles only, its recording or file read
into a profile once); with `--across MACHINE,...` all of that on each machine, then the change at
every value on every machine as one table (a feature table across machines); a machine is a preset
or a topology file (NAME.json, the machine NAME), and each that is no preset is described before the
tables; with `--save` the result stored and its link printed. Thin: sim_cli dispatches here;
sim_sweep owns the sweep."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from placemap.sim.errors import ScenarioError
from placemap.sim.runner import run_many
from placemap.sim.scenario import parse_scenario
from placemap.sim.topology import from_dict
from placemap.sim_inputs import trace_input
from placemap.sim_sweep import distinct, needs_host, parse_arg, scenarios, summarize, with_host


def sweep_main(
    scenario: dict[str, Any],
    text: str,
    *,
    baseline: bool,
    seeds: int = 1,
    calibrated: bool = False,
    across: str | None = None,
    as_json: bool,
    csv_path: Path,
    save_to: Path | None = None,
    dashboard: str,
    collector: Path | None = None,
    db: Path | None = None,
) -> int:
    """Validate, run and print a sweep, storing its result in the store at `save_to` when given
    (its link printed; `sweep_id` in the JSON); 2 with a message naming the field when it is bad.
    A trace replay's recording (from the store at `db`) or file (read by the importer, `collector`)
    becomes its profile once, before any run; what is stored is the scenario as given."""
    try:
        sweep = parse_arg(scenario, text, baseline, seeds, calibrated=calibrated, across=across)
        given = scenario
        if trace_input(scenario) is not None:
            scenario, host = _resolved(scenario, db, collector, needs_host(sweep))
            if host is not None:
                sweep = with_host(sweep, host)
        todo, at = distinct(scenarios(scenario, sweep))
        for sc in todo:  # every point named before any runs
            parse_scenario(sc)
        ran = run_many(todo)
        results = [ran[i] for i in at]
    except ScenarioError as exc:
        print(f"placemap sim: bad scenario: {exc}", file=sys.stderr)
        return 2
    out = summarize(scenario, sweep, results, csv_path)
    if out["published_error"]:
        print(f"placemap sim: published tables {out['published_error']}", file=sys.stderr)
    sweep_id = None
    if save_to is not None:
        from placemap.store import Store  # noqa: PLC0415 - pyarrow, for a sweep that is stored

        store = Store(save_to)
        try:
            sweep_id = store.put_sweep(given, sweep.spec(), out)
        finally:
            store.close()
    if as_json:
        json.dump(
            out if sweep_id is None else {**out, "sweep_id": sweep_id}, sys.stdout, indent=2, sort_keys=True
        )
        sys.stdout.write("\n")
    else:
        for line in host_lines(sweep.hosts):
            print(line)
        if out["across"]:
            print_across(out)
        else:
            print_sweep(out)
        if sweep_id is not None:
            print(f"saved as sweep {sweep_id}: {dashboard.rstrip('/')}/?{urlencode({'sweep': sweep_id})}")
    return 0


def _resolved(
    scenario: dict[str, Any], db: Path | None, collector: Path | None, host: bool
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The trace replay's scenario with its profile, its recording read from the store at `db`,
    and with `host` the recording's host topology (for a sweep that runs it there)."""
    from placemap.sim_profile import recorded_host, resolve  # noqa: PLC0415 - the importer's stack
    from placemap.store import Store  # noqa: PLC0415

    store = Store(db) if db is not None and trace_input(scenario) == "recording" else None
    try:
        out: dict[str, Any] = resolve(scenario, store, collector)
        return out, recorded_host(scenario, store) if host else None
    finally:
        if store is not None:
            store.close()


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def host_lines(hosts: Mapping[str, Any]) -> list[str]:
    """What each machine that is no preset is, as its name does not say: "epyc-7451:
    x86_64-epyc_7451, 96 CPUs online, 16 LLCs, 8 NUMA nodes"."""
    out = []
    for name, topo in hosts.items():
        t = from_dict(topo)
        machine = topo.get("machine") if isinstance(topo, Mapping) else None
        out.append(
            f"{name}: {machine or 'a host'}, {_count(len(t.cpus), 'CPU')} online, "
            f"{_count(t.nr_llcs, 'LLC')}, {_count(len(t.node_cpus), 'NUMA node')}"
        )
    return out


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:+.1f}%"


def _turn_text(t: dict[str, Any], param: str) -> str:
    a, b = t["between"]
    return (
        f"between {a} and {b} {param}: {t['from']} ({_pct(t['from_pct'])}) -> {t['to']} ({_pct(t['to_pct'])})"
    )


def _carrying(r: dict[str, Any]) -> str:
    """'1 vs 8': the LLCs carrying 90% of the run's work against its baseline's."""

    def one(sp: dict[str, Any] | None) -> str:
        return "-" if sp is None else str(sp["carrying"])

    return f"{one(r['llc_spread'])} vs {one(r['baseline_llc_spread'])}"


def print_sweep(out: dict[str, Any]) -> None:
    """The sweep as a table: x, the metric, its baseline's and the change (on several seeds the
    first seed's metrics, the median change and whether every seed points its way), how many LLCs
    carry 90% of the work in each, the published effect; then the onsets and the turns."""
    m, param, seeds = out["metric"], out["param"], out["seeds"]
    w = max(9, len(param), *(len(str(r["x"])) for r in out["rows"]))
    head = f"{param:>{w}}  {m['name']:>22}"
    if out["baseline"]:
        head += f"  {'baseline':>12}  {'change' if seeds == 1 else 'median':>9}  {'LLCs 90%':>10}  published"
        if seeds > 1:
            head += "  seeds"
    on = ", each beside its baseline (no hints, default features)" if out["baseline"] else ""
    if seeds > 1:
        on += f", on {seeds} seeds (the metrics are the first seed's)"
    if out["calibrated"]:
        on += ", each as placemap calibrate runs it (the calibration's workload and run length)"
    print(f"{m['name']} ({m['better']} is better) at each {param}{on}")
    print(head)
    for r in out["rows"]:
        line = f"{r['x']:>{w}}  {r['value']:>22g}" + ("" if r["complete"] else " (incomplete)")
        if out["baseline"]:
            base = f"{r['baseline']:g}" + ("" if r["baseline_complete"] else "*")
            n = len(r["published"])
            pub = "-" if n == 0 else _pct(r["published_pct"]) + (f" (median of {n})" if n > 1 else "")
            line += f"  {base:>12}  {_pct(r['change_pct']):>9}  {_carrying(r):>10}  {pub}"
            if r["seeds"] is not None:
                line += f"  {r['seeds']['verdict']}"
        print(line)
    if any(not r["complete"] or r["baseline_complete"] is False for r in out["rows"]):
        print("incomplete: a run ended before its workload did (* a baseline's); no change is read there")
    if not out["baseline"]:
        return
    if not out["ordered"]:
        _print_ways(out)
        return
    on = out["onset"]
    first = f"at {on['x']} {param}: {on['direction']} ({_pct(on['pct'])})" if on else "nowhere"
    print(f"the change first passes 5% {first}")
    for t in out["turns"]:
        noise = " (a seed decides the way at one end)" if t["seed_decides"] else ""
        print(f"the change turns {_turn_text(t, param)}{noise}")
    if not out["turns"]:
        print(f"the change does not turn: no two {param} values point opposite ways beyond 5%")
    if any(r["published"] for r in out["rows"]):
        for t in out["published_turns"]:
            print(f"published: it turns {_turn_text(t, param)}")
        if not out["published_turns"]:
            print("published: it does not turn over these values")
        on = out["published_onset"]
        first = f"at {on['x']} {param}: {on['direction']} ({_pct(on['pct'])})" if on else "nowhere"
        print(f"published: it first passes 5% {first}")


def _ways_text(ways: dict[str, list[Any]]) -> str:
    parts = [f"{d} on {', '.join(map(str, ways[d]))}" for d in ("better", "worse", "same") if ways[d]]
    return "; ".join(parts) if parts else "not measured"


def _print_ways(out: dict[str, Any]) -> None:
    """A sweep over machines or toggles: where the change helps and hurts beyond 5% (no turn is read
    between them)."""
    print(f"the change, beyond 5%: {_ways_text(out['ways'])}")
    if any(r["published"] for r in out["rows"]):
        print(f"published: {_ways_text(out['published_ways'])}")


def print_across(out: dict[str, Any]) -> None:
    """A sweep across machines: each machine's sweep as print_sweep prints it, then, with a baseline,
    the change at every value on every machine in one table, the published effect in brackets where
    a table publishes the pair: which toggle helps where, where each machine's curve turns."""
    for p in out["panels"]:
        print(f"on {p['topology']}:")
        print_sweep(p)
        print()
    if not out["baseline"]:
        return
    param, panels = out["param"], out["panels"]
    print(f"the change, % better than the baseline, at each {param} on each machine (published in brackets):")

    def cell(r: dict[str, Any]) -> str:
        pub = "" if r["published_pct"] is None else f" ({_pct(r['published_pct'])})"
        return _pct(r["change_pct"]) + pub

    cells = [[cell(r) for r in p["rows"]] for p in panels]
    w = max(9, len(param), *(len(str(x)) for x in out["values"]))
    cw = [max(len(p["topology"]), *(len(c) for c in col)) for p, col in zip(panels, cells, strict=True)]
    print(f"{param:>{w}}  " + "  ".join(f"{p['topology']:>{n}}" for p, n in zip(panels, cw, strict=True)))
    for i, x in enumerate(out["values"]):
        print(f"{x!s:>{w}}  " + "  ".join(f"{col[i]:>{n}}" for col, n in zip(cells, cw, strict=True)))
