/**
 * The recorded hosts (hosts.ts) of the recordings list the dashboard keeps (RecordingsPanel's,
 * refreshed as imports finish and every few seconds), while the Simulate form is open: each
 * qualifying recording's topology is read once per topology and kept, so a host imported while
 * the form is open is offered at the list's next refresh, and one whose recordings are all
 * deleted leaves. A host whose topology cannot be read is left out: the presets stay usable
 * whatever happens here.
 */
import { useEffect, useMemo, useState } from "react";
import { api } from "../../client/http";
import type { Recording } from "../../client/types";
import { distinctHosts, HOST_PREFIX, hostLabel, hostRecordings, type Host } from "./hosts";

/** A host read, with its topology as text (to list each machine once). */
interface Known {
  host: Host;
  text: string;
}

export function useHosts(open: boolean, recordings: Recording[]): Host[] {
  // topology id -> its host and its topology as text (to list each machine once), or null when
  // it could not be read
  const [known, setKnown] = useState<ReadonlyMap<string, Known | null>>(new Map());
  const wanted = useMemo(() => hostRecordings(recordings), [recordings]);
  const missing = wanted.filter((r) => !known.has(String(r.topology_id)));
  // the effect restarts only when the set of topologies to read changes, not at each list refresh
  const missingKey = missing.map((r) => String(r.topology_id)).join(",");
  useEffect(() => {
    if (!open || missing.length === 0) return;
    const ctl = new AbortController();
    void Promise.all(
      missing.map((r) => {
        const tid = String(r.topology_id);
        return api.topology(r.id, ctl.signal).then(
          (t): [string, Known | null] => [tid, { host: { key: HOST_PREFIX + tid, label: hostLabel(t), topology: t }, text: JSON.stringify(t) }],
          (): [string, null] => [tid, null],
        );
      }),
    ).then((got) => {
      if (ctl.signal.aborted) return;
      setKnown((prev) => new Map([...prev, ...got]));
    });
    return () => { ctl.abort(); };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `missing` is read through missingKey
  }, [open, missingKey]);
  // the same list while nothing changes (the sweep's machines are named from it: hosts.sweepHosts)
  return useMemo(() => {
    const read = wanted.map((r) => known.get(String(r.topology_id))).filter((k) => k != null);
    return distinctHosts(read, (k) => k.text).map((k) => k.host);
  }, [wanted, known]);
}
