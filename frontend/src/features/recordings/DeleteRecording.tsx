/**
 * Delete a recording from the list (DELETE /api/recordings/{id}): a two-step inline confirm, the
 * server's error shown in the row when it refuses. Not offered for a live recording whose run is
 * still going (the collector would keep sending into it).
 */
import { useState } from "react";
import type { Recording } from "../../client/types";
import { api } from "../../client/http";

export function DeleteRecording({ rec, onDeleted }: { rec: Recording; onDeleted: (id: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  if (rec.status === "live") return null;
  const run = () => {
    setBusy(true);
    setErr(null);
    api.deleteRecording(rec.id).then(
      () => {
        setBusy(false);
        setConfirming(false);
        onDeleted(rec.id);
      },
      (e: unknown) => {
        setBusy(false);
        setErr(`delete failed: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
  };
  return (
    <div className="rec-delete small">
      {confirming ? (
        <span role="group" aria-label={`Confirm deleting ${rec.name}`}>
          <span>Delete “{rec.name}” and its data?</span>{" "}
          <button type="button" className="btn danger" data-testid="delete-confirm" disabled={busy} onClick={run}>
            {busy ? "deleting…" : "Delete"}
          </button>{" "}
          <button type="button" className="btn" data-testid="delete-cancel" disabled={busy} onClick={() => { setConfirming(false); }}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="button" className="linkish" data-testid="delete-recording" aria-label={`Delete recording ${rec.name}`} onClick={() => { setConfirming(true); setErr(null); }}>
          delete
        </button>
      )}
      {err && (
        <div className="error" data-testid="delete-error" role="alert">
          {err}
        </div>
      )}
    </div>
  );
}
