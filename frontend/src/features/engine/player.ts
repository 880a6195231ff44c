/**
 * The Player: owns one open recording's playback outside React. It loads the recording's
 * topology, a server keyframe (GET state) and Arrow chunks (LRU), applies events forward with the
 * ReplayState, animates migrations, and draws the grid canvas from a requestAnimationFrame loop
 * (one draw per frame, no React re-render per frame). React subscribes to throttled snapshots for
 * controls and the text view; per-frame DOM bits (playhead line, clock) use onFrame hooks.
 * Measured fps goes to window.__placemapStats for the benchmark.
 *
 * Live mode (a recording still being collected): the viewer hub's batches join the chunk walk as
 * chunks with negative seqs (features/live/liveBuffer.ts), so following the head, scrubbing back and
 * "jump to live" all use the same replay as a stored recording; only the source of chunks differs.
 */
import { api } from "../../client/http";
import { ChunkLRU } from "../../client/chunkCache";
import type { ChunkInfo, Metrics, Overview, PlacementState, Recording, Topology } from "../../client/types";
import { upperBound, type EventColumns } from "../../viz/columns";
import { ReplayState, type MigrationEvent } from "../../viz/replay";
import { layoutGrid, type GridLayout } from "../../viz/layout";
import { classifyMigration, cpuIndex, levelColor, processColor, processKey, type CpuTopoIndex } from "../../viz/colors";
import { nextMigrationBin } from "../../viz/overview";
import { Kind } from "../../client/events";
import { drawFrame, type Flight } from "../grid/renderer";
import { clampSpeed } from "../urlState";
import { isLiveSeq, LiveBuffer, segmentInfo } from "../live/liveBuffer";
import { LiveFeed, liveUrl, type LiveConn, type LiveStatus } from "../live/liveFeed";
import { TaskTrail } from "../live/liveTrail";
import { LiveDecoder, startDecodeWorker, type DecodeMode } from "../live/liveDecoder";

export interface PlacemapStats {
  recId: string | null;
  fps: number;
  frames: number;
  /** ms from navigation start to the first drawn frame of the open recording */
  firstFrameMs: number | null;
  /** mean ms spent inside the frame callback over the last second */
  frameWorkMs: number;
  /** of which: applying events / drawing the canvas (mean ms over the last 60 frames) */
  applyMs: number;
  drawMs: number;
  eventsApplied: number;
  chunksResident: number;
  playing: boolean;
  speed: number;
  playheadNs: number;
  /**
   * live view: hub frames received, their rows, main-thread ms spent decoding them (posting to and
   * receiving from the decode worker, or the whole decode without one), the worker's ms, where
   * frames are decoded, newest event time received
   */
  liveFrames?: number;
  liveRows?: number;
  liveDecodeMs?: number;
  liveWorkerMs?: number;
  liveDecodeMode?: DecodeMode;
  liveHeadNs?: number;
  liveFilled?: number;
}

declare global {
  interface Window {
    __placemapStats?: PlacemapStats;
  }
}

export type PlayerStatus = "loading" | "ready" | "error";

/** What a live view shows besides the playback state. */
export interface LiveSnapshot {
  /** live = following the head; paused = frozen or scrubbed back (still buffering); ended = the run is over */
  mode: "live" | "paused" | "ended";
  conn: LiveConn;
  connDetail: string | null;
  retryInMs: number | null;
  /** events and lost events of the recording so far (the hub's last status) */
  events: number;
  lost: number;
  /** frames the hub dropped for this viewer, and connection drops: both leave holes in the feed */
  skipped: number;
  drops: number;
  /** newest event time received */
  head: number;
  /** earliest time the in-memory buffer can rebuild (null before the first keyframe) */
  bufferStart: number | null;
  bufferedRows: number;
}

export interface PlayerSnapshot {
  status: PlayerStatus;
  error: string | null;
  playhead: number;
  playing: boolean;
  speed: number;
  buffering: boolean;
  selected: number | null;
  version: number;
  /** null unless the recording is open in live mode */
  live: LiveSnapshot | null;
}

const FLIGHT_MS = 650;
/** Concurrent flights drawn; beyond this, moves still apply but are not animated (legibility). */
const MAX_FLIGHTS = 120;
const LRU_ROWS = 1_600_000;
/** Beyond this many rows ahead, a seek asks the server for a keyframe instead of replaying. */
const FORWARD_REPLAY_LIMIT = 250_000;
/** Rows of hub batches kept in memory for scrubbing back in a live view (older ones fold into its origin). */
const LIVE_ROWS = 1_000_000;
/**
 * Following eases the playhead toward the head with this time constant (ms) instead of jumping
 * with each hub batch (~16k rows): a batch's migrations animate in turn and the LLC heat steps
 * through its 10 Hz llc_util samples, at the cost of about one batch interval of extra latency.
 */
const FOLLOW_TAU_MS = 250;
/** Further behind than this (trace ns), following jumps instead of easing. */
const FOLLOW_MAX_LAG_NS = 3e9;
/** Skipped hub frames within this many ms share one resync keyframe. */
const RESYNC_COALESCE_MS = 1000;

interface Boot {
  recId: string;
  t: number | null;
  rec: Promise<Recording>;
  topo: Promise<Topology>;
  chunks: Promise<ChunkInfo[]>;
  state: Promise<PlacementState>;
}
let boot: Boot | null = null;

/**
 * Start the first frame's requests before React renders (called from main.tsx with the URL's
 * view); the Player for that recording picks them up.
 */
