/**
 * A simulated recording's line in the recordings list: a "simulated" badge and what was simulated
 * (topology, workload, hints, features) read from the recording's scenario, and the run's metric (in
 * the warning colour when a latency has few samples). Every value is shown as text; the full scenario
 * is in the tooltip.
 */
import type { Recording } from "../../client/types";
import { simMetricText } from "../compare/simMetric";
import "./simulated.css";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function scalar(v: unknown): string {
  if (v === true) return "on";
  if (v === false) return "off";
  return typeof v === "string" || typeof v === "number" ? String(v) : JSON.stringify(v);
}

/** The scenario's parts worth a glance, in order; absent parts are left out. */
export function scenarioSummary(scenario: unknown): { topology: string | null; workload: string | null; hints: string[]; features: string[] } {
  const sc = isObject(scenario) ? scenario : {};
  const topo = sc.topology;
  const topology = typeof topo === "string" ? topo : isObject(topo) && typeof topo.machine === "string" ? topo.machine : null;
  const wl = sc.workload;
  let workload = isObject(wl) && wl.kind !== undefined ? scalar(wl.kind) : null;
  // a replayed recording: the profile's source ("recording ID", "file NAME")
  const prof = isObject(wl) ? wl.profile : undefined;
  if (workload === "trace" && isObject(prof) && typeof prof.source === "string" && prof.source) workload = `trace of ${prof.source}`;
  const hints = Array.isArray(sc.hints) ? sc.hints.map(scalar) : [];
  const features = isObject(sc.features) ? Object.entries(sc.features).map(([k, v]) => `${k}=${scalar(v)}`) : [];
  return { topology, workload, hints, features };
}

export function SimulatedMeta({ rec }: { rec: Recording }) {
  if (rec.source !== "simulated") return null;
  const s = scenarioSummary(rec.scenario);
  const parts = [s.topology, s.workload].filter((x): x is string => x !== null);
  return (
    <span className="sim-meta small" data-testid="sim-rec-meta" title={rec.scenario ? JSON.stringify(rec.scenario, null, 1) : "no scenario stored"}>
      <span className="badge sim" data-testid="sim-badge">simulated</span>{" "}
      {parts.length > 0 && <span className="mono">{parts.join(" · ")}</span>}
      {s.hints.length > 0 && (
        <span data-testid="sim-hints">
          {" · hints "}
          {s.hints.join(", ")}
        </span>
      )}
      {s.features.length > 0 && (
        <span data-testid="sim-features">
          {" · features "}
          {s.features.join(", ")}
        </span>
      )}
      {rec.sim_metric && (
        <>
          {" · "}
          <span data-testid="sim-metric" className={rec.sim_metric.note !== null ? "few-samples" : undefined} title={rec.sim_metric.note ?? rec.sim_metric.incomplete ?? undefined}>
            {simMetricText(rec.sim_metric)}
          </span>
        </>
      )}
    </span>
  );
}
