"""A scenario swept over one workload parameter (hackbench's groups, schbench's workers, ...), over
machines (`topology`: preset names, "what if it ran on NPS4?") or over toggles (`toggle`: each hint
or feature change on its own, the feature table of placement-model.md section 3): each point's
metric, beside its baseline's (no hints, default features) when asked, the change read by the
metric's direction, and where the change turns, from helping to hurting or back: the question the
published tables answer ("wake_affine helps schbench while its workers fit an LLC and collapses
beyond it"). Where a point's pair is a published cell (sim_published), the published effect sits
beside the model's, and the published turns beside the model's. Machines and toggles are not
ordered: a sweep over them reads no turn or onset, only where the change helps and where it hurts.
A trace replay (a recording's wakeup graph, run and sleep lengths) sweeps machines or toggles: the
feature table of one's own workload. A sweep over a parameter or toggles can also run `across`
several machines: the whole sweep on each, each machine's result a panel of its own (the feature
table across machines; a turning point as it moves with the LLC's size). A machine is a preset, a
host (the spec's `hosts`: a recorded host's or a sysfs dump's topology, by name; on the command line
a topology file named by its stem), or a stored recording's own host (RECORDED).

Owns the sweep's validation (errors name `sweep.param`, `sweep.values`, `sweep.baseline`, ...), the
scenarios it runs, and the summary of their results. The runs themselves are the caller's: the
command line's worker pool (sim.runner.run_many) or a simulation job's worker (sim_jobs), which give
the same results since every run is seeded and deterministic.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import Any

from placemap.sim.calibration import BENCHMARKS, SIGNIFICANT_PCT, scenario_for
from placemap.sim.errors import ScenarioError
from placemap.sim.topology import PRESETS, from_dict
from placemap.sim.workloads.catalog import CATALOG, IntParam
from placemap.sim_pair import baseline_of, change_pct, seed_summary, with_seeds
from placemap.sim_published import X_PARAM, lookup
from placemap.sim_toggle import ALL_TOGGLES, MAX_TOGGLES, toggle

MAX_POINTS = 10  # x values in one sweep: its runs, twice that with a baseline
MAX_SEEDS = 8  # seeds per point (each point's pair on each): up to 160 runs
MACHINES = "topology"  # the sweep parameter whose values are presets, not workload integers
TOGGLES = "toggle"  # the sweep parameter whose values are hints and feature changes
TRACE = "trace"  # a recording replayed (sim.workloads.replay): swept over machines or toggles only
# a stored recording's own host, as a machine of a trace replay's sweep beside presets
RECORDED = "recorded"
# a sweep's machine read from a topology file on the command line (`--across zen3-2s-nps1,epyc.json`),
# named by the file's stem
TOPOLOGY_FILE = ".json"
MAX_HOST_NAME = 64  # characters of a host's name in a sweep (a hostname has at most 64)
# the most runs one sweep makes: points x seeds x its pair, on each machine it runs across. A sweep
# on one machine stays under it (16 toggles, each pair on 8 seeds: 256); across eight machines,
# every toggle on its own (208) or ten values beside their baselines on two seeds (320) fit
MAX_RUNS = 400


@dataclass(frozen=True)
class Sweep:
    """A validated sweep: the workload parameter and its values ascending (or `topology` and its
    presets in the order given), whether each point runs beside its baseline, and on how many seeds
    (the scenario's and those after it)."""

    param: str
    values: tuple[int | str, ...]
    baseline: bool
    seeds: int = 1
    # each point as `placemap calibrate` runs the published cell at its x: the calibration's
    # workload parameters and run length (calibration.scenario_for), the scenario's machine,
    # hints, features and seed
    calibrated: bool = False
    # the same sweep on each of these machines, in the order given (a feature table across machines;
    # a turning point as it moves with the LLC's size): each machine's result is a panel of its own
    across: tuple[str, ...] = ()
    # the machines named here that are no preset, each name's topology: the spec's `hosts` (a
    # recorded host or a sysfs dump, sent inline), and RECORDED (a stored recording's own host,
    # which the caller reads from the store and gives with `with_host`)
    hosts: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def spec(self) -> dict[str, Any]:
        """The sweep as a job's `sweep` spec: what parse_sweep reads back into this sweep (RECORDED's
        topology left out: it is the recording's, read again from the store)."""
        out: dict[str, Any] = {"param": self.param, "values": list(self.values), "baseline": self.baseline}
        out |= {"seeds": self.seeds, "calibrated": self.calibrated}
        if self.across:
            out["across"] = list(self.across)
        hosts = {k: v for k, v in self.hosts.items() if k != RECORDED}
        if hosts:
            out["hosts"] = hosts
        return out

    @property
    def ordered(self) -> bool:
        """Whether the values run along a scale, so that a change can turn between neighbours."""
        return self.param not in (MACHINES, TOGGLES)


def parse_sweep(scenario: Mapping[str, Any], spec: Any) -> Sweep:
    """Validate `spec` ({"param": name, "values": [int, ...], "baseline": bool, "seeds": n}) against the
    scenario's workload; `param` defaults to the parameter the published tables vary. A
    ScenarioError names the field at fault."""
    if not isinstance(spec, Mapping):
        raise ScenarioError("sweep", f"expected an object {{{', '.join(FIELDS)}}}")
    for k in spec:
        if k not in FIELDS:
            raise ScenarioError(f"sweep.{k}", f"unknown sweep field; known: {', '.join(FIELDS)}")
    workload = scenario.get("workload")
    kind = workload.get("kind") if isinstance(workload, Mapping) else None
    replay = kind == TRACE
    if replay and spec.get("param") not in (MACHINES, TOGGLES):
        raise ScenarioError(
            "sweep.param",
            f"a trace replay has no workload parameter to vary: sweep {MACHINES} (the recording on "
            f"each machine) or {TOGGLES} (under each toggle), not {spec.get('param')!r}",
        )
    if not replay and (not isinstance(kind, str) or kind not in CATALOG):
        raise ScenarioError(
            "sweep",
            f"a sweep varies a parametric workload's parameter ({', '.join(CATALOG)}), or a trace "
            f"replay's machine or toggles; this scenario's workload is {kind!r}",
        )
    ints = {} if replay else {p.name: p for p in CATALOG[str(kind)] if isinstance(p, IntParam)}
    param = spec.get("param", X_PARAM.get(str(kind)))
    if not isinstance(param, str) or (param not in ints and param not in (MACHINES, TOGGLES)):
        raise ScenarioError(
            "sweep.param",
            f"{kind} has no integer parameter {param!r}; it has: {', '.join(ints)}; "
            f"or {MACHINES} (presets), or {TOGGLES} (hints and features)",
        )
    hosts = _hosts(spec.get("hosts"))
    # a stored recording's replay can also run on the recording's own host
    recorded = (RECORDED,) if replay and isinstance(workload, Mapping) and "recording" in workload else ()
    named = (*recorded, *hosts)
    values: tuple[int | str, ...]
    if param == MACHINES:
        values = _machines(spec.get("values"), named=named)
    elif param == TOGGLES:
        values = _toggles(spec.get("values"))
    else:
        values = _ints(str(kind), ints[param], spec.get("values"))
    baseline = spec.get("baseline", False)
    if not isinstance(baseline, bool):
        raise ScenarioError("sweep.baseline", f"expected true or false, got {baseline!r}")
    # a toggle's effect is its change against the baseline: a toggle sweep always runs it
    baseline = baseline or param == TOGGLES
    if baseline and param != TOGGLES and baseline_of(scenario) is None:
        raise ScenarioError("sweep.baseline", "the scenario sets no hints or features: nothing to compare")
    seeds = spec.get("seeds", 1)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS:
        raise ScenarioError("sweep.seeds", f"expected an integer in 1..{MAX_SEEDS}, got {seeds!r}")
    if seeds > 1 and not baseline:
        raise ScenarioError(
            "sweep.seeds", "several seeds compare each point's change: they need the baseline"
        )
    if seeds > 1 and replay:
        raise ScenarioError(
            "sweep.seeds", "a trace replay draws nothing from the seed: every seed gives the same run"
        )
    calibrated = spec.get("calibrated", False)
    if not isinstance(calibrated, bool):
        raise ScenarioError("sweep.calibrated", f"expected true or false, got {calibrated!r}")
    if calibrated and (kind not in BENCHMARKS or param != X_PARAM.get(kind)):
        raise ScenarioError(
            "sweep.calibrated",
            f"calibrate runs {', '.join(BENCHMARKS)} along the parameter the tables vary "
            f"({', '.join(f'{k} {X_PARAM[k]}' for k in BENCHMARKS)}); this sweep is {kind} {param}",
        )
    across: tuple[str, ...] = ()
    if spec.get("across") is not None:
        if param == MACHINES:
            raise ScenarioError(
                "sweep.across",
                "a sweep over machines already runs on each; across is for a parameter or toggles",
            )
        across = _machines(spec["across"], "sweep.across", named)
    ran_on = set(across) | (set(values) if param == MACHINES else set())
    unused = [h for h in hosts if h not in ran_on]
    if unused:
        raise ScenarioError(
            f"sweep.hosts.{unused[0]}",
            f"no machine of the sweep is {unused[0]!r}: name it in sweep.across (or in sweep.values "
            f"of a {MACHINES} sweep)",
        )
    runs = len(across or (None,)) * len(values) * seeds * (2 if baseline else 1)
    if runs > MAX_RUNS:
        raise ScenarioError(
            "sweep.across" if across else "sweep.values",
            f"this sweep would make {runs} runs ({len(values)} values x {seeds} seeds"
            f"{' x its pair' if baseline else ''}{f' x {len(across)} machines' if across else ''}); "
            f"at most {MAX_RUNS}: fewer machines, values or seeds",
        )
    return Sweep(
        param=param,
        values=values,
        baseline=baseline,
        seeds=seeds,
        calibrated=calibrated,
        across=across,
        hosts=hosts,
    )


FIELDS = ("param", "values", "baseline", "seeds", "calibrated", "across", "hosts")


def _hosts(value: Any) -> dict[str, Any]:
    """The spec's `hosts`: machines that are no preset, each name's topology object in the
    project's topology schema (a recorded host, a sysfs dump), checked as a scenario's inline
    topology is (errors name `sweep.hosts.NAME...`)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ScenarioError("sweep.hosts", f"expected an object {{name: topology}}, got {value!r}")
    if len(value) > MAX_POINTS:
        raise ScenarioError("sweep.hosts", f"at most {MAX_POINTS} hosts, got {len(value)}")
    out: dict[str, Any] = {}
    for name, topo in value.items():
        where = f"sweep.hosts.{name}"
        if (
            not isinstance(name, str)
            or not name
            or name != name.strip()
            or "," in name
            or not name.isprintable()
            or len(name) > MAX_HOST_NAME
        ):
            raise ScenarioError(
                where,
                f"a host's name is 1 to {MAX_HOST_NAME} printable characters, without commas or outer "
                "spaces (it names a machine in a comma-separated list, a table and a file)",
            )
        if name in PRESETS or name == RECORDED:
            raise ScenarioError(
                where, f"{name!r} names a preset (or the recording's host): name the host otherwise"
            )
        from_dict(topo, where)
        out[name] = topo
    return out


def _count(n: int, where: str = "sweep.values") -> None:
    if not 2 <= n <= MAX_POINTS:
        raise ScenarioError(where, f"expected 2 to {MAX_POINTS} different values, got {n}")


def _ints(kind: str, p: IntParam, values: Any) -> tuple[int, ...]:
    """An integer parameter's values, ascending, each within its bounds."""
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in values
    ):
        raise ScenarioError("sweep.values", f"expected a list of integers, got {values!r}")
    _count(len(set(values)))
    out = [v for v in values if not p.lo <= v <= p.hi]
    if out:
        raise ScenarioError("sweep.values", f"{kind}'s {p.name} is {p.lo}..{p.hi}; {out[0]} is not")
    return tuple(sorted(set(values)))