export function prefetchFirstFrame(recId: string, t: number | null): void {
  const rec = api.recording(recId);
  const state = t !== null ? api.state(recId, t) : rec.then((r) => api.state(recId, r.t_start_ns ?? 0));
  boot = { recId, t, rec, topo: api.topology(recId), chunks: api.chunks(recId), state };
  // unhandled rejections are reported by the Player when it awaits them
  for (const p of [boot.rec, boot.topo, boot.chunks, boot.state]) p.catch(() => undefined);
}

function mean(xs: readonly number[]): number {
  return xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100 : 0;
}

export class Player {
  readonly recId: string;
  rec: Recording | null = null;
  topo: Topology | null = null;
  idx: CpuTopoIndex | null = null;
  chunks: ChunkInfo[] = [];
  overview: Overview | null = null;
  /** GET overview failed (the timeline and the counts up to the playhead say so). */
  overviewFailed = false;
  metrics: Metrics | null = null;
  /** GET metrics failed (the LLC heat and the comparison's counts go without) */
  metricsFailed = false;
  layout: GridLayout | null = null;
  state: ReplayState | null = null;
  tStart = 0;
  tEnd = 0;

  private readonly lru: ChunkLRU;
  private ci = 0;
  /** next row of chunks[ci] to apply; -1 = find it from state.tNs once the chunk is loaded */
  private row = -1;
  private playhead = 0;
  private playing = false;
  private speed = 1;
  private buffering = false;
  private selected: number | null = null;
  private status: PlayerStatus = "loading";
  private error: string | null = null;
  private seekGen = 0;
  /** a keyframe request is in flight: hold replay until it is installed */
  private awaitingKeyframe = false;
  private flights: Flight[] = [];
  private llcHeat = new Float64Array(0);
  hoverCpu: number | null = null;

  private ctx: CanvasRenderingContext2D | null = null;
  private dpr = 1;
  private raf = 0;
  private lastTs = 0;
  private frameTimes: number[] = [];
  private workTimes: number[] = [];
  private applyTimes: number[] = [];
  private drawTimes: number[] = [];
  private frames = 0;
  private firstFrameMs: number | null = null;
  private eventsApplied = 0;
  private dirty = true;
  private destroyed = false;
  private readonly abort = new AbortController();

  // ---- live mode (null / false for a stored recording) ----
  /** the view was opened in live mode (and the recording was live when it loaded) */
  live = false;
  private liveBuf: LiveBuffer | null = null;
  private feed: LiveFeed | null = null;
  private following = false;
  private liveEnded = false;
  /** hub batches the chunk walk needs were folded away while paused: rebuild from the buffer's origin */
  private liveStale = false;
  private liveConn: LiveConn = "connecting";
  private liveConnDetail: string | null = null;
  private liveRetryMs: number | null = null;
  private liveStatus: LiveStatus | null = null;
  private liveSkipped = 0;
  private liveDrops = 0;
  private resyncGen = 0;
  /** live view: the selected task's path over the held batches (the live inspector's data) */
  private trail: TaskTrail | null = null;
  private readonly decoder: Promise<typeof import("../../client/arrow")>;

  private listeners = new Set<() => void>();
  private snapshot: PlayerSnapshot;
  private lastNotify = 0;
  private notifyPending = false;
  private readonly frameHooks = new Set<(playhead: number) => void>();

  constructor(recId: string, opts: { t: number | null; speed: number; selected: number | null; live?: boolean }) {
    this.recId = recId;
    this.speed = clampSpeed(opts.speed);
    this.selected = opts.selected;
    // apache-arrow is loaded on first use: the first frame needs only JSON (topology + keyframe)
    const decoder = import("../../client/arrow");
    this.decoder = decoder;
    this.lru = new ChunkLRU(async (seq) => {
      const bytes = await api.chunkBytes(recId, seq, this.abort.signal);
      // a live view decodes stored chunks (its gap fill, scrubbing before the buffer) in its decode worker too
      if (this.liveDecoder) return this.liveDecoder.decode(bytes, false);
      const { decodeChunk } = await decoder;
      return decodeChunk(bytes);
    }, LRU_ROWS);
    this.snapshot = this.makeSnapshot();
    void (opts.live ? this.loadLive(opts.t) : this.load(opts.t));
    this.raf = requestAnimationFrame(this.frame);
  }

  destroy(): void {
    this.destroyed = true;
    cancelAnimationFrame(this.raf);
    this.abort.abort();
    this.feed?.close();
    this.liveDecoder?.close();
    if (this.resyncTimer !== null) clearTimeout(this.resyncTimer);
    this.listeners.clear();
    this.frameHooks.clear();
  }

  // ---- loading ------------------------------------------------------------------------------

