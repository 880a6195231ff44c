"""The API's shapes of a sweep (placemap.sim_sweep): the values a POST /api/sim/jobs `sweep` asks
for, and the result a sweep job reports (`placemap sim --sweep --json` prints the same)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from placemap.sim_sweep import MAX_POINTS, MAX_RUNS
from placemap.sim_sweep import MAX_SEEDS as SWEEP_MAX_SEEDS
from placemap.sim_toggle import MAX_TOGGLES


class SimSweepSpec(BaseModel):
    """One workload parameter's values to run the scenario at (placemap.sim_sweep)."""

    param: str | None = Field(
        default=None,
        description="an integer parameter of the scenario's workload; default the one the published "
        "tables vary (groups, workers, clients, threads, pairs); or topology, to run the scenario on "
        "each of several presets; or toggle, to run it with each of several hints or feature changes "
        "instead of its own (each against the one baseline, which a toggle sweep always runs); a trace "
        "replay (a stored recording) sweeps topology or toggle only, on one seed",
    )
    values: list[int | str] = Field(
        description=f"2 to {MAX_POINTS} different values within the parameter's bounds (integers); "
        f"machines for topology (presets, names of `hosts`); for toggle, 2 to {MAX_TOGGLES} toggles, "
        "each hints and features joined by '+' (fork_affine+wake_affine, SIS_SHORT, NO_SIS_UTIL, "
        "STEAL+steal_node_limit=8), or ['all'] for every toggle on its own; machines and toggles run "
        "in the order given"
    )
    baseline: bool = Field(
        default=False, description="run each point beside its baseline (no hints, default features)"
    )
    seeds: int = Field(
        default=1,
        description=f"with baseline: run each point's pair on this many seeds (1..{SWEEP_MAX_SEEDS}), the "
        "scenario's and those after it",
    )
    calibrated: bool = Field(
        default=False,
        description="run each point as placemap calibrate runs the published cell at that value: the "
        "calibration's workload parameters and run length (for the parameter the tables vary of "
        "hackbench, schbench, tbench and stream)",
    )
    across: list[str] | None = Field(
        default=None,
        description=f"run the whole sweep on each of these machines (2 to {MAX_POINTS}, in the order "
        "given): each machine's result is a panel of its own (a feature table across machines, a "
        "turning point as it moves with the LLC); not with param topology. A sweep makes at most "
        f"{MAX_RUNS} runs: values x seeds x its pair x machines; a machine is a preset, a name of "
        "`hosts`, or (a stored recording's replay) 'recorded', its own host",
    )
    hosts: dict[str, dict[str, Any]] | None = Field(
        default=None,
        description=f"machines that are no preset (up to {MAX_POINTS}), each name's topology object in "
        "the project's topology schema (a recorded host's, a sysfs dump's): a name here is a machine "
        "of `across`, or a value of a topology sweep, and the panel or row it gives is named by it; "
        "every host must be one of the sweep's machines; no name of a preset or 'recorded'",
    )


class SimSweepCell(BaseModel):
    """A published cell the pair at one x reproduces (placemap.sim_published)."""

    published_pct: float = Field(description="percent better than the baseline, as published")
    significant: bool = Field(description="beyond 5%")
    section: str
    config: str
    differs: list[str] = Field(
        description="scenario fields in which this run differs from the model's own run of the cell"
    )


class SimSeedSummary(BaseModel):
    """How a change spreads over seeds (placemap.sim_pair.seed_summary)."""

    seeds: int
    measured: int = Field(description="seeds whose change was measured (both runs complete, baseline not 0)")
    better: int
    worse: int
    same: int
    median_pct: float | None
    min_pct: float | None
    max_pct: float | None
    stable: bool = Field(description="every measured seed points the same way")
    identical: bool = Field(description="every measured seed gave the very same change")
    verdict: str


class SimLlcSpread(BaseModel):
    """Where a run's work sat: the fewest LLCs carrying 90% of its busy CPU time, of how many, and
    the busiest LLC's share."""

    carrying: int
    llcs: int
    busiest_share: float


