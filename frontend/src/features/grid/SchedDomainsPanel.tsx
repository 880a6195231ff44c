/**
 * "sched domains": beside an open recording, the sched domains the simulator builds for its
 * machine, for one CPU, as the kernel prints its own at boot with sched_verbose (GET
 * /api/recordings/{id}/domains), so a kernel developer can set the model's hierarchy beside the
 * real machine's dmesg; then each domain's parameters. Loaded when opened; text only.
 */
import { useEffect, useState } from "react";
import { api } from "../../client/http";
import type { SchedDomains } from "../../client/types";

export function SchedDomainsPanel({ recId, cpus }: { recId: string; cpus: readonly number[] }) {
  const [open, setOpen] = useState(false);
  const [cpu, setCpu] = useState(cpus[0] ?? 0);
  const [got, setGot] = useState<{ key: string; view: SchedDomains | null; err: string | null } | null>(null);
  const key = `${recId}/${String(cpu)}`;
  useEffect(() => {
    if (!open) return;
    const ctl = new AbortController();
    api.domains(recId, cpu, ctl.signal).then(
      (view) => { setGot({ key, view, err: null }); },
      (e: unknown) => { if (!ctl.signal.aborted) setGot({ key, view: null, err: e instanceof Error ? e.message : String(e) }); },
    );
    return () => { ctl.abort(); };
  }, [open, recId, cpu, key]);
  const shown = got?.key === key ? got : null;
  return (
    <details className="panel sched-domains" data-testid="sched-domains" onToggle={(e) => { setOpen(e.currentTarget.open); }}>
      <summary>sched domains (as the simulator builds them)</summary>
      <label className="small">
        CPU{" "}
        <select value={cpu} aria-label="domains of CPU" onChange={(e) => { setCpu(Number(e.target.value)); }}>
          {cpus.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      </label>
      {shown?.err != null && <div className="error small" data-testid="sched-domains-error">{shown.err}</div>}
      {shown?.view && (
        <>
          <pre className="mono small" data-testid="sched-domains-dmesg">{shown.view.dmesg}</pre>
          <pre className="mono small muted" data-testid="sched-domains-params">{shown.view.params}</pre>
        </>
      )}
    </details>
  );
}
