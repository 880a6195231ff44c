/**
 * "What if": replay an open recording under another topology, hints and features. The form
 * (presets, hints and features from GET /api/sim/options) submits a saved simulator job whose
 * workload is the recording itself (a trace workload); its progress is polled, and when done
 * the result (with both runs' busy time per LLC, LlcUtil) and a button to open the twin recording
 * show. The result is compared with the same
 * replay without the changes (same machine, run beside it, not saved), so that the model's own
 * error on the recording cancels out; the recorded span is shown for reference. The form has no
 * seed: a replay draws nothing from it (the scenario keeps the default).
 * A refused scenario or a failed job shows the backend's message, which names the field.
 * The machine is the recording's own host, a preset, or another recorded host (a stored
 * recording's real topology, hosts.ts), sent inline.
 * Once saved, the what-if run's whole scenario (the recording's profile and topology inline)
 * downloads as scenario.json, with the `placemap sim` command that reruns the pair from it.
 * "Feature table" replays the recording under every toggle on its own instead (a toggle sweep job,
 * stored behind a link), on the form's machine or across the machines ticked (the recorded host and
 * the other recorded hosts among them): which hint or feature would help this workload, and where
 * (ToggleBars, AcrossSweep); a toggle, machine or cell picked there becomes the form's, to replay it
 * as the twin.
 */
import { useMemo, useRef, useState } from "react";
import { SweepResult } from "../simulate/AcrossSweep";
import { TickList } from "../simulate/TickList";
import { MAX_SWEEP_POINTS, parseTicked } from "../simulate/sweepView";
import { useSweepJob } from "../simulate/useSweepJob";
import { api } from "../../client/http";
import type { Recording } from "../../client/types";
import { HOST_PREFIX, RECORDED, storedHosts, sweepHosts, withMachine } from "../simulate/hosts";
import { useHosts } from "../simulate/useHosts";
import { LlcUtil } from "../simulate/LlcUtil";
import { formatDuration } from "../../viz/time";
import {
  baselineOf,
  changePct,
  changesSomething,
  defaultChoice,
  featureTable,
  pctText,
  profileSkips,
  whatIfScenario,
  type WhatIfChoice,
} from "./scenario";
import { comparable, metricText, toggleChoice } from "../simulate/scenario";
import { MachineSelect, SimForm, Toggle, showSubmit, useSimChoice } from "./SimFormParts";
import { ToggleFields } from "./ToggleFields";
import { DecisionShift } from "../compare/DecisionShift";
import { WakerShift, wakeHints } from "../compare/WakerShift";
import { Reproduce } from "../simulate/Reproduce";
import { useJobPair } from "./useJobPair";
import "./whatif.css";

interface Props {
  rec: Recording;
  /** open the finished what-if run */
  onOpen: (id: string) => void;
  /** a what-if run was saved (refresh the list) */
  onSaved: () => void;
  /** show the finished what-if run beside this recording */
  onCompare?: (id: string) => void;
  /** the recordings list (RecordingsPanel's): the other recorded hosts come from it */
  recordings?: Recording[];
}

