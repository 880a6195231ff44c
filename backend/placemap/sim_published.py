"""The published measurements a simulated pair can be read against: the cells of the calibration
file (shared/calibration/userspace-hinting-rfc.csv) whose machine, benchmark, x and hints are the
scenario's, so that a what-if run on zen3-2s-nps1 or icx-2s shows beside its own change what the
real kernel did on the machine the preset models.

Owns reading the file into an index (rows the calibration would skip are skipped here too, and
counted) and matching a scenario to it. A cell matches when the scenario's topology is the
machine's preset, its workload the benchmark with the table's x (groups, workers, clients,
threads), its hints the cell's hints, and its features the defaults (the RFC ran the default
features; a pair that also changes features measures something else). Where the scenario's
other parameters differ from those `placemap calibrate` runs for the cell, the match says which
(`differs`): the published value is then a measurement of another run.

A pair that changes scheduler features instead (no hint) is matched the same way against the
features' own published effects (placemap.sim.published.CHECKS, kept in the repo): SIS_SHORT,
UTIL_FITS_CAPACITY / SELECT_BIAS_PREV and STEAL, measured against the default kernel; SIS_UTIL
and the NUMA imbalance rework, measured as the default kernel against the older one, read in
reverse (a pair turning SIS_UTIL off, or NUMA_IMB_LEGACY on, against the default).

No FastAPI here: api/routes/sim.py serves it, sim_cli.py prints it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from placemap.sim.calibration import (
    BASELINE,
    BENCHMARKS,
    NO_HINT,
    SIGNIFICANT_PCT,
    Key,
    cell_key,
    read_rows,
    scenario_for,
)
from placemap.sim.features import Features, parse_features
from placemap.sim.published import CHECKS, Check
from placemap.sim.workloads.catalog import CATALOG, IntParam

# the workload parameter each benchmark's tables vary (the CSV's x; the feature checks' too)
X_PARAM = {
    "hackbench": "groups",
    "schbench": "workers",
    "tbench": "clients",
    "stream": "threads",
    "netperf": "threads",
    "ctxswitch": "pairs",
}
BETTER = {"hackbench": "lower", "schbench": "lower"}  # the others' metrics are higher-is-better
# parameters that make another benchmark, not another run of it: matched, never a difference
SAME_BENCHMARK = {"netperf": ("test",)}


@dataclass(frozen=True)
class Difference:
    """A scenario field whose value is not the one the model's own run of the cell has (the run
    `compared_by` makes: placemap calibrate's for a table's cell)."""

    field: str
    calibration: int | str
    yours: int | str


@dataclass(frozen=True)
class Cell:
    """One published measurement: a table's cell (a hint configuration's value and its effect
    against tip's) or a feature check (its effect against the kernel it was measured against)."""

    source: str
    section: str
    machine: str
    benchmark: str
    metric: str
    better: str
    x_name: str
    x: int
    config: str
    value: float | None
    tip_value: float | None
    published_pct: float  # percent better than the baseline, as printed (positive: better)
    significant: bool  # beyond the 5% the calibration counts a direction from
    uncertain: bool
    differs: tuple[Difference, ...] = field(default=())
    reference: str = ""  # where it was published: the tables' file, or an LKML message / commit
    compared_by: str = "placemap calibrate"  # what runs the model's side (`differs` is against it)
    # that run's workload (every parameter) and duration_ms: the scenario it differs from
    model_workload: Mapping[str, int | str] = field(default_factory=dict)
    model_duration_ms: int = 0


@dataclass(frozen=True)
class Index:
    """The calibration file's hint cells by the simulation they need."""

    cells: Mapping[Key, tuple[Cell, ...]]
    skipped_rows: int

    def match(self, scenario: Mapping[str, Any]) -> tuple[list[Cell], str | None]:
        """The cells a scenario (already validated) reproduces, each with how the scenario differs
        from the calibration's run of it; with none, why not (None when there are some)."""
        topology = scenario.get("topology")
        workload = scenario.get("workload")
        machines = sorted({k[0] for k in self.cells})
        if topology not in machines or not isinstance(workload, Mapping):
            return [], f"the published tables are for the presets {', '.join(machines)}"
        kind = str(workload.get("kind"))
        if kind not in BENCHMARKS:
            return [], f"no published table has {kind}"
        if parse_features(scenario.get("features")) != Features():
            return [], "the published runs have the default features"
        hints = scenario.get("hints") or []
        if not hints:
            return [], "no hint set: the published tables give the hints' effects against tip"
        mine = _workload(kind, workload)
        key: Key = (topology, kind, int(mine[X_PARAM[kind]]), tuple(sorted(str(h) for h in hints)))
        cells = self.cells.get(key)
        if not cells:
            at = f"{X_PARAM[kind]} {key[2]}"
            why = f"no published cell for {kind} on {topology} at {at} with {'+'.join(key[3])}"
            xs = sorted(k[2] for k in self.cells if (k[0], k[1], k[3]) == (key[0], key[1], key[3]))
            if xs:
                why += f" (published at {X_PARAM[kind]} {', '.join(map(str, xs))})"
            return [], why
        ref = scenario_for(key, 1)
        theirs, their_ms = _workload(kind, ref["workload"]), int(ref["duration_ms"])
        differs = _differences(kind, theirs, their_ms, mine, scenario)
        return [
            replace(c, differs=differs, model_workload=theirs, model_duration_ms=their_ms) for c in cells
        ], None


