/**
 * Typed fetch helpers over the docs/api.md routes. Errors come back as ApiError with the
 * backend's {detail: {code, message}} when it sent one. The upload uses XMLHttpRequest because
 * fetch has no upload progress.
 */
import type {
  ChunkInfo,
  LlcPairTasks,
  SavedSweep,
  SweepList,
  Metrics,
  Overview,
  PlacementState,
  Recording,
  SchedDomains,
  SimDecisions,
  SimJob,
  SimJobCreated,
  SimOptions,
  SimPublished,
  SimSweepSpec,
  TaskInfo,
  TaskPath,
  Topology,
} from "./types";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const BASE = "/api";

async function errorFrom(res: Response): Promise<ApiError> {
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { detail?: { code?: string; message?: string } | string };
    if (typeof body.detail === "string") message = body.detail;
    else if (body.detail) {
      code = body.detail.code ?? code;
      message = body.detail.message ?? message;
    }
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(res.status, code, message);
}

async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(BASE + path, { signal: signal ?? null, headers: { Accept: "application/json" } });
  if (!res.ok) throw await errorFrom(res);
  return (await res.json()) as T;
}

const enc = encodeURIComponent;

/** CPU lanes' bytes and the window [t0, t1] ns they answer. */
export interface LanesAnswer {
  bytes: Uint8Array;
  t0: number;
  t1: number;
}