def _toggles(values: Any) -> tuple[str, ...]:
    """Toggle values, in the order given (each once); `all` alone is every toggle on its own."""
    if values == ["all"]:
        return ALL_TOGGLES
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ScenarioError("sweep.values", f"expected a list of toggles, got {values!r}")
    names = tuple(dict.fromkeys(v.strip() for v in values))
    if not 2 <= len(names) <= MAX_TOGGLES:
        raise ScenarioError(
            "sweep.values", f"expected 2 to {MAX_TOGGLES} different toggles (or all), got {len(names)}"
        )
    for v in names:
        toggle(v)
    return names


def _machines(values: Any, where: str = "sweep.values", named: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Presets (or `named` machines: RECORDED, the spec's hosts), in the order given (each once): the
    machines to compare."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ScenarioError(
            where, f"expected a list of machine names (presets, or names of sweep.hosts), got {values!r}"
        )
    names = tuple(dict.fromkeys(v.strip() for v in values))
    _count(len(names), where)
    unknown = [v for v in names if v not in PRESETS and v not in named]
    if unknown:
        known = ", ".join([*named, *sorted(PRESETS)])
        raise ScenarioError(where, f"unknown machine {unknown[0]!r}; known: {known} (or one of sweep.hosts)")
    return names


def needs_host(sweep: Sweep) -> bool:
    """Whether the sweep runs on the recording's own host (RECORDED), whose topology the caller
    gives (with_host)."""
    return RECORDED in sweep.across or (sweep.param == MACHINES and RECORDED in sweep.values)


def with_host(sweep: Sweep, topology: Mapping[str, Any]) -> Sweep:
    """The sweep with the recording's host topology for its RECORDED machine."""
    return replace(sweep, hosts={**sweep.hosts, RECORDED: topology})


def parse_arg(
    scenario: Mapping[str, Any],
    text: str,
    baseline: bool,
    seeds: int = 1,
    *,
    calibrated: bool = False,
    across: str | None = None,
) -> Sweep:
    """The command line's `--sweep [PARAM=]V1,V2,...` (`topology=zen3-2s-nps1,zen3-2s-nps4`), with
    `--across MACHINE,MACHINE,...` on each of those machines. A machine is a preset, or a topology
    file (`epyc.json`: a recorded host's topology, `placemap-collect topology`'s dump) named by its
    stem."""
    param, sep, rest = text.partition("=")
    spec: dict[str, Any] = {"baseline": baseline, "seeds": seeds, "calibrated": calibrated}
    hosts: dict[str, Any] = {}
    if across is not None:
        spec["across"] = _named(across, "sweep.across", hosts)
    if sep:
        spec["param"] = param.strip()
    else:
        rest = param
    if spec.get("param") == MACHINES:
        spec["values"] = _named(rest, "sweep.values", hosts)
    elif spec.get("param") == TOGGLES:
        spec["values"] = [v.strip() for v in rest.split(",") if v.strip()]
    if hosts:
        spec["hosts"] = hosts
    if "values" in spec:
        return parse_sweep(scenario, spec)
    try:
        spec["values"] = [int(v) for v in rest.split(",") if v.strip()]
    except ValueError as exc:
        raise ScenarioError("sweep.values", f"expected integers separated by commas, got {rest!r}") from exc
    return parse_sweep(scenario, spec)


def _named(text: str, where: str, hosts: dict[str, Any]) -> list[str]:
    """The machines of a comma-separated list, each topology file (TOPOLOGY_FILE) read into `hosts`
    under its stem, which names it in the list."""
    out: list[str] = []
    for v in (v.strip() for v in text.split(",")):
        if not v.endswith(TOPOLOGY_FILE):
            if v:
                out.append(v)
            continue
        path = Path(v)
        try:
            topo = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ScenarioError(where, f"{v}: not a readable topology file ({exc})") from exc
        name = path.stem
        if name in hosts and hosts[name] != topo:
            raise ScenarioError(where, f"{v}: another topology file is named {name!r} too; rename one")
        hosts[name] = topo
        out.append(name)
    return out


def point(scenario: Mapping[str, Any], sweep: Sweep, x: int | str) -> dict[str, Any]:
    """The scenario at x (on machine x; with toggle x instead of its own hints and features)."""
    if sweep.param == MACHINES:
        return {**scenario, "topology": sweep.hosts.get(str(x), x)}
    if sweep.param == TOGGLES:
        hints, features = toggle(str(x))
        out = {k: v for k, v in scenario.items() if k not in ("hints", "features")}
        return {**out, **({"hints": hints} if hints else {}), **({"features": features} if features else {})}
    if sweep.calibrated:
        kind = str(scenario["workload"]["kind"])
        ref = scenario_for((str(scenario.get("topology")), kind, int(x), ()), 1)
        return {**scenario, "workload": ref["workload"], "duration_ms": ref["duration_ms"]}
    return {**scenario, "workload": {**scenario["workload"], sweep.param: x}}


def machines(scenario: Mapping[str, Any], sweep: Sweep) -> list[tuple[str, dict[str, Any]]]:
    """A sweep across machines: each preset and the scenario on it, in the order given."""
    return [(m, {**scenario, "topology": sweep.hosts.get(m, m)}) for m in sweep.across]


def one_machine(sweep: Sweep) -> Sweep:
    """The sweep each machine of a sweep across machines runs."""
    return replace(sweep, across=())


def scenarios(scenario: Mapping[str, Any], sweep: Sweep) -> list[dict[str, Any]]:
    """Every run of the sweep in order: for each x, on each seed, its scenario, then its baseline's
    when asked; across machines, all of that on each machine in turn."""
    if sweep.across:
        return [sc for _, on in machines(scenario, sweep) for sc in scenarios(on, one_machine(sweep))]
    out: list[dict[str, Any]] = []
    for x in sweep.values:
        at = point(scenario, sweep, x)
        base = baseline_of(at) if sweep.baseline else None
        runs = with_seeds(at, sweep.seeds)
        bases = [] if base is None else with_seeds(base, sweep.seeds)
        for i, r in enumerate(runs):
            out.append(r)
            if bases:
                out.append(bases[i])
    return out


def direction(change: float | None) -> str | None:
    """better / worse beyond the calibration's 5%, else same; None when not measured."""
    if change is None:
        return None
    if change > SIGNIFICANT_PCT:
        return "better"
    if change < -SIGNIFICANT_PCT:
        return "worse"
    return "same"


def turns(points: Sequence[tuple[Any, float | None]]) -> list[dict[str, Any]]:
    """Where a change (percent better, by x ascending) turns: between two neighbouring x whose
    changes beyond 5% point opposite ways, with only changes within 5% (or none measured)
    between them. `seed_decides` is left None (one seed; summarize sets it for several)."""
    out: list[dict[str, Any]] = []
    last: tuple[Any, float, str] | None = None
    for x, change in points:
        d = direction(change)
        if d is None or d == "same" or change is None:
            continue
        if last is not None and last[2] != d:
            out.append(
                {
                    "between": [last[0], x],
                    "from": last[2],
                    "to": d,
                    "from_pct": last[1],
                    "to_pct": change,
                    "seed_decides": None,
                }
            )
        last = (x, change, d)
    return out


CARRY_SHARE = 0.9  # "LLCs carrying 90% of the work", as the dashboard counts them (llcUtil.ts)


def llc_spread(u: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Where a run's work sat (its llc_util): the fewest LLCs that carry 90% of the busy CPU time,
    of how many, and the busiest LLC's share of it; None without llc_util or busy time."""
    if not u:
        return None
    busy = sorted((s["cpus"] * s["mean"] for s in u["series"]), reverse=True)
    total = sum(busy)
    if total <= 0:
        return None
    acc, carrying = 0.0, 0
    for b in busy:
        acc += b
        carrying += 1
        if acc >= CARRY_SHARE * total:
            break
    return {"carrying": carrying, "llcs": len(busy), "busiest_share": busy[0] / total}


def onset(points: Sequence[tuple[Any, float | None]]) -> dict[str, Any] | None:
    """The first x (ascending) whose change passes 5% either way: where a hint starts to matter
    ("fork_affine hurts tbench as clients grow"); None when none does."""
    for x, change in points:
        d = direction(change)
        if change is not None and d in ("better", "worse"):
            return {"x": x, "direction": d, "pct": change}
    return None


def ways(points: Sequence[tuple[Any, float | None]]) -> dict[str, list[Any]]:
    """The values at which the change is better, worse (beyond 5%) and the same, in sweep order:
    which machines a hint helps and which it hurts."""
    out: dict[str, list[Any]] = {"better": [], "worse": [], "same": []}
    for x, change in points:
        d = direction(change)
        if d is not None:
            out[d].append(x)
    return out


def _published_cells(scenario: Mapping[str, Any], csv_path: Path | None) -> list[dict[str, Any]]:
    """The published cells the pair at one x reproduces (sim_published.lookup), each with the
    fields in which the sweep's run differs from the model's own run of the cell."""
    if csv_path is None:
        return []
    cells, _, _ = lookup(csv_path, scenario)
    return [
        {
            "published_pct": c.published_pct,
            "significant": c.significant,
            "section": c.section,
            "config": c.config,
            "differs": [d.field for d in c.differs],
        }
        for c in cells
    ]


def summarize(
    scenario: Mapping[str, Any], sweep: Sweep, results: Sequence[Mapping[str, Any]], csv_path: Path | None
) -> dict[str, Any]:
    """The sweep's result from its runs' results (in `scenarios` order): per x the metric and its
    baseline's on the first seed, the change (with several seeds their median, each seed's, and how
    they spread: sim_pair.seed_summary), the published cells of the pair, the model's turns (each
    saying whether a seed decides one of its ends) and the published ones (each x read by its
    cells' median), and where each first passes 5%. Across machines, each machine's result is a
    panel of its own (`panels`, each naming its `topology`), and the sweep's own rows are empty."""
    if sweep.across:
        return _summarize_across(scenario, sweep, results, csv_path)
    pair = 2 if sweep.baseline else 1
    step = pair * sweep.seeds
    if len(results) != step * len(sweep.values):
        raise ValueError(f"{len(results)} results for {len(sweep.values)} points on {sweep.seeds} seeds")
    metric = results[0]["metric"]
    rows: list[dict[str, Any]] = []
    published_error: str | None = None
    for i, x in enumerate(sweep.values):
        runs = [results[step * i + pair * k] for k in range(sweep.seeds)]
        bases = [results[step * i + pair * k + 1] for k in range(sweep.seeds)] if sweep.baseline else []
        changes = [
            change_pct(metric["better"], b["metric"]["value"], r["metric"]["value"])
            if r["sim"]["complete"] and b["sim"]["complete"]
            else None
            for r, b in zip(runs, bases, strict=False)
        ]
        spread = seed_summary(changes) if sweep.seeds > 1 else None
        first = changes[0] if changes else None  # one seed (None without a baseline)
        change = spread["median_pct"] if spread is not None else first
        published: list[dict[str, Any]] = []
        if sweep.baseline and published_error is None:
            try:
                published = _published_cells(point(scenario, sweep, x), csv_path)
            except (OSError, ValueError, csv.Error) as exc:  # the runs are no less a result
                published_error = f"{csv_path}: {exc}"
        run, base = runs[0], bases[0] if bases else None
        rows.append(
            {
                "x": x,
                "value": run["metric"]["value"],
                "complete": run["sim"]["complete"],
                "baseline": None if base is None else base["metric"]["value"],
                "baseline_complete": None if base is None else base["sim"]["complete"],
                "change_pct": change,
                "direction": direction(change),
                "changes": changes if spread is not None else None,
                "seeds": spread,
                "published": published,
                # several tables can publish one x (Stream's kernels): the way is their median's
                "published_pct": median(c["published_pct"] for c in published) if published else None,
                # where the work ran: the model's reason a curve turns is often here (schbench's
                # wake_affine herd on the messenger's LLC)
                "llc_spread": llc_spread(run.get("llc_util")),
                "baseline_llc_spread": None if base is None else llc_spread(base.get("llc_util")),
                "cpu_utilization": run["counters"]["cpu_utilization"],
                "migrations": run["counters"]["migrations"]["total"],
            }
        )
    _, at = distinct(scenarios(scenario, sweep))
    by_x = {r["x"]: r for r in rows}
    model = [(r["x"], r["change_pct"]) for r in rows]
    pub = [(r["x"], r["published_pct"]) for r in rows if r["published_pct"] is not None]
    # machines run along no scale: no turn or onset between them, only the ways
    model_turns = turns(model) if sweep.ordered else []
    for t in model_turns:
        ends = [by_x[x]["seeds"] for x in t["between"]]
        t["seed_decides"] = None if sweep.seeds == 1 else any(e is not None and not e["stable"] for e in ends)
    return {
        "param": sweep.param,
        "values": list(sweep.values),
        "ordered": sweep.ordered,
        "calibrated": sweep.calibrated,
        "baseline": sweep.baseline,
        "seeds": sweep.seeds,
        "metric": {"name": metric["name"], "better": metric["better"]},
        "rows": rows,
        "turns": model_turns,
        "published_turns": turns(pub) if sweep.ordered else [],
        "onset": onset(model) if sweep.ordered else None,
        "published_onset": onset(pub) if sweep.ordered else None,
        "ways": ways(model),
        "published_ways": ways(pub),
        "published_error": published_error,
        # each distinct run once (a toggle sweep's shared baseline ran once)
        "events": sum(int(results[at.index(i)]["sim"]["events"]) for i in set(at)),
        "topology": None,
        "across": [],
        "panels": [],
    }


# what every machine's panel of a sweep across machines has in common, the sweep's own
SHARED = ("param", "values", "ordered", "calibrated", "baseline", "seeds", "metric")


def _summarize_across(
    scenario: Mapping[str, Any], sweep: Sweep, results: Sequence[Mapping[str, Any]], csv_path: Path | None
) -> dict[str, Any]:
    """A sweep across machines: each machine's runs (consecutive, in `scenarios` order) summarized as
    a sweep of its own, that machine's panel."""
    one = one_machine(sweep)
    n = len(scenarios(scenario, one))  # the same on every machine
    if len(results) != n * len(sweep.across):
        raise ValueError(f"{len(results)} results for {len(sweep.across)} machines of {n} runs")
    panels = [
        {**summarize(on, one, results[n * i : n * (i + 1)], csv_path), "topology": m}
        for i, (m, on) in enumerate(machines(scenario, sweep))
    ]
    return {
        **{k: panels[0][k] for k in SHARED},
        "rows": [],
        "turns": [],
        "published_turns": [],
        "onset": None,
        "published_onset": None,
        "ways": ways([]),
        "published_ways": ways([]),
        "published_error": next((p["published_error"] for p in panels if p["published_error"]), None),
        # machines share no run
        "events": sum(int(p["events"]) for p in panels),
        "topology": None,
        "across": list(sweep.across),
        "panels": panels,
    }


def run(
    scenario: Mapping[str, Any],
    sweep: Sweep,
    run_one: Callable[[Mapping[str, Any], Callable[[float], None]], Mapping[str, Any]],
    csv_path: Path | None,
    on_progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Run the sweep's scenarios one after another with `run_one(scenario, progress)` (a job's
    worker: progress is the fraction of the sweep's runs done) and summarize them."""
    todo, at = distinct(scenarios(scenario, sweep))
    results: list[Mapping[str, Any]] = []
    for i, sc in enumerate(todo):

        def progress(f: float, i: int = i) -> None:
            if on_progress is not None:
                on_progress((i + min(max(f, 0.0), 1.0)) / len(todo))

        results.append(run_one(sc, progress))
    return summarize(scenario, sweep, [results[i] for i in at], csv_path)


# the fields of a sweep's scenarios that are large objects shared between its runs
BULKY = ("workload", "topology")


def distinct(todo: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """The different scenarios among a sweep's runs, and where each run's result is among theirs:
    a toggle sweep's points share one baseline, which runs once (a run is seeded and deterministic,
    so its result is the same every time). A scenario is told by its content; the runs of a sweep
    share their workload object (a trace replay's profile: megabytes) and each machine's topology
    object (a host's: a 2048-CPU one is 250 KiB), so each such object is serialized once, not once
    per run."""
    keys: dict[str, int] = {}
    runs: list[dict[str, Any]] = []
    at: list[int] = []
    shared: dict[int, str] = {}  # id -> its JSON; every object stays alive in `todo` meanwhile

    def text(v: Any) -> str:
        got = shared.get(id(v))
        if got is None:
            got = shared[id(v)] = json.dumps(v, sort_keys=True)
        return got

    for sc in todo:
        rest = json.dumps({k: v for k, v in sc.items() if k not in BULKY}, sort_keys=True)
        key = "\n".join([*(text(sc.get(k)) for k in BULKY), rest])
        if key not in keys:
            keys[key] = len(runs)
            runs.append(sc)
        at.append(keys[key])
    return runs, at
