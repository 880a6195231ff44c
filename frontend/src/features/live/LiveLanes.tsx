/**
 * The CPU lanes of a live recording: who ran on each CPU over the LIVE_LANES_NS of trace time up to
 * the playhead (the head while following), or up to where the server has stored the run if that is
 * earlier: its chunks are written behind the head (seconds, more while the host is busy), and the
 * lanes are read from them. The end is polled every second (the chunks from the last end seen); the
 * window moves on each whole LIVE_LANES_STEP_NS, and the line above the lanes says how far behind
 * the playhead they end. The lanes themselves, summed per column when the window is too busy or on
 * request ("busy per column", in the page's link as the replay's is), are playback/CpuLanes.
 */
import { useEffect, useRef, useState } from "react";
import { api } from "../../client/http";
import { formatDuration } from "../../viz/time";
import type { Player } from "../engine/player";
import { usePlayerSnapshot } from "../engine/usePlayer";
import { CpuLanes } from "../playback/CpuLanes";
import { SummedToggle } from "../playback/SummedToggle";
import { useWidth } from "../playback/useWidth";

/** the window: the last 5 s, moved on each whole second of trace time */
export const LIVE_LANES_NS = 5e9;
export const LIVE_LANES_STEP_NS = 1e9;
const POLL_MS = 1000;
/** a poll not answered by then is dropped, and the next one asks again */
const POLL_TIMEOUT_MS = 10_000;

/** The live lanes' window for an end at `at` ns of a run from `tStart`: [t1 - LIVE_LANES_NS, t1]
 * (from the run's start at most), t1 the end rounded up to the next step from the start. */
export function liveWindow(tStart: number, at: number): [number, number] {
  const t1 = tStart + Math.ceil(Math.max(0, at - tStart) / LIVE_LANES_STEP_NS) * LIVE_LANES_STEP_NS;
  return [Math.max(tStart, t1 - LIVE_LANES_NS), Math.max(t1, tStart + LIVE_LANES_STEP_NS)];
}

/** `signal`, aborted too after `ms` (AbortSignal.any and .timeout are not in every browser). */
function withTimeout(signal: AbortSignal, ms: number): { signal: AbortSignal; done: () => void } {
  const ctl = new AbortController();
  const abort = () => {
    ctl.abort();
  };
  const timer = window.setTimeout(abort, ms);
  signal.addEventListener("abort", abort, { once: true });
  return {
    signal: ctl.signal,
    done: () => {
      window.clearTimeout(timer);
      signal.removeEventListener("abort", abort);
    },
  };
}

/** Where the server's stored chunks of the recording end, polled while it runs (once it has ended,
 * until one poll has answered: its last chunks); null before the first one. */
function useStoredEnd(recId: string | undefined, tStart: number, ended: boolean): number | null {
  const [end, setEnd] = useState<number | null>(null);
  useEffect(() => {
    if (!recId) return;
    const ctl = new AbortController();
    let from = tStart;
    let busy = false;
    let timer: number | undefined = undefined;
    const poll = () => {
      if (busy) return;
      busy = true;
      const req = withTimeout(ctl.signal, POLL_TIMEOUT_MS);
      api
        .chunks(recId, req.signal, from)
        .then((list) => {
          if (ended) window.clearInterval(timer); // (the run's last chunks: nothing more to come)
          const last = Math.max(...list.map((c) => c.t_end_ns));
          if (Number.isFinite(last) && last >= from) {
            from = last;
            setEnd(last);
          }
        })
        .catch(() => undefined) // (asked again at the next poll)
        .finally(() => {
          req.done();
          busy = false;
        });
    };
    timer = window.setInterval(poll, POLL_MS);
    poll();
    return () => {
      window.clearInterval(timer);
      ctl.abort();
    };
  }, [recId, tStart, ended]);
  return end;
}

interface Props {
  player: Player;
  onSelect?: (pid: number | null) => void;
  /** summed per pixel column whatever the window holds, kept by the page for its URL */
  summed: boolean;
  onSummed: (summed: boolean) => void;
}

export function LiveLanes({ player, onSelect, summed, onSummed }: Props) {
  const snap = usePlayerSnapshot(player);
  const wrapRef = useRef<HTMLDivElement>(null);
  const width = useWidth(wrapRef);
  const ended = snap.live?.mode === "ended";
  const stored = useStoredEnd(player.rec?.id, player.tStart, ended);
  const end = stored === null ? null : Math.min(snap.playhead, stored);
  const [d0, d1] = liveWindow(player.tStart, end ?? player.tStart);
  const behind = end === null ? 0 : snap.playhead - end;
  return (
    <div ref={wrapRef} className="live-lanes" data-testid="live-lanes">
      <div className="small muted" data-testid="live-lanes-caption">
        {end === null
          ? "CPU lanes: waiting for the server to store the run's first events"
          : `CPU lanes: the last ${String(LIVE_LANES_NS / 1e9)} s the server has stored${behind > 1e6 ? `, ending ${formatDuration(behind)} behind the playhead` : ""}`}{" "}
        ·{" "}
        <SummedToggle summed={summed} onSummed={onSummed} testId="live-lanes-summed-toggle" />
      </div>
      {end !== null && <CpuLanes player={player} overview={null} overviewPending={false} d0={d0} d1={d1} width={width} tStart={player.tStart} onSelect={onSelect} live={!ended} summed={summed} />}
    </div>
  );
}
