/**
 * "Simulate": run a parametric workload (hackbench, schbench, tbench, stream, ctxswitch, netperf)
 * on a preset machine or a recorded host (a stored recording's real topology, useHosts) under
 * hints and features, beside the same run without them (same machine, workload and seed), both
 * saved as recordings; shows both metrics and the change by the metric's
 * own direction, opens either run, or shows the two side by side. With seeds above 1 the same pair
 * also runs (unsaved) on the seeds after the form's, and the result says whether the change holds
 * its sign on every seed. Where the pair is a cell of the published tables (a hint on zen3-2s-nps1
 * or icx-2s), the real kernel's effect shows beside it (Published). The workloads, their
 * parameters and bounds come from GET /api/sim/options; a refused scenario shows the backend's
 * message, which names the field. Under the result, the busy time per LLC of both runs (LlcUtil),
 * the scenario as a file and the `placemap sim` command that reruns the same pair from it
 * (Reproduce). With a sweep (one integer parameter at 2-10 values, several machines, or several
 * toggles), one more job runs the scenario at each value, each beside its baseline when the choice
 * changes something (toggles: always, instead of the form's own), and SweepChart shows the metric
 * against the values and where the change turns, beside where the published one does (machines and
 * toggles: where it helps and hurts); run across several machines, AcrossSweep shows every value on
 * every machine in one table (the feature table across machines). A finished sweep is stored: its
 * id goes in the URL (?sweep=ID, App), and such a link opens the stored result with the form set as
 * it ran.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { DecisionShift } from "../compare/DecisionShift";
import { WakerShift, wakeHints } from "../compare/WakerShift";
import { MachineSelect, SimForm, Toggle, showSubmit, useSimChoice } from "../whatif/SimFormParts";
import { ToggleFields } from "../whatif/ToggleFields";
import { baselineOf, changePct, changesSomething, pctText } from "../whatif/scenario";
import { jobEnded, useJobPair } from "../whatif/useJobPair";
import { choiceOfSweep, comparable, replayedRecording, defaultSimChoice, extraSeedPairs, formatMetric, MAX_SEEDS, metricText, simScenario, verdict, whyNotCompared, pickSwept, withKind, withSweepParam, type SimChoice } from "./scenario";
import { Published } from "./Published";
import { LatencyLine } from "./LatencyLine";
import { LlcUtil } from "./LlcUtil";
import { Reproduce } from "./Reproduce";
import { useHosts } from "./useHosts";
import { storedHosts, sweepHosts, withMachine } from "./hosts";
import type { Recording, Topology } from "../../client/types";
import { SeedSpread } from "./SeedSpread";
import { betterPct, withModelRun } from "./published";
import { seedResults, useSeedRuns } from "./useSeedRuns";
import { MACHINES, sweepParams, sweepSpec, TOGGLES } from "./sweepView";
import { SweepResult } from "./AcrossSweep";
import type { SimSweepResult } from "../../client/types";
import { StoredSweeps } from "./StoredSweeps";
import { TickList } from "./TickList";
import { useSavedSweep } from "./useSavedSweep";
import { useSweepJob } from "./useSweepJob";
import "../whatif/whatif.css";
import { api } from "../../client/http";

interface Props {
  /** the recordings list the dashboard keeps (RecordingsPanel's): the recorded hosts come from it */
  recordings: Recording[];
  /** open a finished run */
  onOpen: (id: string) => void;
  /** open `main` with `other` beside it */
  onComparePair: (main: string, other: string) => void;
  /** the stored sweep the view shows (?sweep=ID), and the call that changes it */
  sweepId?: string | null;
  onSweep?: (id: string | null) => void;
}

