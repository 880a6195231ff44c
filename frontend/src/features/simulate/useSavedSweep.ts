/**
 * A stored sweep (GET /api/sim/sweeps/{id}), as a link ?sweep=ID opens it: loaded once per id,
 * or why it could not be (an unknown id is 404 sweep_not_found, said as such).
 */
import { useEffect, useState } from "react";
import { api } from "../../client/http";
import type { SavedSweep } from "../../client/types";
import { errorText } from "../whatif/useJobPair";

type Got = { id: string; saved: SavedSweep } | { id: string; err: string };

export function useSavedSweep(id: string | null): { saved: SavedSweep | null; err: string | null } {
  const [got, setGot] = useState<Got | null>(null);
  useEffect(() => {
    if (id === null) return;
    const ctl = new AbortController();
    api.savedSweep(id, ctl.signal).then(
      (saved) => { setGot({ id, saved }); },
      (e: unknown) => {
        if (!ctl.signal.aborted) setGot({ id, err: `the sweep of this link: ${errorText(e)}` });
      },
    );
    return () => { ctl.abort(); };
  }, [id]);
  // what was loaded for another id (or none) is not this one's
  if (got === null || got.id !== id) return { saved: null, err: null };
  return "saved" in got ? { saved: got.saved, err: null } : { saved: null, err: got.err };
}