  private async load(tUrl: number | null): Promise<void> {
    const sig = this.abort.signal;
    try {
      // everything the first frame needs, in parallel; overview/metrics do not block the frame
      const b = boot && boot.recId === this.recId && boot.t === tUrl ? boot : null;
      boot = null;
      const recP = b ? b.rec : api.recording(this.recId, sig);
      const topoP = b ? b.topo : api.topology(this.recId, sig);
      const chunksP = b ? b.chunks : api.chunks(this.recId, sig);
      const stateP = b
        ? b.state
        : tUrl !== null
          ? api.state(this.recId, tUrl, sig)
          : recP.then((r) => api.state(this.recId, r.t_start_ns ?? 0, sig));
      void api.overview(this.recId, 2000, sig).then(
        (ov) => {
          this.overview = ov;
          this.notify(true);
        },
        () => {
          if (sig.aborted) return;
          this.overviewFailed = true;
          this.notify(true);
        },
      );
      void api.metrics(this.recId, sig).then(
        (m) => {
          this.metrics = m;
          this.dirty = true;
          this.notify(true); // the comparison's counts table reads them
        },
        () => {
          if (sig.aborted) return;
          this.metricsFailed = true;
          this.notify(true);
        },
      );
      const [rec, topo] = await Promise.all([recP, topoP]);
      this.rec = rec;
      this.topo = topo;
      this.idx = cpuIndex(topo);
      this.tStart = rec.t_start_ns ?? 0;
      this.tEnd = rec.t_end_ns ?? this.tStart;
      const [ps, chunks] = await Promise.all([stateP, chunksP]);
      if (this.destroyed) return;
      this.chunks = chunks;
      this.installKeyframe(ps);
      const t = tUrl !== null ? Math.max(this.tStart, Math.min(this.tEnd, tUrl)) : this.tStart;
      this.playhead = Math.max(ps.t_ns, Math.min(t, this.tEnd));
      this.status = "ready";
      if (this.layout === null && this.pendingSize) this.setSize(this.pendingSize.w, this.pendingSize.h);
      this.prefetch();
      // draw now, before React renders the controls for the ready state
      this.draw(performance.now());
      this.notify(true);
    } catch (e) {
      if (this.destroyed) return;
      this.status = "error";
      this.error = e instanceof Error ? e.message : String(e);
      this.notify(true);
    }
  }

  private dims(): { nCpus: number; nLlcs: number } {
    const nCpus = this.topo ? this.topo.cpus.reduce((m, c) => Math.max(m, c.cpu + 1), 0) : 1;
    return { nCpus, nLlcs: this.topo?.llcs.length ?? 1 };
  }

  private installKeyframe(ps: PlacementState): void {
    const { nCpus, nLlcs } = this.dims();
    const tgids = this.state?.tgids;
    this.state = ReplayState.fromPlacementState(ps, nCpus, nLlcs);
    // tgids are not in GET state: keep what earlier chunks taught us
    if (tgids) this.state.tgids = tgids;
    // first chunk that still holds rows after the keyframe
    let ci = 0;
    while (ci < this.chunks.length && (this.chunks[ci]?.t_end_ns ?? 0) <= ps.t_ns) ci++;
    this.ci = ci;
    this.row = -1;
    this.flights = [];
  }

  // ---- live ---------------------------------------------------------------------------------

  /** where a live view opened with ?t= should settle once its first keyframe is in */
  private liveOpenAt: number | null = null;

  /**
   * Open a recording in live mode: recording + topology, then the hub feed. The keyframe (GET state
   * at the head) is fetched after the feed's first status, so every batch committed after it
   * arrives through the hub and nothing between the two is missed.
   */
  private async loadLive(tUrl: number | null): Promise<void> {
    const sig = this.abort.signal;
    boot = null;
    try {
      const rec = await api.recording(this.recId, sig);
      if (rec.status !== "live") {
        // the run is over (or never was live): open it as a stored recording
        await this.load(tUrl);
        return;
      }
      const topo = await api.topology(this.recId, sig);
      if (this.destroyed) return;
      this.live = true;
      this.rec = rec;
      this.topo = topo;
      this.idx = cpuIndex(topo);
      this.tStart = rec.t_start_ns ?? 0;
      this.tEnd = rec.t_end_ns ?? this.tStart;
      const { nCpus, nLlcs } = this.dims();
      // nothing known until the keyframe: every CPU's occupant is unknown
      this.state = new ReplayState(nCpus, nLlcs, this.tEnd);
      this.playhead = this.tEnd;
      this.chunks = [];
      this.ci = 0;
      this.row = -1;
      this.liveBuf = new LiveBuffer(LIVE_ROWS);
      this.trail = this.selected !== null ? TaskTrail.build(this.selected, this.liveBuf, this.idx) : null;
      this.following = tUrl === null;
      this.liveOpenAt = tUrl;
      this.status = "ready";
      if (this.layout === null && this.pendingSize) this.setSize(this.pendingSize.w, this.pendingSize.h);
      const dec = new LiveDecoder(startDecodeWorker(), async () => (await this.decoder).decodeChunk);
      this.liveDecoder = dec;
      this.feed = new LiveFeed(liveUrl(this.recId), (b) => dec.decode(b), {
        onStatus: (st, first) => {
          this.onLiveStatus(st, first);
        },
        onBatch: (cols) => {
          this.onLiveBatch(cols);
        },
        onConn: (c, detail, ms) => {
          if (c === "reconnecting" && this.liveConn === "open") this.liveDrops++;
          this.liveConn = c;
          this.liveConnDetail = detail;
          this.liveRetryMs = ms;
          this.notify(true);
        },
      });
      this.feed.start();
      this.draw(performance.now());
      this.notify(true);
    } catch (e) {
      if (this.destroyed) return;
      this.status = "error";
      this.error = e instanceof Error ? e.message : String(e);
      this.notify(true);
    }
  }

  private connSkipped = 0;
  private resyncTimer: ReturnType<typeof setTimeout> | null = null;
  private liveDecoder: LiveDecoder | null = null;
  /** events between a keyframe and the feed, filled in from stored chunks */
  private liveFilled = 0;