export function Simulate({ recordings, onOpen, onComparePair, sweepId = null, onSweep }: Props) {
  // a link to a stored sweep opens the panel on its result
  const [open, setOpen] = useState(sweepId !== null);
  // the form, whose submit button a pick in a result table brings into view (showSubmit)
  const formRef = useRef<HTMLFormElement>(null);
  const { opts, choice, set, err: optsErr } = useSimChoice<SimChoice>(open, defaultSimChoice);
  const { job, base, err: jobErr, submit } = useJobPair();
  const seeds = useSeedRuns();
  const hosts = useHosts(open, recordings);
  const sweep = useSweepJob();
  const [sweepErr, setSweepErr] = useState<string | null>(null);
  const doneSweepId = sweep.job?.status === "done" ? sweep.job.sweep_id ?? null : null;
  // the finished sweep's link goes in the URL, so that a reload or a shared link opens it again
  useEffect(() => {
    if (doneSweepId !== null) onSweep?.(doneSweepId);
  }, [doneSweepId, onSweep]);
  const stored = useSavedSweep(sweepId !== null && sweepId !== doneSweepId ? sweepId : null);
  // the form as it was when it ran the stored sweep, once each is loaded
  const storedId = stored.saved?.id ?? null;
  useEffect(() => {
    const saved = stored.saved;
    // a recording's replay is rerun from that recording's What if form, not this one
    if (saved === null || !opts || replayedRecording(saved.scenario) !== null) return;
    const names = [...opts.presets, ...Object.keys(storedHosts(saved.sweep) ?? {})];
    set((c) => choiceOfSweep(c, saved.scenario, { param: saved.result.param, values: saved.result.values, seeds: saved.result.seeds, calibrated: saved.result.calibrated, across: saved.result.across }, opts, names));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per stored sweep, when the options are there
  }, [storedId, opts !== null]);
  const err = optsErr ?? jobErr ?? seeds.err;
  // the machines a sweep can run on beside the presets: the recorded hosts, and the stored sweep's own
  const savedHosts = useMemo(() => (stored.saved ? storedHosts(stored.saved.sweep) : null), [stored.saved]);
  const machineHosts = useMemo(() => sweepHosts(opts?.presets ?? [], hosts, savedHosts), [opts, hosts, savedHosts]);
  const machineNames = [...(opts?.presets ?? []), ...machineHosts.keys()];
  const machineNotes = new Map([...machineHosts].map(([n, h]) => [n, { note: "recorded", title: h.label }]));

  const run = async () => {
    if (!opts || !choice) return;
    const changes = changesSomething(choice, opts);
    const sw = sweepSpec(choice.sweepParam, choice.sweepValues, opts.workloads[choice.kind] ?? [], changes, choice.seeds, opts.presets, opts.sweep_toggles, choice.sweepCalibrated && opts.sweep_calibrated[choice.kind] === choice.sweepParam, choice.sweepCombos, choice.sweepAcross, machineHosts);
    setSweepErr(sw !== null && "error" in sw ? sw.error : null);
    if (sw !== null && "error" in sw) return; // nothing runs until the values are right
    const baseline = changes ? simScenario(baselineOf(choice, opts), opts) : null;
    const extra = extraSeedPairs(choice, opts, changes);
    // the last submission's further seeds cancelled, then the saved pair, so that it runs first,
    // and the further seeds behind it
    await seeds.submit([]);
    await sweep.submit({}, null);
    onSweep?.(null); // the sweep shown was the last one's
    await submit(simScenario(choice, opts), baseline, true);
    await seeds.submit(extra);
    if (sw !== null) await sweep.submit(simScenario(choice, opts), sw.spec);
  };
  const sweepJob = sweep.job;
  const sweeping = sweepJob !== null && (sweepJob.status === "queued" || sweepJob.status === "running");
  // the finished sweep's result, unless another stored one was opened since
  const showJob = sweepJob?.status === "done" && (sweepId === null || sweepId === sweepJob.sweep_id);
  const busy = job !== null && (job.status === "queued" || job.status === "running");
  const result = job?.status === "done" ? job.result : null;
  // the saved pair's seed, which the further seeds follow (the scenario as the job was submitted)
  const firstSeed = job?.status === "done" ? Number(job.scenario.seed) : 0;
  const baseResult = base?.status === "done" ? base.result : null;
  // the change, percent better, against which the published cells are read: every seed's once the
  // further seeds have all ended, the saved pair's until then
  const allSeeds = [{ seed: firstSeed, job, base }, ...seeds.runs];
  const seedsDone = seeds.runs.length > 0 && allSeeds.every((r) => jobEnded(r.job) && jobEnded(r.base));
  const pairs = seedsDone ? seedResults(allSeeds) : result && baseResult ? [{ seed: firstSeed, run: result, base: baseResult }] : [];
  const better = result?.metric.better ?? "lower";
  const changes = pairs
    .map((r) => ("failed" in r || !comparable(r.run, r.base) ? null : betterPct(r.run.metric.value, r.base.metric.value, better)))
    .filter((v): v is number => v !== null);
  const runId = job?.status === "done" ? job.recording_id : null;
  const storedReplay = stored.saved ? replayedRecording(stored.saved.scenario) : null;
  // a machine picked in a sweep's result becomes the form's: a preset, or a recorded host's topology
  const pickMachine = (m: string) => {
    set((c) => withMachine(c, m, machineHosts));
    showSubmit(formRef.current);
  };
  // a sweep's result, a value or machine picked in it set in the form
  const sweepResult = (r: SimSweepResult, scenario: Record<string, unknown>, link: string | null, hosts: Readonly<Record<string, Topology>> | null) => (
    <SweepResult
      r={r}
      scenario={scenario}
      link={link}
      hosts={hosts}
      onPick={(x) => {
        if (r.param === MACHINES) pickMachine(String(x));
        else if (opts) {
          set((c) => pickSwept(c, r.param, x, opts));
          showSubmit(formRef.current);
        }
      }}
      onPickMachine={pickMachine}
    />
  );
  const baseId = base?.status === "done" ? base.recording_id : null;

  return (
    <div className="whatif simulate" data-testid="simulate">
      <Toggle open={open} setOpen={setOpen} title="Simulate…" />
      {open && opts && choice && (
        <SimForm label="Simulate" formRef={formRef} onSubmit={() => { void run(); }}>
          <MachineSelect
            label="machine"
            value={choice.topology}
            body={choice.topologyBody}
            presets={opts.presets}
            hosts={hosts}
            hostsLabel="recorded hosts"
            onChange={(v, body) => { set((c) => ({ ...c, topology: v, topologyBody: body })); }}
          />
          <label>
            workload{" "}
            <select value={choice.kind} aria-label="workload" onChange={(e) => { const v = e.target.value; set((c) => withKind(c, v, opts)); }}>
              {Object.keys(opts.workloads).map((k) => <option key={k} value={k}>{k}</option>)}
            </select>
          </label>
          <fieldset>
            <legend>{choice.kind}</legend>
            {(opts.workloads[choice.kind] ?? []).map((p) => (
              <label key={p.name} title={p.help}>
                {p.name}{" "}
                {p.type === "choice" ? (
                  <select value={String(choice.params[p.name])} aria-label={p.name} onChange={(e) => { const v = e.target.value; set((c) => ({ ...c, params: { ...c.params, [p.name]: v } })); }}>
                    {(p.choices ?? []).map((x) => <option key={x} value={x}>{x}</option>)}
                  </select>
                ) : (
                  <input
                    type="number"
                    aria-label={p.name}
                    min={p.min ?? undefined}
                    max={p.max ?? undefined}
                    value={choice.params[p.name]}
                    onChange={(e) => { const v = Math.floor(Number(e.target.value)); set((c) => ({ ...c, params: { ...c.params, [p.name]: v } })); }}
                  />
                )}
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>sweep</legend>
            <label title="run the scenario at each of these values of one integer parameter too, on each of several machines, or with each of several toggles instead of the form's (each beside its baseline when hints or features change; toggles always), and see where the change turns, or where it helps and hurts">
              parameter{" "}
              <select value={choice.sweepParam} aria-label="sweep parameter" onChange={(e) => { const v = e.target.value; set((c) => withSweepParam(c, v, opts)); }}>
                <option value="">none</option>
                {sweepParams(opts.workloads[choice.kind] ?? []).map((p) => <option key={p.name} value={p.name}>{p.name}</option>)}
                <option value={MACHINES}>machines</option>
                <option value={TOGGLES}>toggles</option>
              </select>
            </label>
            {choice.sweepParam === MACHINES && (
              <TickList label="sweep presets" names={machineNames} notes={machineNotes} ticked={choice.sweepValues} onChange={(v) => { set((c) => ({ ...c, sweepValues: v })); }} />
            )}
            {choice.sweepParam === TOGGLES && (
              <>
                <TickList label="sweep toggles" names={opts.sweep_toggles} ticked={choice.sweepValues} onChange={(v) => { set((c) => ({ ...c, sweepValues: v })); }} />
                <label title="more toggles to run, separated by commas: hints and features joined by +, a feature turned off by NO_, an integer feature by name=value">
                  combinations{" "}
                  <input type="text" size={22} placeholder="fork_affine+wake_affine" value={choice.sweepCombos} aria-label="sweep combinations" onChange={(e) => { const v = e.target.value; set((c) => ({ ...c, sweepCombos: v })); }} />
                </label>
              </>
            )}
            {choice.sweepParam !== "" && choice.sweepParam !== MACHINES && choice.sweepParam !== TOGGLES && (
              <label title="2 to 10 different whole numbers, separated by commas or spaces">
                values{" "}
                <input type="text" size={14} placeholder="1,2,4,8,16" value={choice.sweepValues} aria-label="sweep values" onChange={(e) => { const v = e.target.value; set((c) => ({ ...c, sweepValues: v })); }} />
              </label>
            )}
            {choice.sweepParam !== "" && choice.sweepParam !== MACHINES && (
              <div title="run the whole sweep on each machine ticked (two or more; none: on the form's machine alone), and see every value on every machine in one table">
                <span className="muted">across machines (none: this one alone)</span>
                <TickList label="sweep across" names={machineNames} notes={machineNotes} ticked={choice.sweepAcross} onChange={(v) => { set((c) => ({ ...c, sweepAcross: v })); }} />
              </div>
            )}
            {opts.sweep_calibrated[choice.kind] === choice.sweepParam && choice.sweepParam !== "" && (
              <label title="run each value as placemap calibrate runs the published cell there: the calibration's workload parameters and run length (tbench's grows with its clients), instead of the form's">
                <input type="checkbox" checked={choice.sweepCalibrated} aria-label="as calibrate runs it" onChange={(e) => { const on = e.target.checked; set((c) => ({ ...c, sweepCalibrated: on })); }} /> as calibrate runs it
              </label>
            )}
          </fieldset>
          <ToggleFields opts={opts} choice={choice} set={set} />
          <label title="the CPU the workload's main task starts on, schbench's sleep jitter, the spacing of tbench's, netperf's and ctxswitch's forks">
            seed{" "}
            <input
              type="number"
              min={0}
              value={choice.seed}
              aria-label="seed"
              onChange={(e) => { const v = Math.max(0, Math.floor(Number(e.target.value) || 0)); set((c) => ({ ...c, seed: v })); }}
            />
          </label>
          <label title="with hints or feature changes: also run the pair on the seeds after this one (not saved) and say whether the change holds on every seed">
            seeds{" "}
            <input
              type="number"
              min={1}
              max={MAX_SEEDS}
              value={choice.seeds}
              aria-label="seeds"
              onChange={(e) => { const v = Math.min(MAX_SEEDS, Math.max(1, Math.floor(Number(e.target.value) || 1))); set((c) => ({ ...c, seeds: v })); }}
            />
          </label>
          <label>
            simulated ms{" "}
            <input
              type="number"
              min={1}
              max={opts.max_duration_ms}
              value={choice.durationMs}
              aria-label="simulated ms"
              onChange={(e) => { const v = Math.floor(Number(e.target.value)); set((c) => ({ ...c, durationMs: v })); }}
            />
          </label>
          <button type="submit" disabled={busy}>Simulate</button>
        </SimForm>
      )}
      {busy && <progress max={1} value={job.progress} aria-label="simulation progress" data-testid="simulate-progress" />}
      {result && (
        <div className="whatif-result small" data-testid="simulate-result">
          <span className="mono">{result.metric.name}</span> <b data-testid="simulate-value">{metricText(result)}</b>
          {baseResult && comparable(result, baseResult) && (
            <span data-testid="simulate-change">
              {" "}
              against <b>{formatMetric(baseResult.metric)}</b> without the hints and feature changes:{" "}
              {pctText(changePct(result.metric.value, baseResult.metric.value))}, {verdict(result.metric.value, baseResult.metric.value, result.metric.better)} ({result.metric.better} is better)
            </span>
          )}
          {result.latency_us != null && <LatencyLine run={result.latency_us} base={baseResult?.latency_us ?? null} />}
          {seeds.runs.length > 0 && (
            <SeedSpread runs={allSeeds} better={result.metric.better} />
          )}
          {job && baseResult && comparable(result, baseResult) && (
            <Published scenario={job.scenario} jobId={job.id} changes={changes} seeds={seedsDone} onUseModelRun={(c) => { set((ch) => withModelRun(ch, c)); }} />
          )}
          <DecisionShift without={baseResult?.decisions} withChanges={result.decisions} testId="simulate-why" />
          <WakerShift without={baseResult?.counters.wakeups.by_waker} withChanges={result.counters.wakeups.by_waker} testId="simulate-by-waker" hints={wakeHints(job?.scenario)} />
          <LlcUtil run={result.llc_util} base={baseResult?.llc_util} />
          {base !== null && baseResult === null && base.status !== "failed" && <span className="muted"> (its baseline is running)</span>}
          {baseResult && !comparable(result, baseResult) && (
            <span className="muted" data-testid="simulate-nochange">
              {` (not compared with its baseline: ${whyNotCompared(result, baseResult)})`}
            </span>
          )}
          {!result.sim.complete && (
            <span className="muted" data-testid="simulate-incomplete">
              {` (${result.sim.incomplete ?? "the run did not complete"})`}
            </span>
          )}
          {runId && (
            <button type="button" className="linkish" onClick={() => { onOpen(runId); }}>
              open the run
            </button>
          )}
          {runId && baseId && (
            <button type="button" className="linkish" onClick={() => { onComparePair(baseId, runId); }}>
              compare with the baseline side by side
            </button>
          )}
          {runId && (
            <span data-testid="simulate-ftrace">
              {" "}ftrace text:{" "}
              <a href={api.traceTextUrl(runId)} download title="the run's events as the lines cat trace prints">the run</a>
              {baseId && (
                <>
                  {" · "}
                  <a href={api.traceTextUrl(baseId)} download title="its baseline's events as the lines cat trace prints">its baseline</a>
                </>
              )}
            </span>
          )}
          {job && <Reproduce scenario={job.scenario} baseline={base !== null} seeds={1 + seeds.runs.length} />}
        </div>
      )}
      {sweeping && (
        <div className="small">
          <progress max={1} value={sweepJob.progress} aria-label="sweep progress" data-testid="sweep-progress" />{" "}
          <button type="button" className="linkish" title="cancel the sweep: its runs so far are lost, as a sweep is stored only once done" onClick={() => { void sweep.stop(); }}>stop the sweep</button>
        </div>
      )}
      {showJob && sweepJob.sweep_result && (
        <div className="whatif-result small">
          {sweepResult(sweepJob.sweep_result, sweepJob.scenario, sweepJob.sweep_id ?? null, sweepJob.sweep ? storedHosts(sweepJob.sweep) : null)}
        </div>
      )}
      {stored.saved && !showJob && (
        <div className="whatif-result small" data-testid="sweep-stored">
          <div className="muted">a stored sweep, run {stored.saved.created_at.replace("T", " ").slice(0, 19)} UTC</div>
          {storedReplay !== null && (
            <div className="muted" data-testid="sweep-stored-replay">
              a replay of a recording:{" "}
              <button type="button" className="linkish" onClick={() => { onOpen(storedReplay); }}>open the recording</button> (its What if… form runs it again)
            </div>
          )}
          {sweepResult(stored.saved.result, stored.saved.scenario, stored.saved.id, savedHosts)}
        </div>
      )}
      {stored.err && <div className="error small" data-testid="sweep-error">{stored.err}</div>}
      {open && <StoredSweeps refresh={doneSweepId} current={sweepId} onOpen={(id) => { onSweep?.(id); }} onDeleted={(id) => { if (id === sweepId) onSweep?.(null); }} />}
      {sweepJob?.status === "failed" && <div className="error small" data-testid="sweep-error">sweep: {sweepJob.error?.message ?? "the job failed"}</div>}
      {(sweepErr ?? sweep.err) && <div className="error small" data-testid="sweep-error">{sweepErr ?? sweep.err}</div>}
      {job?.status === "failed" && <div className="error small" data-testid="simulate-error">{job.error?.message ?? "the job failed"}</div>}
      {base?.status === "failed" && <div className="error small" data-testid="simulate-error">baseline: {base.error?.message ?? "the job failed"}</div>}
      {err && <div className="error small" data-testid="simulate-error">{err}</div>}
    </div>
  );
}