def direction(cell: Cell, simulated_pct: float) -> str:
    """The run's change (percent better than its baseline) against the cell, by the calibration's
    rule: `same` or `opposite` sign, `unmoved` (the run changed nothing), or `no-direction` (the
    published effect is within 5%)."""
    if not cell.significant:
        return "no-direction"
    if simulated_pct == 0:
        return "unmoved"
    return "same" if cell.published_pct * simulated_pct > 0 else "opposite"


DIRECTION_TEXT = {
    "same": "this run points the same way",
    "opposite": "this run points the other way",
    "unmoved": "this run does not move it",
    "no-direction": "within the 5% the calibration counts no direction from",
}


def _workload(kind: str, spec: Mapping[str, Any]) -> dict[str, int | str]:
    """Every catalog parameter of the workload, the default where the scenario leaves it out."""
    out: dict[str, int | str] = {}
    for p in CATALOG[kind]:
        v = spec.get(p.name, p.default)
        out[p.name] = int(v) if isinstance(p, IntParam) else str(v)
    return out


def _differences(
    kind: str,
    theirs: Mapping[str, int | str],
    their_ms: int,
    mine: Mapping[str, int | str],
    scenario: Mapping[str, Any],
) -> tuple[Difference, ...]:
    """The workload parameters and run length that differ from the published cell's run."""
    out = [
        Difference(f"workload.{name}", theirs[name], mine[name])
        for name in theirs
        if theirs[name] != mine[name]
    ]
    # hackbench runs until its loops are done (a run cut short says so itself); the others
    # measure for as long as they are simulated
    duration = int(scenario.get("duration_ms", 1000))
    if kind != "hackbench" and duration != their_ms:
        out.append(Difference("duration_ms", their_ms, duration))
    return tuple(out)


def match_features(scenario: Mapping[str, Any]) -> tuple[list[Cell], str | None] | None:
    """The features' own published effects (CHECKS) that a pair changing features, and no hint,
    reproduces: same preset, workload kind and x, and exactly the check's features (or, for a
    check of the default kernel against an older one, exactly the older one's, read in reverse);
    with none, why not. None when the pair sets a hint or changes no feature (the tables' matter)."""
    features = parse_features(scenario.get("features"))
    if scenario.get("hints") or features == Features():
        return None
    topology, workload = scenario.get("topology"), scenario.get("workload")
    if not isinstance(workload, Mapping):
        return [], "the features' published effects are for preset machines"
    kind = str(workload.get("kind"))
    # a check measured against the default kernel, or one whose baseline is this pair's change
    # and whose change is the default kernel (SIS_UTIL off, the legacy NUMA rule): read in reverse
    checks = [(c, False) for c in CHECKS if not c.base and parse_features(c.test) == features] + [
        (c, True)
        for c in CHECKS
        if c.base and parse_features(c.base) == features and parse_features(c.test) == Features()
    ]
    if not checks:
        return [], "no published effect of this feature change on its own"
    same = [(c, rev) for c, rev in checks if c.topology == topology and c.workload["kind"] == kind]
    if not same:
        where = sorted({f"{c.workload['kind']} on {c.topology}" for c, _ in checks})
        return [], f"the feature change's published effects are for {', '.join(where)}"
    x_name = X_PARAM[kind]
    mine = _workload(kind, workload)
    keys = (x_name, *SAME_BENCHMARK.get(kind, ()))
    hit = [(c, rev) for c, rev in same if all(_workload(kind, c.workload)[k] == mine[k] for k in keys)]
    if not hit:

        def run_at(w: Mapping[str, int | str]) -> str:
            extra = " ".join(str(w[k]) for k in keys[1:])
            return f"{x_name} {w[x_name]}" + (f" ({extra})" if extra else "")

        at = sorted({run_at(_workload(kind, c.workload)) for c, _ in same})
        return [], f"published at {', '.join(at)}; here {run_at(mine)}"
    return [_check_cell(c, kind, x_name, mine, scenario, rev=rev) for c, rev in hit], None


