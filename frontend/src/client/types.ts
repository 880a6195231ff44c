/**
 * Named aliases over the generated OpenAPI types (src/client/api.ts, from scripts/gen): the
 * shapes of docs/api.md that the rest of the frontend imports. No hand-written mirrors.
 */
import type { components } from "./api";

type S = components["schemas"];

export type Topology = S["Topology"];
export type TopologyCpu = S["Cpu"];
export type TopologyLlc = S["Llc"];
export type TopologyNumaNode = S["NumaNode"];
export type Recording = S["Recording"];
export type RecordingStatus = Recording["status"];
export type SimRunMetric = S["SimRunMetric"];
export type ImportSummary = S["ImportSummary"];
export type SkipCount = S["SkipCount"];
export type ChunkInfo = S["ChunkInfo"];
export type PlacementState = S["PlacementState"];
export type TaskStateName = S["TaskState"]["state"];
export type Overview = S["Overview"];
export type Metrics = S["Metrics"];
export type TaskInfo = S["TaskInfo"];
export type TaskPath = S["TaskPath"];
export type TaskPlacement = S["PathPlacement"];
export type MigrationLevel = keyof S["LevelCounts"];
export type MigrationCause = keyof S["CauseCounts"];
export type ApiErrorBody = S["ErrorResponse"];
export type SimOptions = S["SimOptions"];
export type SimJob = S["SimJob"];
export type SimSweepSpec = S["SimSweepSpec"];
export type SimSweepResult = S["SimSweepResult"];
export type SimSweepRow = S["SimSweepRow"];
export type SimSweepTurn = S["SimSweepTurn"];
export type SimSweepOnset = S["SimSweepOnset"];
export type SimSweepWays = S["SimSweepWays"];
export type SavedSweep = S["SavedSweep"];
export type SweepSummary = S["SweepSummary"];
export type SweepList = S["SweepList"];
export type SimLlcSpread = S["SimLlcSpread"];
export type SimJobCreated = S["SimJobCreated"];
export type WorkloadParam = S["WorkloadParam"];
export type SimMetric = S["SimMetric"];
export type SimLatency = S["SimLatency"];
export type SimLlcUtil = S["SimLlcUtil"];
export type SimDecisions = S["SimDecisions"];
export type WakerCounts = S["WakerCounts"];
export type LlcPairs = S["LlcPairs"];
export type LlcPairTasks = S["LlcPairTasks"];
export type SimPublished = S["SimPublished"];
export type PublishedCell = S["PublishedCell"];
export type SchedDomains = S["SchedDomains"];