  private onLiveStatus(s: LiveStatus, first: boolean): void {
    const buf = this.liveBuf;
    if (!buf) return;
    this.liveStatus = s;
    if (s.t_end_ns !== null) this.tEnd = Math.max(this.tEnd, s.t_end_ns);
    if (first) {
      this.connSkipped = s.skipped;
      // first status of a connection: the keyframe at the head (a reconnect's feed has a hole before it)
      void this.resync(s.t_end_ns ?? this.tEnd, buf.origin === null);
    } else if (s.skipped > this.connSkipped) {
      // the hub dropped frames for us (we were slow): the buffer has a hole. One keyframe per
      // burst of skips (a slow view skips many in a row; each resync costs the server a state)
      this.liveSkipped += s.skipped - this.connSkipped;
      this.connSkipped = s.skipped;
      this.resyncTimer ??= setTimeout(() => {
        this.resyncTimer = null;
        if (!this.destroyed) void this.resync(this.liveStatus?.t_end_ns ?? this.tEnd, false);
      }, RESYNC_COALESCE_MS);
    }
    if (s.status !== "live" && !this.liveEnded) {
      this.liveEnded = true;
      if (this.following && Number.isFinite(buf.headTs)) this.advance(buf.headTs, false);
      this.following = false;
      this.playing = false;
    }
    this.notify(true);
  }

  /**
   * Keyframe from the server at t. The first one starts the buffer; later ones (after a drop or
   * skipped frames) replace it only when the server can rebuild the state at t (a non-empty state),
   * else the buffer carries on with its hole (the next events of each task correct it).
   */
  private async resync(t: number, initial: boolean): Promise<void> {
    const gen = ++this.resyncGen;
    const sig = this.abort.signal;
    const ps = await api.state(this.recId, t, sig).catch(() => null);
    // which events the keyframe covers: a live recording's state stops at its last chunk (docs/api.md)
    const stored = ps ? await api.chunks(this.recId, sig).catch(() => null) : null;
    const buf = this.liveBuf;
    if (gen !== this.resyncGen || this.destroyed || !buf) return;
    // dead tasks are only counted in a state (docs/api.md), so an all-exited state is not empty
    if (!initial && (!ps || ps.tasks.length + ps.dead_tasks === 0)) return;
    if (ps && stored) {
      const cov = stored.find((c) => c.first_row + c.rows === ps.event_index);
      void this.fillGap(gen, cov ? Math.min(ps.t_ns, cov.t_end_ns) : ps.t_ns);
    }
    const { nCpus, nLlcs } = this.dims();
    const st = ps ? ReplayState.fromPlacementState(ps, nCpus, nLlcs) : new ReplayState(nCpus, nLlcs, t);
    if (this.state) for (const [k, v] of this.state.tgids) st.tgids.set(k, v);
    buf.setOrigin(st);
    if (this.following) this.rebuildFromOrigin(Math.max(st.tNs, buf.headTs));
    else if (this.liveOpenAt !== null) {
      const at = this.liveOpenAt;
      this.liveOpenAt = null;
      this.seekLive(at);
    } else this.liveStale = true;
    this.notify(true);
  }

  /**
   * The keyframe covers events up to `from` (the last chunk when it was taken); the hub feed starts
   * with the first batch committed after we subscribed. The events between are committed but not
   * yet chunked: wait (a live recording chunks them within ~3 s), then apply them from the stored
   * chunks to the origin and rebuild, so the view holds every event from the keyframe on.
   */
  private async fillGap(gen: number, from: number): Promise<void> {
    const sig = this.abort.signal;
    // chunking may lag further on a host short of CPU (it yields to the feed): keep trying for 30 s
    for (let tries = 0; tries < 30; tries++) {
      await new Promise((r) => setTimeout(r, 1000));
      const buf = this.liveBuf;
      if (gen !== this.resyncGen || this.destroyed || !buf) return;
      const o = buf.origin;
      const seg0 = buf.segments[0];
      if (!o || !seg0) continue;
      const to = seg0.t0; // rows before it are not in the feed
      if (to <= from + 1) return;
      const stored = await api.chunks(this.recId, sig).catch(() => null);
      if (!stored || stored.reduce((m, c) => Math.max(m, c.t_end_ns), -Infinity) < to) continue;
      const need = stored.filter((c) => c.t_end_ns > from && c.t_start_ns < to).sort((a, b) => a.first_row - b.first_row);
      let parts: EventColumns[];
      try {
        parts = await Promise.all(need.map((c) => this.lru.get(c.seq)));
      } catch {
        continue;
      }
      // the buffer moved on meanwhile (a newer keyframe, or its first batch folded away): not ours to fill
      if (gen !== this.resyncGen || sig.aborted || buf.origin !== o || buf.segments[0] !== seg0) return;
      const st = o.clone();
      let n = 0;
      for (const cols of parts) n += st.apply(cols, upperBound(cols.ts, from), upperBound(cols.ts, to - 1));
      this.liveFilled += n;
      buf.setOrigin(st);
      if (this.following) this.rebuildFromOrigin(this.playhead);
      else this.liveStale = true;
      this.notify(true);
      return;
    }
  }