def reversed_pct(pct: float, better: str) -> float:
    """A published effect of B against A (percent better) as the effect of A against B: with
    values a and b, lower-is-better pct = (a - b) / a gives (b - a) / b = -pct / (1 - pct/100);
    higher-is-better pct = (b - a) / a gives (a - b) / b = -pct / (1 + pct/100)."""
    return -pct / (1 - pct / 100) if better == "lower" else -pct / (1 + pct / 100)


def _config(features: Mapping[str, Any]) -> str:
    return ", ".join(k if v is True else f"no {k}" if v is False else f"{k} {v}" for k, v in features.items())


def _check_cell(
    c: Check, kind: str, x_name: str, mine: Mapping[str, int | str], scenario: Mapping[str, Any], *, rev: bool
) -> Cell:
    theirs = _workload(kind, c.workload)
    better = BETTER.get(kind, "higher")
    pct = round(reversed_pct(c.published_pct, better), 2) if rev else c.published_pct
    note = c.note
    if rev:
        note += f"; published as {c.feature} against this: {c.published_pct:+.1f}%, read in reverse"
    return Cell(
        source=c.source,
        section=note,
        machine=c.topology,
        benchmark=kind,
        metric="",
        better=better,
        x_name=x_name,
        x=int(theirs[x_name]),
        config=_config(c.base if rev else c.test),
        value=None,
        tip_value=None,
        published_pct=pct,
        significant=abs(pct) > SIGNIFICANT_PCT,
        uncertain=False,
        differs=_differences(kind, theirs, c.duration_ms, mine, scenario),
        reference=c.source,
        compared_by="scripts/bench simfeatures",
        model_workload=theirs,
        model_duration_ms=c.duration_ms,
    )


def _number(text: str | None) -> float | None:
    try:
        v = float(text or "")
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def build(path: str, lines: Iterable[str]) -> Index:
    """The index of a calibration file's text (raises CsvError when the file has no usable
    header). Tip and no-hint rows are no hint's effect: tip's value becomes its cells' tip_value."""
    rows, skipped = read_rows(lines)

    def table_x(r: Mapping[str, str]) -> tuple[str, str, str, str, str]:
        return (r.get("source") or "", r["section"], r["machine"], r["benchmark"], r["x"])

    tips = {table_x(r): _number(r.get("value")) for r in rows if r["config"] == BASELINE}
    cells: dict[Key, list[Cell]] = {}
    for r in rows:
        key = cell_key(r)
        if key is None or r["config"] == BASELINE or r["config"] in NO_HINT:
            continue
        pct = float(r["pct_vs_baseline"])
        source = r.get("source") or ""
        cell = Cell(
            source=source,
            section=r["section"],
            machine=r["machine"],
            benchmark=r["benchmark"],
            metric=r.get("metric") or "",
            better=r["better"],
            x_name=r.get("x_name") or X_PARAM[key[1]],
            x=key[2],
            config=r["config"],
            value=_number(r.get("value")),
            tip_value=tips.get(table_x(r)),
            published_pct=pct,
            significant=abs(pct) > SIGNIFICANT_PCT,
            uncertain=(r.get("uncertain") or "").strip().lower() == "yes",
            reference=Path(path).name,
        )
        cells.setdefault((key[0], key[1], key[2], tuple(sorted(key[3]))), []).append(cell)
    return Index({k: tuple(v) for k, v in cells.items()}, len(skipped))


@lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int, size: int) -> Index:
    with open(path, newline="", encoding="utf-8") as f:
        return build(path, f)


def load(path: Path) -> Index | None:
    """The index of the file at `path`, read again when it changed; None when there is no file.
    An unreadable or unusable file raises (OSError, UnicodeDecodeError, csv.Error, CsvError)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return _load(str(path), st.st_mtime_ns, st.st_size)


def lookup(path: Path, scenario: Mapping[str, Any]) -> tuple[list[Cell], str | None, Index | None]:
    """The published cells a validated scenario's pair reproduces, why none when there is
    something to say, and the tables' index when they were read: a pair that changes features
    (and no hint) is read against the features' own effects, which are in the repo; a hint's
    pair against the tables at `path` (nothing at all without them). Raises what `load` raises,
    only when the tables are needed."""
    features = match_features(scenario)
    if features is not None:
        return features[0], features[1], None
    index = load(path)
    if index is None:
        return [], None, None
    cells, reason = index.match(scenario)
    return cells, reason, index
