/**
 * The live view's status bar and controls: a LIVE / PAUSED / ENDED state, the hub connection
 * (reconnecting with its backoff delay and reason), the events and lost events of the run so far
 * (the lost counter is always shown, 0 included), holes in the feed, and pause / jump to live.
 * Re-rendered from the Player's throttled snapshots.
 */
import type { Player } from "../engine/player";
import { usePlayerSnapshot } from "../engine/usePlayer";
import { formatDuration } from "../../viz/time";
import "./live.css";

const MODE_LABEL = { live: "LIVE", paused: "PAUSED", ended: "ENDED" } as const;

export function LiveBar({ player, onOpenFinished }: { player: Player; onOpenFinished: () => void }) {
  const snap = usePlayerSnapshot(player);
  const live = snap.live;
  if (!live) return null;
  const behind = live.mode === "paused" ? live.head - snap.playhead : 0;
  let conn: string;
  switch (live.conn) {
    case "open":
      conn = "connected";
      break;
    case "connecting":
      conn = "connecting…";
      break;
    case "reconnecting":
      conn = `connection lost${live.connDetail ? ` (${live.connDetail})` : ""}: reconnecting${live.retryInMs !== null ? ` in ${(live.retryInMs / 1000).toFixed(1)} s` : "…"}`;
      break;
    case "ended":
      conn = "the run has ended";
      break;
    case "error":
      conn = `feed error: ${live.connDetail ?? "unknown"}`;
      break;
  }
  const holes = live.skipped + live.drops;
  return (
    <div className="live-bar" role="group" aria-label="Live view">
      <span className={`live-mode live-${live.mode}`} data-testid="live-mode" data-mode={live.mode} role="status">
        {live.mode === "live" && <span className="live-dot" aria-hidden="true" />}
        {MODE_LABEL[live.mode]}
      </span>
      {live.mode === "live" ? (
        <button type="button" className="btn" data-testid="live-pause" onClick={() => { player.pauseLive(); }}>
          <span aria-hidden="true">❚❚ </span>Pause
        </button>
      ) : live.mode === "paused" ? (
        <>
          <button type="button" className="btn primary" data-testid="live-jump" onClick={() => { player.jumpToLive(); }}>
            Jump to live <span aria-hidden="true">»</span>
          </button>
          <button
            type="button"
            className="btn"
            data-testid="live-play"
            data-state={snap.playing ? "playing" : "paused"}
            onClick={() => { player.setPlaying(!snap.playing); }}
          >
            {snap.playing ? "Stop" : "Play from here"}
          </button>
          <span className="muted small" data-testid="live-behind">{formatDuration(Math.max(0, behind))} behind live</span>
        </>
      ) : (
        <button type="button" className="btn primary" data-testid="live-open-finished" onClick={onOpenFinished}>
          Open the finished recording
        </button>
      )}
      <span className={`small live-conn conn-${live.conn}`} data-testid="live-conn" aria-live="polite">
        {conn}
      </span>
      <span className="live-counts small">
        <span data-testid="live-events">{live.events.toLocaleString()} events</span>
        {" · "}
        <span className={`badge ${live.lost > 0 ? "warn" : "ok"}`} data-testid="live-lost" title="events the kernel dropped before the collector read them">
          lost {live.lost.toLocaleString()}
        </span>
        {holes > 0 && (
          <span className="badge warn" data-testid="live-holes" title="updates this view missed: frames the server skipped because the view was slow, or connection drops; the state catches up with each task's next event">
            {holes.toLocaleString()} feed {holes === 1 ? "gap" : "gaps"}
          </span>
        )}
      </span>
    </div>
  );
}