  /** The state at target rebuilt from the buffer's origin and its batches (target >= origin). */
  private rebuildFromOrigin(target: number): boolean {
    const buf = this.liveBuf;
    const o = buf?.origin;
    if (!buf || !o) return false;
    const tgids = this.state?.tgids;
    this.state = o.clone();
    if (tgids) for (const [k, v] of tgids) this.state.tgids.set(k, v);
    this.chunks = buf.infos(o.tNs);
    this.ci = 0;
    this.row = -1;
    this.liveStale = false;
    this.flights = [];
    this.seekGen++;
    this.awaitingKeyframe = false;
    this.playhead = Math.max(o.tNs, target);
    this.advance(this.playhead, false);
    this.dirty = true;
    return true;
  }

  private onLiveBatch(cols: EventColumns): void {
    const buf = this.liveBuf;
    if (!buf) return;
    const seg = buf.append(cols);
    if (!seg) return;
    const prev = this.chunks[this.chunks.length - 1];
    this.chunks.push(segmentInfo(seg));
    // entering the first hub batch after stored chunks: start after the state's time (no repeats)
    if (this.ci === this.chunks.length - 1 && this.row === 0 && prev && !isLiveSeq(prev.seq)) this.row = -1;
    this.tEnd = Math.max(this.tEnd, seg.t1);
    const dropped = buf.trim();
    if (this.trail) {
      this.trail.update(buf);
      if (dropped.length > 0) this.trail.prune(buf.segments[0]?.t0 ?? -Infinity);
    }
    if (dropped.length > 0) {
      const gone = new Set(dropped.map((id) => -id));
      const kept: ChunkInfo[] = [];
      let before = 0;
      let stale = false;
      for (let k = 0; k < this.chunks.length; k++) {
        const c = this.chunks[k];
        if (!c) continue;
        if (!gone.has(c.seq)) kept.push(c);
        else if (k < this.ci) before++;
        else stale = true;
      }
      this.chunks = kept;
      this.ci -= before;
      // the walk was inside a folded batch (paused long): rebuild from the origin when moving on
      if (stale) this.liveStale = true;
    }
    if (!this.following) this.notify(false);
  }

  /** Following: move toward the head (at least at 1x trace time), applying what was received, animated. */
  private followHead(now: number): void {
    const buf = this.liveBuf;
    if (!buf || !Number.isFinite(buf.headTs)) return;
    const head = buf.headTs;
    if (this.liveStale) this.rebuildFromOrigin(head);
    const dt = this.lastTs ? Math.min(100, now - this.lastTs) : 0;
    const lag = head - this.playhead;
    let target = head;
    if (lag > 0 && lag < FOLLOW_MAX_LAG_NS) target = Math.min(head, this.playhead + Math.max(dt * 1e6, lag * Math.min(1, dt / FOLLOW_TAU_MS)));
    if (target <= this.playhead) return;
    const ta = performance.now();
    this.advance(target, true);
    this.applyTimes.push(performance.now() - ta);
    if (this.applyTimes.length > 60) this.applyTimes.shift();
    this.playhead = Math.max(this.playhead, target);
  }

  /** Seek in a live view: forward replay, else the buffer's origin, else a server keyframe + stored chunks. */
  private seekLive(t: number): void {
    const buf = this.liveBuf;
    if (!buf || !this.state) return;
    const target = Math.round(Math.max(this.tStart, Math.min(this.tEnd, t)));
    if (!this.awaitingKeyframe && !this.liveStale && this.canReplayTo(target)) {
      this.seekGen++;
      this.playhead = target;
      this.advance(target, false);
      this.flights = [];
      this.dirty = true;
      this.notify(true);
      return;
    }
    if (buf.origin && target >= buf.origin.tNs) {
      this.rebuildFromOrigin(target);
      this.notify(true);
      return;
    }
    // before the buffer: the stored chunks (committed during the run) and a keyframe
    const gen = ++this.seekGen;
    this.buffering = true;
    this.awaitingKeyframe = true;
    this.playhead = target;
    this.notify(true);
    Promise.all([api.state(this.recId, target, this.abort.signal), api.chunks(this.recId, this.abort.signal)]).then(
      ([ps, stored]) => {
        if (gen !== this.seekGen || this.destroyed) return;
        const storedEnd = stored.reduce((m, c) => Math.max(m, c.t_end_ns), -Infinity);
        this.chunks = [...stored, ...buf.infos(storedEnd)];
        this.liveStale = false;
        this.landKeyframe(ps, target);
      },
      (e: unknown) => {
        this.keyframeFailed(gen, e);
      },
    );
  }

  /** Live view: stop following (the view freezes; batches keep arriving into the buffer). */
  pauseLive(): void {
    if (!this.live) return;
    this.following = false;
    this.playing = false;
    this.notify(true);
  }

  /** Live view: back to the head and follow it (or, once the run ended, to its end). */
  jumpToLive(): void {
    const buf = this.liveBuf;
    if (!this.live || !buf || this.status !== "ready") return;
    this.playing = false;
    this.following = !this.liveEnded;
    this.seekGen++;
    const head = buf.headTs;
    if (Number.isFinite(head)) {
      if (!this.awaitingKeyframe && !this.liveStale && this.canReplayTo(head)) {
        this.advance(head, false);
        this.flights = [];
      } else if (!this.rebuildFromOrigin(head)) this.liveStale = true;
      this.playhead = Math.max(this.playhead, head);
    }
    this.awaitingKeyframe = false;
    this.buffering = false;
    this.dirty = true;
    this.notify(true);
  }

  private colsOf(info: ChunkInfo): EventColumns | undefined {
    return isLiveSeq(info.seq) ? this.liveBuf?.get(-info.seq)?.cols : this.lru.peek(info.seq);
  }

