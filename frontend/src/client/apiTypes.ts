/**
 * Hand-written mirror of docs/api.md and schemas/jsonschema (Topology, Recording, ImportSummary).
 * Temporary: replaced by the generated src/client/{schema,api}.ts once scripts/gen emits them.
 * Times are trace ns as JSON numbers (they fit in 2^53, see docs/api.md).
 */

export interface TopologyCpu {
  cpu: number;
  online: boolean;
  core: number | null;
  core_id?: number | null;
  llc: number | null;
  numa_node: number | null;
  package: number | null;
  die?: number | null;
  smt_siblings: number[];
  capacity?: number | null;
}

export interface TopologyLlc {
  id: number;
  sysfs_id?: number | null;
  level?: number | null;
  size_kb?: number | null;
  cpus: number[];
  numa_nodes: number[];
  package?: number | null;
}

export interface TopologyNumaNode {
  id: number;
  cpus: number[];
  memory_kb?: number | null;
}

export interface Topology {
  machine: string;
  source: "sysfs" | "inferred" | "preset" | "manual";
  kernel_release?: string | null;
  cpus: TopologyCpu[];
  llcs: TopologyLlc[];
  numa_nodes: TopologyNumaNode[];
  node_distances: number[][];
}

export interface SkipCount {
  count: number;
  first_lines: number[];
}

export interface ImportSummary {
  format: string;
  files: string[];
  lines_total: number;
  events_total: number;
  events_by_kind: Record<string, number>;
  skipped: Record<string, SkipCount>;
  skipped_total: number;
  t_start_ns: number | null;
  t_end_ns: number | null;
  cpus_seen: number[];
  nr_cpus?: number | null;
  lost_events: number;
  out_of_order: number;
  comm_escaped: number;
  trace_clock?: string | null;
  warnings?: string[];
}

export type RecordingStatus = "importing" | "ready" | "live" | "failed";

export interface Recording {
  id: string;
  name: string;
  source: "imported" | "live" | "simulated";
  status: RecordingStatus;
  created_at: string;
  host?: string | null;
  kernel_release?: string | null;
  format?: string | null;
  event_count: number;
  t_start_ns: number | null;
  t_end_ns: number | null;
  cpus_seen: number[];
  lost_events: number;
  skipped_lines?: number;
  events_by_kind: Record<string, number>;
  bytes_stored: number;
  chunk_count: number;
  topology_source?: string | null;
  import_summary?: ImportSummary | null;
  error?: string | null;
  progress?: number | null;
  topology_id?: string | null;
}

export interface ChunkInfo {
  seq: number;
  t_start_ns: number;
  t_end_ns: number;
  first_row: number;
  rows: number;
  bytes: number;
}

export type TaskStateName = "running" | "runnable" | "sleeping" | "new" | "dead";

export interface PlacementState {
  t_ns: number;
  event_index: number;
  cpus: { cpu: number; running_pid: number; running_comm: string | null; runnable: number }[];
  tasks: { pid: number; comm: string; cpu: number | null; state: TaskStateName }[];
  llcs: { llc: number; tasks: number; runnable: number; running: number }[];
}

export type MigrationLevel = "smt" | "llc" | "node" | "cross_node";
export type MigrationCause = "wakeup" | "fork" | "balance";

export interface Overview {
  t_start_ns: number;
  t_end_ns: number;
  bin_ns: number;
  bins: number;
  events: number[];
  by_kind: Record<string, number[]>;
  migrations_by_level: Record<MigrationLevel, number[]>;
  lost: number[];
}

export interface Metrics {
  events_by_kind: Record<string, number>;
  migrations: {
    total: number;
    by_level: Record<MigrationLevel, number>;
    by_cause: Record<MigrationCause, number>;
    by_level_cause: Record<string, Record<string, number>>;
  };
  wakeups: { total: number; same_cpu: number; by_level: Record<string, number> };
  lost_events: number;
  skipped_lines: number;
  llc_util: { bin_ns: number; t_start_ns: number; series: { llc: number; util: number[] }[] } | null;
  per_cpu_busy: number[] | null;
}

export interface TaskInfo {
  pid: number;
  comm: string;
  events: number;
  migrations: number;
  first_ts_ns: number;
  last_ts_ns: number;
}

export interface TaskPlacement {
  ts_ns: number;
  cpu: number;
  llc: number | null;
  numa_node: number | null;
  kind: string;
  level: MigrationLevel | null;
  cause: MigrationCause | null;
}

export interface TaskPath {
  pid: number;
  comm: string;
  placements: TaskPlacement[];
}

export interface ApiErrorBody {
  detail: { code: string; message: string };
}
