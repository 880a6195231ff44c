/**
 * The live timeline: a slider over the run so far (it grows with the head). Dragging it scrubs back
 * (rebuilt from the in-memory buffer, or from the stored chunks and a keyframe before it); the part
 * the buffer holds is shaded. Values are ms from the run's start, so the slider never holds ns
 * beyond a float's step precision.
 */
import type { Player } from "../engine/player";
import { usePlayerSnapshot } from "../engine/usePlayer";
import { formatDuration, formatNs } from "../../viz/time";

export function LiveTimeline({ player }: { player: Player }) {
  const snap = usePlayerSnapshot(player);
  const live = snap.live;
  if (!live) return null;
  const t0 = player.tStart;
  const t1 = Math.max(player.tEnd, live.head, t0 + 1);
  const span = t1 - t0;
  const pos = Math.max(0, Math.min(span, snap.playhead - t0));
  const bufFrom = live.bufferStart === null ? null : Math.max(0, live.bufferStart - t0) / span;
  return (
    <div className="live-timeline">
      <div className="live-track">
        {bufFrom !== null && (
          <div className="live-buffered" style={{ left: `${(bufFrom * 100).toFixed(3)}%`, right: "0%" }} title="held in this view: scrubbing here needs no server round trip" />
        )}
        <input
          type="range"
          data-testid="live-scrub"
          aria-label="Live timeline: scrub back"
          aria-valuetext={`${formatDuration(pos)} of ${formatDuration(span)}${live.mode === "live" ? ", live" : ""}`}
          min={0}
          max={span / 1e6}
          step="any"
          value={pos / 1e6}
          onChange={(e) => {
            player.seek(t0 + Number(e.target.value) * 1e6);
          }}
        />
      </div>
      <div className="live-times small muted">
        <span>+0</span>
        <span className="mono" data-testid="live-time">
          {formatNs(snap.playhead)} (+{formatDuration(pos)})
        </span>
        <span>+{formatDuration(span)}</span>
      </div>
    </div>
  );
}