  private prefetch(): void {
    for (let k = this.ci; k < Math.min(this.chunks.length, this.ci + 3); k++) {
      const info = this.chunks[k];
      if (info && !isLiveSeq(info.seq) && !this.lru.has(info.seq) && !this.lru.isLoading(info.seq)) {
        this.lru.get(info.seq).then(
          () => {
            this.dirty = true;
          },
          (e: unknown) => {
            if (!this.destroyed && !this.abort.signal.aborted) {
              this.error = `chunk ${info.seq}: ${e instanceof Error ? e.message : String(e)}`;
              this.notify(true);
            }
          },
        );
      }
    }
  }

  // ---- replay -------------------------------------------------------------------------------

  private readonly onMigrate = (m: MigrationEvent): void => {
    if (!this.idx || !this.state || this.flights.length >= MAX_FLIGHTS) return;
    const level = classifyMigration(this.idx, m.from, m.to);
    const t = this.state.tasks.get(m.pid);
    this.flights.push({
      pid: m.pid,
      from: m.from,
      to: m.to,
      color: processColor(processKey(m.pid, t?.comm ?? "", this.state.tgidOf(m.pid))),
      levelColor: level ? levelColor(level) : "#777",
      startMs: performance.now(),
    });
  };

  /** Apply events up to target (inclusive). Returns false when it had to stop for a chunk. */
  private advance(target: number, animate: boolean): boolean {
    const st = this.state;
    if (!st) return false;
    for (;;) {
      const info = this.chunks[this.ci];
      if (!info) {
        this.playhead = Math.max(this.playhead, target);
        this.buffering = false;
        return true;
      }
      const cols = this.colsOf(info);
      if (!cols) {
        if (info.t_start_ns > target) {
          this.playhead = Math.max(this.playhead, target);
          this.buffering = false;
          this.prefetch();
          return true;
        }
        if (isLiveSeq(info.seq)) {
          // a hub batch folded into the buffer's origin: only a rebuild from there can go on
          this.liveStale = true;
          this.buffering = false;
          return false;
        }
        this.prefetch();
        this.playhead = Math.max(this.playhead, Math.min(target, info.t_start_ns - 1));
        this.buffering = true;
        return false;
      }
      if (this.row < 0) this.row = upperBound(cols.ts, st.tNs);
      const end = upperBound(cols.ts, target, this.row);
      this.eventsApplied += st.apply(cols, this.row, end, animate ? this.onMigrate : undefined);
      this.row = end;
      this.dirty = true;
      if (end < cols.length) {
        this.playhead = Math.max(this.playhead, target);
        this.buffering = false;
        return true;
      }
      this.ci++;
      const nx = this.chunks[this.ci];
      // the first hub batch after stored chunks may repeat rows they hold: start after the state's time
      this.row = nx && isLiveSeq(nx.seq) && !isLiveSeq(info.seq) ? -1 : 0;
      this.prefetch();
    }
  }

  private rowsBetween(target: number): number {
    let n = 0;
    for (let k = this.ci; k < this.chunks.length; k++) {
      const c = this.chunks[k];
      if (!c || c.t_start_ns > target) break;
      n += c.rows;
    }
    return n;
  }

  /** Whether t is reachable by replaying forward (no keyframe needed). */
  private canReplayTo(target: number): boolean {
    const st = this.state;
    return !!st && target >= st.tNs && target >= this.playhead && this.rowsBetween(target) <= FORWARD_REPLAY_LIMIT;
  }

  /** Move the playhead to t (absolute trace ns). */
  seek(t: number): void {
    if (this.status !== "ready" || !this.state) return;
    if (this.live) {
      this.following = false;
      this.seekLive(t);
      return;
    }
    const target = Math.round(Math.max(this.tStart, Math.min(this.tEnd, t)));
    const gen = ++this.seekGen;
    if (!this.awaitingKeyframe && this.canReplayTo(target)) {
      this.playhead = target;
      this.advance(target, false);
      this.flights = [];
      this.dirty = true;
      this.notify(true);
      return;
    }
    this.buffering = true;
    this.awaitingKeyframe = true;
    this.playhead = target;
    this.notify(true);
    api.state(this.recId, target, this.abort.signal).then(
      (ps) => {
        if (gen === this.seekGen && !this.destroyed) this.landKeyframe(ps, target);
      },
      (e: unknown) => {
        this.keyframeFailed(gen, e);
      },
    );
  }

  /** A seek's keyframe arrived: start from it and replay up to the target. */
  private landKeyframe(ps: PlacementState, target: number): void {
    this.awaitingKeyframe = false;
    this.installKeyframe(ps);
    this.playhead = target;
    this.advance(target, false);
    this.dirty = true;
    this.prefetch();
    this.notify(true);
  }

  /** A seek's keyframe request failed (ignored when a newer seek replaced it). */
  private keyframeFailed(gen: number, e: unknown): void {
    if (gen !== this.seekGen || this.destroyed) return;
    this.awaitingKeyframe = false;
    this.error = e instanceof Error ? e.message : String(e);
    this.buffering = false;
    this.notify(true);
  }