class SimSweepRow(BaseModel):
    x: int | str = Field(
        description="the parameter's value, the preset a machine sweep ran on, or the toggle"
    )
    value: float = Field(description="the metric")
    complete: bool
    baseline: float | None = Field(description="the baseline's metric, when run")
    baseline_complete: bool | None
    change_pct: float | None = Field(
        description="percent better than the baseline; null when either run is incomplete or the baseline 0"
    )
    direction: Literal["better", "worse", "same"] | None = Field(
        description="the change beyond 5% either way, else same"
    )
    changes: list[float | None] | None = Field(
        description="on several seeds: each seed's change (change_pct is their median)"
    )
    seeds: SimSeedSummary | None = Field(description="on several seeds: how the change spreads over them")
    published: list[SimSweepCell]
    published_pct: float | None = Field(
        description="the published cells' median (several tables can publish one x), null without any"
    )
    llc_spread: SimLlcSpread | None = Field(description="where the run's work sat (its llc_util)")
    baseline_llc_spread: SimLlcSpread | None = Field(description="the same for its baseline")
    cpu_utilization: float
    migrations: int


class SimSweepTurn(BaseModel):
    """Neighbouring x values whose changes point opposite ways beyond 5% (only changes within 5%
    between them)."""

    between: list[int]
    from_: Literal["better", "worse"] = Field(alias="from")
    to: Literal["better", "worse"]
    from_pct: float
    to_pct: float
    seed_decides: bool | None = Field(
        default=None,
        description="on several seeds: the seeds do not all point one way at one end of the turn "
        "(null: one seed)",
    )


class SimSweepOnset(BaseModel):
    x: int
    direction: Literal["better", "worse"]
    pct: float


class SimSweepWays(BaseModel):
    """The values (in sweep order) at which the change is better, worse beyond 5%, and the same."""

    better: list[int | str]
    worse: list[int | str]
    same: list[int | str]


class SimSweepMetric(BaseModel):
    name: str
    better: Literal["lower", "higher"]


class SimSweepResult(BaseModel):
    """A sweep job's result (placemap sim --sweep --json prints the same). A sweep across machines
    reads nothing itself: its rows are empty, and each machine's result is in `panels`."""

    param: str
    values: list[int | str]
    ordered: bool = Field(
        description="the values run along a scale (a workload parameter), so that the change can turn "
        "between neighbours; false for machines and toggles, whose sweeps read no turn or onset"
    )
    calibrated: bool = Field(description="each point ran as placemap calibrate runs its cell")
    baseline: bool
    seeds: int
    metric: SimSweepMetric
    rows: list[SimSweepRow]
    turns: list[SimSweepTurn] = Field(description="where the model's change turns")
    published_turns: list[SimSweepTurn] = Field(
        description="where the published change turns over the same values"
    )
    onset: SimSweepOnset | None = Field(description="the first x whose change passes 5% either way")
    published_onset: SimSweepOnset | None = Field(description="the same for the published change")
    ways: SimSweepWays = Field(description="where the model's change is better, worse and the same")
    published_ways: SimSweepWays = Field(description="the same for the published change, where published")
    published_error: str | None = Field(description="the published tables could not be read")
    events: int = Field(
        description="scheduler events simulated over every distinct run (a toggle sweep's shared "
        "baseline once)"
    )
    topology: str | None = Field(
        default=None, description="in a sweep across machines, the machine this panel's rows ran on"
    )
    across: list[str] = Field(
        default_factory=list, description="the machines a sweep across machines ran on, in order"
    )
    panels: list[SimSweepResult] = Field(
        default_factory=list,
        description="a sweep across machines: each machine's result, in the order of `across`",
    )


class SavedSweep(BaseModel):
    """A finished sweep as stored (GET /api/sim/sweeps/{id}): what a link `?sweep=ID` opens."""

    id: str
    created_at: str
    scenario: dict[str, Any] = Field(description="the scenario the sweep ran, as submitted")
    sweep: SimSweepSpec
    result: SimSweepResult


class SweepSummary(BaseModel):
    """A stored sweep in the list (GET /api/sim/sweeps): enough to name it and open it."""

    id: str
    created_at: str
    topology: str = Field(description="the scenario's preset, or 'host' for an inline topology")
    workload: str = Field(description="the workload's kind")
    hints: list[str]
    features: dict[str, bool | int]
    param: str
    values: list[int | str]
    metric: str
    baseline: bool
    calibrated: bool
    across: list[str] = Field(description="the machines a sweep across machines ran on")


class SweepList(BaseModel):
    sweeps: list[SweepSummary]
