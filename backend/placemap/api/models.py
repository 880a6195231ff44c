"""Response models of the HTTP API (docs/api.md), layered so the OpenAPI document is complete.

Recording, Topology and ImportSummary come from the JSON Schemas (placemap.schema.models).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

TaskStateName = Literal["running", "runnable", "sleeping", "new", "dead"]
LevelName = Literal["smt", "llc", "node", "cross_node"]
CauseName = Literal["wakeup", "fork", "balance"]
KindName = Literal[
    "wakeup_new", "waking", "wakeup", "migrate", "switch", "fork", "exit", "exec", "llc_util", "lost"
]


class ErrorDetail(BaseModel):
    code: str = Field(description="snake_case error code, e.g. upload_too_large, recording_not_found.")
    message: str = Field(description="What went wrong and what to do about it.")


class ErrorResponse(BaseModel):
    detail: ErrorDetail


class Health(BaseModel):
    ok: bool
    version: str


class Created(BaseModel):
    id: str


class ChunkInfo(BaseModel):
    seq: int
    t_start_ns: int
    t_end_ns: int
    first_row: int = Field(description="Index of the chunk's first event in the recording.")
    rows: int
    bytes: int = Field(description="Compressed (zstd) size as stored and sent.")


class CpuState(BaseModel):
    cpu: int
    running_pid: int | None = Field(description="Task running on the CPU; 0 idle; null while unknown.")
    running_comm: str | None
    runnable: int = Field(description="Tasks runnable or running on this CPU.")


class TaskState(BaseModel):
    pid: int
    comm: str
    cpu: int | None = Field(description="The CPU the task is on or last ran on; null while unknown.")
    state: TaskStateName


class LlcState(BaseModel):
    llc: int
    tasks: int = Field(description="Live (not dead) tasks whose CPU belongs to this LLC.")
    runnable: int = Field(description="Of those, runnable or running.")
    running: int


class PlacementState(BaseModel):
    t_ns: int
    event_index: int = Field(description="Number of events with ts_ns <= t_ns (the state is after them).")
    cpus: list[CpuState]
    tasks: list[TaskState] = Field(
        description="Tasks named by some event so far; dead ones only with include_dead=true."
    )
    dead_tasks: int = Field(
        description="Dead tasks left out of `tasks` (0 with include_dead=true, where they are listed)."
    )
    llcs: list[LlcState]


class LevelSeries(BaseModel):
    smt: list[float]
    llc: list[float]
    node: list[float]
    cross_node: list[float]


class WakeLevelSeries(BaseModel):
    """Wakeups per overview bin by where they woke against the CPU the task last ran on, as
    Metrics.wakeups counts them (its by_level, same_cpu, and wakeups at an unknown level)."""

    smt: list[float]
    llc: list[float]
    node: list[float]
    cross_node: list[float]
    unknown: list[float]
    same_cpu: list[float]


class WakerSeries(BaseModel):
    """Wakeups per overview bin by where their waker ran: the classes of WakerCounts, bin by bin
    (summed over all bins, WakerCounts)."""

    shared_llc: list[float]
    cross_llc: list[float]
    to_waker_llc: list[float]
    to_prev_llc: list[float]
    elsewhere: list[float]
    on_waker_cpu: list[float]
    still_running: list[float]
    unknown: list[float]


class Overview(BaseModel):
    t_start_ns: int
    t_end_ns: int
    bin_ns: int
    bins: int
    events: list[float]
    by_kind: dict[str, list[float]]
    migrations_by_level: LevelSeries
    lost: list[float]
    wakeups_by_level: WakeLevelSeries | None = Field(
        default=None, description="Null only where the recording's stored events could not be read again."
    )
    wakeups_by_waker: WakerSeries | None = Field(
        default=None, description="Null only where the recording's stored events could not be read again."
    )


class LevelCounts(BaseModel):
    smt: int
    llc: int
    node: int
    cross_node: int


class CauseCounts(BaseModel):
    wakeup: int
    fork: int
    balance: int


class LevelCauseCounts(BaseModel):
    smt: CauseCounts
    llc: CauseCounts
    node: CauseCounts
    cross_node: CauseCounts


class MigrationMetrics(BaseModel):
    total: int = Field(description="All migrations, including any between CPUs the topology does not know.")
    by_level: LevelCounts
    by_cause: CauseCounts
    by_level_cause: LevelCauseCounts


class WakerCounts(BaseModel):
    """Wakeups by where their waker ran: sched_waking's CPU, the one select_task_rq_fair() runs on
    (an interrupt's CPU for a wakeup from an interrupt), against the wakee's prev CPU (waking's
    target_cpu) and the CPU it woke on (wakeup's target_cpu). shared_llc + cross_llc +
    still_running + unknown = the wakeups' total."""

    shared_llc: int = Field(description="The waker's CPU shares an LLC with the wakee's prev CPU.")
    cross_llc: int = Field(
        description="It does not: the wakeups where the wakeup path chooses between the waker's LLC and "
        "prev's (wake_affine() for a fair task; the ones the wake_affine and wake_hold hints change)."
    )
    to_waker_llc: int = Field(description="Of cross_llc: woke in the waker's LLC (pulled to the waker).")
    to_prev_llc: int = Field(description="Of cross_llc: woke in prev's LLC (kept by the wakee's cache).")
    elsewhere: int = Field(description="Of cross_llc: woke in neither LLC.")
    on_waker_cpu: int = Field(description="Of shared_llc and cross_llc: woke on the waker's own CPU.")
    still_running: int = Field(
        description="Woken while still on its CPU (the switch that took it off came later) or "
        "preempted on its runqueue, and woke there: no choice the trace can show (the kernel found it "
        "still queued, ttwu_runnable(), or queued the wakeup on the CPU it was leaving)."
    )
    unknown: int = Field(
        description="No sched_waking before the wakeup (the trace did not record it, or a ring-buffer "
        "loss came between them), or a CPU the topology does not describe."
    )


class LlcPairs(BaseModel):
    """Wakeups by LLC pair (replay/llc_pairs.py): those of by_waker's shared_llc and cross_llc, so
    the pairs' wakeups sum to them."""

    llcs: int = Field(description="The topology's LLCs (1 for a trace alone).")
    pairs: list[list[int]] = Field(
        description="[waker's LLC, LLC woken in, wakeups] for each pair with wakeups (LLC ids are "
        "indices into the topology's llcs), by waker's LLC, then wakee's."
    )


class WakeupMetrics(BaseModel):
    total: int
    same_cpu: int = Field(description="Woke on the CPU it last ran on (waking's target_cpu).")
    by_level: LevelCounts
    by_waker: WakerCounts | None = Field(
        default=None,
        description="By where the waker ran; null for a recording stored before they were counted.",
    )
    llc_pairs: LlcPairs | None = Field(
        default=None,
        description="By the LLC their waker ran in and the LLC they woke in; null where a stored "
        "chunk could not be read for a recording stored before they were counted.",
    )


class SchedDomain(BaseModel):
    """One sched domain of a CPU as the simulator builds it (placemap.sim.domains)."""

    name: str = Field(description="SMT, MC, PKG, NODE or NUMA")
    span: list[int]
    groups: list[list[int]] = Field(description="Each group's CPUs, the CPU's own group first.")
    flags: list[str]
    imbalance_pct: int
    cache_nice_tries: int
    min_interval_ms: int
    max_interval_ms: int
    busy_factor: int
    imb_numa_nr: int = Field(description="The NUMA imbalance allowance (tasks).")
    numa_distance: int = Field(description="0 below the NUMA levels.")


class SchedDomains(BaseModel):
    machine: str
    cpu: int
    dmesg: str = Field(
        description="The domains as the kernel prints its own at boot with sched_verbose "
        "(sched_domain_debug()), to put beside the real machine's dmesg."
    )
    params: str = Field(description="Each domain's parameters, one line per debugfs domain directory.")
    domains: list[SchedDomain]


class WakeupLatency(BaseModel):
    """Run-queue delay after a wakeup: from a task's sched_wakeup (or sched_wakeup_new) to the switch
    that next runs it, over every such pair of the recording (a wakeup of a task still running is
    not one). Percentiles are histogram buckets' lower bounds, at most 1/16 below the delay."""

    samples: int
    p50_ns: int
    p90_ns: int
    p99_ns: int
    max_ns: int = Field(description="The largest delay, exact.")


class LlcSeries(BaseModel):
    llc: int
    util: list[float] = Field(description="Busy fraction 0..1 of the LLC's CPUs per bin.")


class LlcUtil(BaseModel):
    bin_ns: int
    t_start_ns: int
    series: list[LlcSeries]


class Metrics(BaseModel):
    events_by_kind: dict[str, int]
    migrations: MigrationMetrics
    wakeups: WakeupMetrics
    lost_events: int
    skipped_lines: int
    llc_util: LlcUtil | None
    per_cpu_busy: list[float] | None = Field(description="Busy fraction of each CPU over the recording.")
    wakeup_latency: WakeupLatency | None = Field(
        default=None,
        description="Run-queue delay after a wakeup; null without a wakeup followed by its switch-in "
        "(a recording stored before it was measured gets it from its chunks when its metrics are read).",
    )
    wakeup_latency_unread: str | None = Field(
        default=None,
        description="Why wakeup_latency is null for a recording stored before it was measured: the "
        "stored chunk that could not be read for it (null otherwise).",
    )


class TaskInfo(BaseModel):
    pid: int
    comm: str
    events: int
    migrations: int
    first_ts_ns: int
    last_ts_ns: int
    wakeups: int | None = Field(
        default=None,
        description="Its wakeups (null where a stored chunk kept a recording stored before they were "
        "counted per task from being counted at its first listing).",
    )
    cross_llc: int | None = Field(
        default=None,
        description="Of them, those whose waker ran in another LLC than the CPU it last ran on "
        "(Metrics.wakeups.by_waker.cross_llc, for this task).",
    )
    pulled: int | None = Field(default=None, description="Of cross_llc, those that woke in the waker's LLC.")


class PlacementReason(BaseModel):
    """The simulator's reason for one placement, as its decision counts name it."""

    path: str = Field(
        description="a wakeup's wake_affine step (or hint, wake_wide...); a fork's find_idlest_group "
        "outcome at each domain"
    )
    pick: str = Field(description="the CPU picked: select_idle_sibling's pick, or the fork's in its group")


class PathPlacement(BaseModel):
    ts_ns: int
    cpu: int
    llc: int | None
    numa_node: int | None
    kind: KindName
    level: LevelName | None = Field(description="Level of the move; null when the CPU did not change.")
    cause: CauseName | None
    waker_cpu: int | None = Field(
        default=None,
        description="A wakeup's (and its migrate's): the CPU its sched_waking ran on, the waker's; "
        "null for other placements, a wakeup without sched_waking, and a recording stored before it "
        "was kept where a stored chunk kept its placements from being rebuilt at this first read.",
    )
    waker_pid: int | None = Field(
        default=None,
        description="The task that ran on waker_cpu at the sched_waking (the waker, or the task an "
        "interrupt found running; 0: an interrupt on an idle CPU).",
    )
    waker_comm: str | None = Field(
        default=None, description="waker_pid's name in the recording (null for 0)."
    )
    waker_class: (
        Literal["shared_llc", "to_waker_llc", "to_prev_llc", "elsewhere", "still_running", "unknown"] | None
    ) = Field(
        default=None,
        description="A wakeup's class by where its waker ran, as Metrics.wakeups.by_waker counts it "
        "(on the waker's very CPU: waker_cpu = cpu); null for other placements, and for a recording "
        "stored before it was kept where a stored chunk kept its placements from being rebuilt.",
    )
    reason: PlacementReason | None = Field(
        default=None,
        description="why the simulator put the task there (a simulated run's wakeups, forks and "
        "balancing moves; a wakeup's or fork's own migrate has it on the wakeup); null for a "
        "captured trace, whose kernel does not say why",
    )


class LlcPairTask(BaseModel):
    pid: int
    comm: str
    wakeups: int = Field(description="Its wakeups in the pair's LLC from a waker in the pair's other.")


class LlcPairTasks(BaseModel):
    """The tasks behind one cell of Metrics.wakeups.llc_pairs (replay/pair_tasks.py)."""

    waker_llc: int
    llc: int
    wakeups: int = Field(description="The cell's wakeups: all the tasks' (the list may be cut at limit).")
    tasks: list[LlcPairTask] = Field(description="Most often woken first, then by pid.")


class TaskPath(BaseModel):
    pid: int
    comm: str
    placements: list[PathPlacement]


class WakeupReason(BaseModel):
    path: str = Field(description="the wake_affine step (or the hint, wake_wide, prev outside the domains)")
    pick: str = Field(description="select_idle_sibling's pick")
    count: int


class ForkReason(BaseModel):
    path: str = Field(description="find_idlest_group's outcome at each domain, top down")
    pick: str = Field(description="the CPU picked in the chosen group")
    count: int


class BalanceReason(BaseModel):
    kind: Literal["periodic", "newidle", "steal"]
    domain: str = Field(description="the sched domain (SMT, MC, PKG, NUMA...); empty: no domain walked")
    outcome: str
    count: int


class SimDecisions(BaseModel):
    """Every placement decision of the run counted by its reason, most frequent first."""

    wakeup: list[WakeupReason]
    fork: list[ForkReason]
    balance: list[BalanceReason]