export function WhatIf({ rec, onOpen, onSaved, onCompare, recordings }: Props) {
  const [open, setOpen] = useState(false);
  // the form, whose submit button a pick in a result table brings into view (showSubmit)
  const formRef = useRef<HTMLFormElement>(null);
  const hasTopology = rec.topology_id != null;
  const { opts, choice, set, err: optsErr } = useSimChoice<WhatIfChoice>(open, (o) => defaultChoice(o, hasTopology));
  const { job, base, err: jobErr, submit } = useJobPair();
  // what the recording lacked for the replay (the twin's profile summary): name -> count
  const [lacked, setLacked] = useState<Record<string, number>>({});
  const err = optsErr ?? jobErr;
  // other machines recorded here (the recording's own is "recorded host"), to replay it on
  const own = HOST_PREFIX + String(rec.topology_id);
  const recorded = useHosts(open, recordings ?? []);
  const hosts = useMemo(() => recorded.filter((h) => h.key !== own), [recorded, own]);
  const spanNs = (rec.t_end_ns ?? 0) - (rec.t_start_ns ?? 0);
  const table = useSweepJob();
  const [across, setAcross] = useState("");
  const [tableErr, setTableErr] = useState<string | null>(null);

  const run = () => {
    if (!opts || !choice) return;
    setLacked({});
    const baseline = changesSomething(choice, opts) ? whatIfScenario(rec.id, spanNs, baselineOf(choice, opts), opts) : null;
    void submit(whatIfScenario(rec.id, spanNs, choice, opts), baseline, false, (j) => {
      onSaved();
      if (j.recording_id) {
        api.recording(j.recording_id).then(
          (twin) => { setLacked(profileSkips(twin.scenario)); },
          () => { /* the twin's summary is extra; its absence is not an error */ },
        );
      }
    });
  };

  // the machines a feature table can run across: the recording's own host (when it has one), the
  // presets and the other recorded hosts, by their sweep names
  const tableHosts = useMemo(() => sweepHosts(opts?.presets ?? [], hosts), [opts, hosts]);
  const acrossNames = [...(hasTopology ? [RECORDED] : []), ...(opts?.presets ?? []), ...tableHosts.keys()];
  const acrossNotes = new Map([...tableHosts].map(([n, h]) => [n, { note: "recorded", title: h.label }]));
  const runTable = () => {
    if (!opts || !choice) return;
    const on = across === "" ? { values: [] } : parseTicked(across, acrossNames, "machines", MAX_SWEEP_POINTS, 2, "across");
    setTableErr("error" in on ? on.error : null);
    if ("error" in on) return;
    const t = featureTable(rec.id, spanNs, choice, opts, on.values, tableHosts);
    void table.submit(t.scenario, t.spec);
  };
  // a toggle picked in the table becomes the form's, to replay it as the saved twin and compare;
  // a machine picked the form's machine (the recording's own host, a preset, another recorded host)
  const pickToggle = (x: number | string) => {
    if (!opts) return;
    set((c) => toggleChoice(c, String(x), opts) ?? c);
    showSubmit(formRef.current);
  };
  const pickMachine = (m: string) => {
    set((c) => withMachine(c, m, tableHosts));
    showSubmit(formRef.current);
  };
  const tableJob = table.job;
  const tabling = tableJob !== null && (tableJob.status === "queued" || tableJob.status === "running");

  const running = job !== null && (job.status === "queued" || job.status === "running") ? job : null;
  const baseRun = base?.status === "done" && base.result ? base.result : null;
  const baseValue = baseRun ? baseRun.metric.value : null;
  const busy = running !== null;

  return (
    <div className="whatif" data-testid="whatif">
      <Toggle open={open} setOpen={setOpen} title="What if…" />
      {open && opts && choice && (
        <SimForm label="What-if replay" formRef={formRef} onSubmit={run}>
          <MachineSelect
            label="topology"
            value={choice.topology}
            body={choice.topologyBody}
            presets={opts.presets}
            hosts={hosts}
            hostsLabel="other recorded hosts"
            onChange={(v, body) => { set((c) => ({ ...c, topology: v, topologyBody: body })); }}
            before={hasTopology && <option value="recorded">recorded host</option>}
          />
          <ToggleFields opts={opts} choice={choice} set={set} />
          <button type="submit" disabled={busy}>Replay</button>{" "}
          <button type="button" disabled={tabling} onClick={runTable} title="replay the recording under every hint and every feature change on its own, each against the one replay without any, on this machine or across the machines ticked below">
            Feature table
          </button>
          <details className="small">
            <summary>feature table across machines</summary>
            <TickList label="feature table across" names={acrossNames} notes={acrossNotes} ticked={across} onChange={setAcross} />
          </details>
        </SimForm>
      )}
      {running && <progress max={1} value={running.progress} aria-label="what-if progress" data-testid="whatif-progress" />}
      {job?.status === "done" && job.result && (
        <div className="whatif-result small" data-testid="whatif-result">
          runtime {metricText(job.result)}
          {baseRun !== null && baseValue !== null && comparable(job.result, baseRun) && (
            <span data-testid="whatif-change">
              {" "}
              against {formatDuration(baseValue * 1e9)} on the same machine without the changes (
              {pctText(changePct(job.result.metric.value, baseValue))})
            </span>
          )}
          <DecisionShift without={base?.status === "done" ? base.result?.decisions : null} withChanges={job.result.decisions} testId="whatif-why" />
          <WakerShift without={base?.status === "done" ? base.result?.counters.wakeups.by_waker : null} withChanges={job.result.counters.wakeups.by_waker} testId="whatif-by-waker" hints={wakeHints(job.scenario)} />
          {base !== null && baseValue === null && base.status !== "failed" && <span className="muted"> (its baseline is running)</span>}
          {" "}
          (recorded {formatDuration(spanNs)} on its host
          {job.result.sim.complete ? "" : "; the replay did not finish, so it is not compared"}
          {job.result.sim.complete && baseRun !== null && !baseRun.sim.complete ? "; its baseline did not finish, so it is not compared" : ""})
          {Object.values(lacked).some((n) => n > 0) && (
            <div className="muted" data-testid="whatif-lacked">
              the recording lacked (counted, replayed around):{" "}
              {Object.entries(lacked)
                .filter(([, n]) => n > 0)
                .map(([k, n]) => `${k.replaceAll("_", " ")} ${n.toLocaleString()}`)
                .join(", ")}
            </div>
          )}
          <LlcUtil run={job.result.llc_util} base={baseRun?.llc_util} testId="whatif-llc-util" />
          {job.recording_id && <Reproduce recordingId={job.recording_id} baseline={base !== null} seeds={1} testPrefix="whatif" />}
          {job.recording_id && (
            <button type="button" className="linkish" onClick={() => { if (job.recording_id) onOpen(job.recording_id); }}>
              open the what-if run
            </button>
          )}
          {job.recording_id && onCompare && (
            <button type="button" className="linkish" onClick={() => { if (job.recording_id) onCompare(job.recording_id); }}>
              compare side by side
            </button>
          )}
        </div>
      )}
      {tabling && (
        <div className="small">
          <progress max={1} value={tableJob.progress} aria-label="feature table progress" data-testid="whatif-table-progress" />{" "}
          <button type="button" className="linkish" title="cancel the feature table: its runs so far are lost" onClick={() => { void table.stop(); }}>stop the feature table</button>
        </div>
      )}
      {tableJob?.status === "done" && tableJob.sweep_result && (
        <div className="whatif-result small" data-testid="whatif-table">
          <SweepResult r={tableJob.sweep_result} scenario={tableJob.scenario} link={tableJob.sweep_id ?? null} onPick={pickToggle} onPickMachine={pickMachine} hosts={tableJob.sweep ? storedHosts(tableJob.sweep) : null} />
        </div>
      )}
      {tableJob?.status === "failed" && <div className="error small" data-testid="whatif-table-error">feature table: {tableJob.error?.message ?? "the job failed"}</div>}
      {(tableErr ?? table.err) && <div className="error small" data-testid="whatif-table-error">{tableErr ?? table.err}</div>}
      {job?.status === "failed" && <div className="error small" data-testid="whatif-error">{job.error?.message ?? "the job failed"}</div>}
      {err && <div className="error small" data-testid="whatif-error">{err}</div>}
    </div>
  );
}