  /** Jump to the next migration after the playhead (and animate it). */
  async stepToNextMigration(): Promise<boolean> {
    if (!this.state) return false;
    this.setPlaying(false);
    let from = this.playhead;
    for (let guard = 0; guard < 64; guard++) {
      const cols = await this.findChunkAfter(from);
      if (!cols) {
        // no loaded chunk there: skip ahead with the overview's migration bins
        const next = this.overview ? nextMigrationBin(this.overview, from + 1) : null;
        if (next === null) return false;
        from = next - 1;
        continue;
      }
      const { data, info } = cols;
      let i = upperBound(data.ts, from);
      for (; i < data.length; i++) {
        if (data.kind[i] === Kind.Migrate && (data.origCpu[i] ?? -1) !== (data.destCpu[i] ?? -1)) {
          const t = data.ts[i] ?? from;
          if (!this.awaitingKeyframe && this.canReplayTo(t)) {
            // replay up to it with its flight animated
            this.seekGen++;
            this.playhead = t;
            this.advance(t, true);
            this.dirty = true;
            this.notify(true);
          } else this.seek(t);
          return true;
        }
      }
      // nothing in this chunk after `from`: continue with the next chunk, or skip with the overview
      const after = info.t_end_ns;
      const nextBin = this.overview ? nextMigrationBin(this.overview, after) : after;
      if (nextBin === null) return false;
      from = Math.max(after, nextBin - 1);
    }
    return false;
  }

  private async findChunkAfter(t: number): Promise<{ data: EventColumns; info: ChunkInfo } | null> {
    const k = this.chunks.findIndex((c) => c.t_end_ns > t);
    const info = k >= 0 ? this.chunks[k] : undefined;
    if (!info) return null;
    const data = isLiveSeq(info.seq) ? this.colsOf(info) : await this.lru.get(info.seq);
    return data ? { data, info } : null;
  }

  // ---- controls -----------------------------------------------------------------------------

  setPlaying(p: boolean): void {
    if (this.live && p && !this.liveEnded && this.playhead >= this.tEnd) {
      this.jumpToLive();
      return;
    }
    if (this.live) this.following = false;
    if (p && this.playhead >= this.tEnd) this.seek(this.tStart);
    this.playing = p && this.status === "ready";
    this.lastTs = 0;
    this.notify(true);
  }

  setSpeed(s: number): void {
    this.speed = clampSpeed(s);
    this.notify(true);
  }

  select(pid: number | null): void {
    this.selected = pid;
    if (this.liveBuf && pid !== this.trail?.pid) this.trail = pid === null ? null : TaskTrail.build(pid, this.liveBuf, this.idx);
    this.dirty = true;
    this.notify(true);
  }

  /** Live view: the selected task's path over the batches held in memory (null when none is selected). */
  liveTrail(): TaskTrail | null {
    return this.trail;
  }

  /** Live view: the in-memory buffer (its held batches and origin), null for a stored recording. */
  get liveBuffer(): LiveBuffer | null {
    return this.liveBuf;
  }

  getPlayhead(): number {
    return this.playhead;
  }

  // ---- canvas -------------------------------------------------------------------------------

  attachCanvas(canvas: HTMLCanvasElement | null): void {
    this.ctx = canvas ? canvas.getContext("2d", { alpha: false }) : null;
    this.dirty = true;
  }

  private pendingSize: { w: number; h: number } | null = null;

  /** Lay the grid out for a CSS-pixel size; returns the layout (for the label overlay). */
  setSize(w: number, h: number): GridLayout | null {
    this.pendingSize = { w, h };
    if (!this.topo || w <= 0 || h <= 0) return null;
    this.layout = layoutGrid(this.topo, w, h);
    this.llcHeat = new Float64Array(this.layout.llcs.length).fill(NaN);
    this.dpr = window.devicePixelRatio || 1;
    const canvas = this.ctx?.canvas;
    if (canvas) {
      canvas.width = Math.round(w * this.dpr);
      canvas.height = Math.round(h * this.dpr);
      canvas.style.width = `${w}px`;
      canvas.style.height = `${h}px`;
    }
    this.dirty = true;
    this.notify(true);
    return this.layout;
  }

  private computeHeat(): void {
    const layout = this.layout;
    const st = this.state;
    if (!layout || !st) return;
    const util = this.metrics?.llc_util;
    const bin = util && util.bin_ns > 0 ? Math.floor((this.playhead - util.t_start_ns) / util.bin_ns) : -1;
    for (let i = 0; i < layout.llcs.length; i++) {
      const box = layout.llcs[i];
      if (!box) continue;
      let u = NaN;
      if (util && bin >= 0) {
        const s = util.series.find((x) => x.llc === box.id);
        if (s) u = s.util[Math.min(bin, s.util.length - 1)] ?? NaN;
      }
      if (Number.isNaN(u) && box.id >= 0 && box.id < st.llcUtil.length) u = st.llcUtil[box.id] ?? NaN;
      if (Number.isNaN(u)) {
        // instantaneous: share of the box's CPUs running a task right now
        let busy = 0;
        let online = 0;
        for (const c of box.cpus) {
          if (!layout.byCpu[c]?.online) continue;
          online++;
          if ((st.running[c] ?? 0) > 0) busy++;
        }
        u = online > 0 ? busy / online : NaN;
      }
      this.llcHeat[i] = u;
    }
  }

