/**
 * A live recording's line in the recordings list: a LIVE mark, the host, the events so far and the
 * lost-events count (0 shown as 0).
 */
import type { Recording } from "../../client/types";
import "./live.css";

export function LiveRecordingMeta({ rec }: { rec: Recording }) {
  return (
    <span className="live-meta small" data-testid="live-rec-meta">
      <span className="live-mark" aria-label="live recording">
        <span className="live-dot" aria-hidden="true" />
        LIVE
      </span>{" "}
      <span className="mono">{rec.host ?? "unknown host"}</span>
      {" · "}
      <span data-testid="live-rec-events">{rec.event_count.toLocaleString()} events so far</span>
      {" · "}
      <span className={`badge ${rec.lost_events > 0 ? "warn" : "ok"}`} data-testid="live-rec-lost">
        lost {rec.lost_events.toLocaleString()}
      </span>
    </span>
  );
}