export const api = {
  listRecordings: (signal?: AbortSignal) => getJson<Recording[]>("/recordings", signal),
  recording: (id: string, signal?: AbortSignal) => getJson<Recording>(`/recordings/${enc(id)}`, signal),
  topology: (id: string, signal?: AbortSignal) => getJson<Topology>(`/recordings/${enc(id)}/topology`, signal),
  /** the recording's chunks; with `t0`, those that end at or after it (a live one's newest) */
  chunks: (id: string, signal?: AbortSignal, t0?: number) =>
    getJson<ChunkInfo[]>(`/recordings/${enc(id)}/chunks${t0 === undefined ? "" : `?t0_ns=${String(Math.floor(t0))}`}`, signal),
  state: (id: string, tNs: number, signal?: AbortSignal) =>
    getJson<PlacementState>(`/recordings/${enc(id)}/state?t_ns=${Math.round(tNs)}`, signal),
  overview: (id: string, bins: number, signal?: AbortSignal) =>
    getJson<Overview>(`/recordings/${enc(id)}/overview?bins=${Math.round(bins)}`, signal),
  metrics: (id: string, signal?: AbortSignal) => getJson<Metrics>(`/recordings/${enc(id)}/metrics`, signal),
  /** where a simulated recording's whole scenario downloads from (scenario.json) */
  scenarioUrl: (id: string) => `${BASE}/recordings/${enc(id)}/scenario`,
  /** where a recording's events (those of [t0, t1] ns when given) download from as ftrace text (any
   * source; the server names the file) */
  traceTextUrl: (id: string, t0?: number, t1?: number) =>
    `${BASE}/recordings/${enc(id)}/trace.txt${t0 === undefined || t1 === undefined ? "" : `?t0_ns=${String(t0)}&t1_ns=${String(t1)}`}`,
  /** the sched domains the simulator builds for the recording's topology, for one CPU */
  domains: (id: string, cpu: number, signal?: AbortSignal) =>
    getJson<SchedDomains>(`/recordings/${enc(id)}/domains?cpu=${Math.max(0, Math.floor(cpu))}`, signal),
  /** a simulated run's decisions by reason; 404 decisions_missing for a captured trace */
  decisions: (id: string, signal?: AbortSignal) => getJson<SimDecisions>(`/recordings/${enc(id)}/decisions`, signal),
  /** the tasks woken in LLC `llc` by a waker in LLC `wakerLlc` (a cell of the metrics' llc_pairs) */
  llcPairTasks: (id: string, wakerLlc: number, llc: number, limit: number, signal?: AbortSignal) =>
    getJson<LlcPairTasks>(`/recordings/${enc(id)}/llc-pairs/${wakerLlc}/${llc}/tasks?limit=${limit}`, signal),
  /** tasks by pid or comm: busiest first, or (order "cross_llc") most often woken from another LLC first */
  tasks: (id: string, q: string, limit: number, signal?: AbortSignal, order: "events" | "cross_llc" = "events") =>
    getJson<TaskInfo[]>(`/recordings/${enc(id)}/tasks?q=${enc(q)}&limit=${limit}${order === "events" ? "" : `&order=${order}`}`, signal),
  taskPath: (id: string, pid: number, signal?: AbortSignal) =>
    getJson<TaskPath>(`/recordings/${enc(id)}/tasks/${pid}/path`, signal),
  simOptions: (signal?: AbortSignal) => getJson<SimOptions>("/sim/options", signal),
  simJob: (id: string, signal?: AbortSignal) => getJson<SimJob>(`/sim/jobs/${enc(id)}`, signal),
  /** a finished sweep as stored (what ?sweep=ID opens); 404 sweep_not_found */
  savedSweep: (id: string, signal?: AbortSignal) => getJson<SavedSweep>(`/sim/sweeps/${enc(id)}`, signal),
  /** the stored sweeps, newest first */
  sweeps: (limit: number, signal?: AbortSignal) => getJson<SweepList>(`/sim/sweeps?limit=${Math.max(1, Math.floor(limit))}`, signal),
  /** DELETE a queued or running simulator job (a finished one stays as it is). */
  async cancelSimJob(id: string): Promise<SimJob> {
    const res = await fetch(`${BASE}/sim/jobs/${enc(id)}`, { method: "DELETE", headers: { Accept: "application/json" } });
    if (!res.ok) throw await errorFrom(res);
    return (await res.json()) as SimJob;
  },
  /** POST a scenario; with `sweep`, one unsaved job of kind sweep (its result in sweep_result) */
  async submitSimJob(scenario: Record<string, unknown>, save: boolean, sweep?: SimSweepSpec): Promise<SimJobCreated> {
    const res = await fetch(`${BASE}/sim/jobs`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(sweep ? { scenario, save, sweep } : { scenario, save }),
    });
    if (!res.ok) throw await errorFrom(res);
    return (await res.json()) as SimJobCreated;
  },
  /** a job that reruns a simulated run saved without its placement reasons and stores them */
  async workOutReasons(recId: string): Promise<SimJobCreated> {
    const res = await fetch(`${BASE}/recordings/${enc(recId)}/reasons`, { method: "POST", headers: { Accept: "application/json" } });
    if (!res.ok) throw await errorFrom(res);
    return (await res.json()) as SimJobCreated;
  },
  /** the published cells (the calibration file's) a scenario's pair can be read against */
  async simPublished(scenario: Record<string, unknown>, signal?: AbortSignal): Promise<SimPublished> {
    const res = await fetch(`${BASE}/sim/published`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ scenario }),
      signal: signal ?? null,
    });
    if (!res.ok) throw await errorFrom(res);
    return (await res.json()) as SimPublished;
  },
  /** DELETE a stored sweep (its link then opens nothing); one already gone is no error */
  async deleteSweep(id: string): Promise<void> {
    const res = await fetch(`${BASE}/sim/sweeps/${enc(id)}`, { method: "DELETE" });
    if (!res.ok && res.status !== 404) throw await errorFrom(res);
  },
  /** POST a topology (a host's `placemap-collect topology --json`): its id, the same for the same machine */
  async createTopology(topology: unknown): Promise<{ id: string }> {
    const res = await fetch(`${BASE}/topologies`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(topology),
    });
    if (!res.ok) throw await errorFrom(res);
    return (await res.json()) as { id: string };
  },
  /** a stored topology as the server keeps it (GET /api/topologies/{id}) */
  storedTopology: (id: string, signal?: AbortSignal) => getJson<Topology>(`/topologies/${enc(id)}`, signal),
  async deleteRecording(id: string): Promise<void> {
    const res = await fetch(`${BASE}/recordings/${enc(id)}`, { method: "DELETE" });
    if (!res.ok && res.status !== 404) throw await errorFrom(res);
  },
  /** CPU lanes over [t0, t1] ns as Arrow IPC bytes: spans (lanes.arrow, decodeLanes), or with
   * `parts` summed in that many parts (lanes_busy.arrow, decodeLaneBusy; the browser undoes its
   * zstd), with `pid` the share that task ran of each; with the window the server answered
   * (clipped to the recording, or to a live one's stored chunks). ApiError window_too_wide past
   * `limit` context switches. */
  async lanes(id: string, t0: number, t1: number, opts: { limit: number; parts?: number; pid?: number | null }, signal?: AbortSignal): Promise<LanesAnswer> {
    const from = Math.floor(t0);
    const to = Math.ceil(t1);
    const mine = opts.parts !== undefined && opts.pid != null && opts.pid > 0 ? `&pid=${String(opts.pid)}` : "";
    const parts = opts.parts === undefined ? "" : `&parts=${String(opts.parts)}${mine}`;
    const route = opts.parts === undefined ? "lanes.arrow" : "lanes_busy.arrow";
    const res = await fetch(`${BASE}/recordings/${enc(id)}/${route}?t0_ns=${String(from)}&t1_ns=${String(to)}&limit=${String(opts.limit)}${parts}`, { signal: signal ?? null });
    if (!res.ok) throw await errorFrom(res);
    const header = (name: string, dflt: number): number => {
      const v = Number(res.headers.get(name) ?? NaN);
      return Number.isSafeInteger(v) ? v : dflt;
    };
    return { bytes: new Uint8Array(await res.arrayBuffer()), t0: header("x-lanes-t0-ns", from), t1: header("x-lanes-t1-ns", to) };
  },
  async chunkBytes(id: string, seq: number, signal?: AbortSignal): Promise<Uint8Array> {
    // the browser negotiates Content-Encoding (zstd/gzip) and decodes transparently
    const res = await fetch(`${BASE}/recordings/${enc(id)}/chunks/${seq}`, { signal: signal ?? null });
    if (!res.ok) throw await errorFrom(res);
    return new Uint8Array(await res.arrayBuffer());
  },
};

export interface UploadHandle {
  promise: Promise<Recording>;
  abort: () => void;
}

/** POST the raw file bytes (not multipart) with upload progress 0..1. */
export function uploadRecording(
  file: Blob,
  name: string,
  onProgress: (fraction: number) => void,
  opts: { topologyId?: string; preset?: string; format?: string } = {},
): UploadHandle {
  const xhr = new XMLHttpRequest();
  const params = new URLSearchParams({ name, format: opts.format ?? "auto" });
  if (opts.topologyId) params.set("topology_id", opts.topologyId);
  if (opts.preset) params.set("preset", opts.preset);
  const promise = new Promise<Recording>((resolve, reject) => {
    xhr.open("POST", `${BASE}/recordings?${params.toString()}`);
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText) as unknown;
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as Recording);
      } else {
        const d = (body as { detail?: { code?: string; message?: string } } | null)?.detail;
        reject(new ApiError(xhr.status, d?.code ?? `http_${xhr.status}`, d?.message ?? (xhr.statusText || "upload failed")));
      }
    };
    xhr.onerror = () => { reject(new ApiError(0, "network_error", "upload failed: network error")); };
    xhr.onabort = () => { reject(new ApiError(0, "aborted", "upload cancelled")); };
    xhr.send(file);
  });
  return { promise, abort: () => { xhr.abort(); } };
}