  private readonly frame = (now: number): void => {
    if (this.destroyed) return;
    this.raf = requestAnimationFrame(this.frame);
    const t0 = performance.now();
    this.frameTimes.push(now);
    while (this.frameTimes.length > 0 && (this.frameTimes[0] ?? now) < now - 1000) this.frameTimes.shift();
    this.frames++;

    if (this.following && this.status === "ready") {
      this.followHead(now);
      this.dirty = true;
      this.notify(false);
    } else if (this.playing && this.status === "ready") {
      const dt = this.lastTs ? Math.min(100, now - this.lastTs) : 0;
      const target = Math.min(this.tEnd, this.playhead + dt * 1e6 * this.speed);
      const ta = performance.now();
      if (!this.awaitingKeyframe && (!this.buffering || this.canResume())) this.advance(target, true);
      this.applyTimes.push(performance.now() - ta);
      if (this.applyTimes.length > 60) this.applyTimes.shift();
      this.dirty = true;
      if (this.playhead >= this.tEnd) {
        this.playing = false;
        // a live view that plays up to the head follows it from there
        if (this.live && !this.liveEnded) this.following = true;
        this.notify(true);
      } else this.notify(false);
    }
    this.lastTs = now;

    if (this.flights.length > 0) {
      this.flights = this.flights.filter((f) => now - f.startMs < FLIGHT_MS);
      this.dirty = true;
    }
    const td = performance.now();
    this.draw(now);
    this.drawTimes.push(performance.now() - td);
    if (this.drawTimes.length > 60) this.drawTimes.shift();
    for (const h of this.frameHooks) h(this.playhead);
    this.workTimes.push(performance.now() - t0);
    if (this.workTimes.length > 60) this.workTimes.shift();
    this.publishStats();
  };

  private draw(now: number): void {
    if (this.dirty && this.ctx && this.layout) {
      this.computeHeat();
      this.ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
      drawFrame(this.ctx, {
        layout: this.layout,
        state: this.state,
        llcHeat: this.llcHeat,
        flights: this.flights,
        nowMs: now,
        flightMs: FLIGHT_MS,
        selected: this.selected,
        hoverCpu: this.hoverCpu,
      });
      this.dirty = false;
      if (this.firstFrameMs === null && this.state) {
        this.firstFrameMs = performance.now();
        this.publishStats();
      }
    }
  }

  private canResume(): boolean {
    const info = this.chunks[this.ci];
    return !info || isLiveSeq(info.seq) || this.lru.has(info.seq);
  }

  setHover(cpu: number | null): void {
    this.hoverCpu = cpu;
    this.dirty = true;
  }

  private publishStats(): void {
    const work = this.workTimes.reduce((s, x) => s + x, 0) / Math.max(1, this.workTimes.length);
    window.__placemapStats = {
      recId: this.recId,
      fps: this.frameTimes.length,
      frames: this.frames,
      firstFrameMs: this.firstFrameMs,
      frameWorkMs: Math.round(work * 100) / 100,
      applyMs: mean(this.applyTimes),
      drawMs: mean(this.drawTimes),
      eventsApplied: this.eventsApplied,
      chunksResident: this.lru.size,
      playing: this.playing,
      speed: this.speed,
      playheadNs: this.playhead,
      ...(this.liveBuf
        ? {
            liveFrames: this.liveDecoder?.frames ?? 0,
            liveRows: this.liveBuf.receivedRows,
            liveDecodeMs: Math.round((this.liveDecoder?.mainMs ?? 0) * 100) / 100,
            liveWorkerMs: Math.round(this.liveDecoder?.workerMs ?? 0),
            liveDecodeMode: this.liveDecoder?.mode ?? "main",
            liveHeadNs: this.liveBuf.headTs,
            liveFilled: this.liveFilled,
          }
        : {}),
    };
  }

  // ---- React glue ---------------------------------------------------------------------------

  onFrame(hook: (playhead: number) => void): () => void {
    this.frameHooks.add(hook);
    return () => this.frameHooks.delete(hook);
  }

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  getSnapshot = (): PlayerSnapshot => this.snapshot;

  private makeSnapshot(): PlayerSnapshot {
    return {
      status: this.status,
      error: this.error,
      playhead: this.playhead,
      playing: this.playing,
      speed: this.speed,
      buffering: this.buffering,
      selected: this.selected,
      version: (this.snapshot as PlayerSnapshot | undefined) ? this.snapshot.version + 1 : 0,
      live: this.liveSnapshot(),
    };
  }

  private liveSnapshot(): LiveSnapshot | null {
    const buf = this.liveBuf;
    if (!this.live || !buf) return null;
    return {
      mode: this.liveEnded ? "ended" : this.following ? "live" : "paused",
      conn: this.liveConn,
      connDetail: this.liveConnDetail,
      retryInMs: this.liveRetryMs,
      events: this.liveStatus?.event_count ?? this.rec?.event_count ?? 0,
      lost: this.liveStatus?.lost_events ?? this.rec?.lost_events ?? 0,
      skipped: this.liveSkipped,
      drops: this.liveDrops,
      head: Number.isFinite(buf.headTs) ? buf.headTs : this.tEnd,
      bufferStart: buf.startTs,
      bufferedRows: buf.rows,
    };
  }

  /** Tell React (at most ~4 times a second unless forced). */
  private notify(force: boolean): void {
    const now = performance.now();
    if (!force && now - this.lastNotify < 250) {
      if (!this.notifyPending) {
        this.notifyPending = true;
        setTimeout(() => {
          this.notifyPending = false;
          this.notify(true);
        }, 260);
      }
      return;
    }
    this.lastNotify = now;
    this.snapshot = this.makeSnapshot();
    for (const l of this.listeners) l();
  }
}
