/**
 * Loads the recorded hosts (hosts.ts) once the Simulate form opens: the recordings list, then each
 * qualifying recording's topology. A host whose topology cannot be read is left out: the presets
 * stay usable whatever happens here.
 */
import { useEffect, useState } from "react";
import { api } from "../../client/http";
import type { Topology } from "../../client/types";
import { HOST_PREFIX, hostLabel, hostRecordings } from "./hosts";

export interface Host {
  /** the form's topology value: HOST_PREFIX + topology id */
  key: string;
  label: string;
  topology: Topology;
}

export function useHosts(open: boolean): Host[] {
  const [hosts, setHosts] = useState<Host[] | null>(null);
  useEffect(() => {
    if (!open || hosts !== null) return;
    const ctl = new AbortController();
    const load = async (): Promise<Host[]> => {
      const recs = hostRecordings(await api.listRecordings(ctl.signal));
      const got = await Promise.all(
        recs.map((r) => api.topology(r.id, ctl.signal).then(
          (t): Host => ({ key: HOST_PREFIX + String(r.topology_id), label: hostLabel(t), topology: t }),
          () => null,
        )),
      );
      return got.filter((h): h is Host => h !== null);
    };
    load().then(setHosts, () => { if (!ctl.signal.aborted) setHosts([]); });
    return () => { ctl.abort(); };
  }, [open, hosts]);
  return hosts ?? [];
}
