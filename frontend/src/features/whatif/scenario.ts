/**
 * The what-if form's choices -> the simulator scenario that replays a recording under them
 * (a trace workload naming the recording, POST /api/sim/jobs). Pure, for the form and its tests.
 */
import type { SimOptions, SimSweepSpec, Topology } from "../../client/types";
import type { Toggles } from "./ToggleFields";
import { hostsOf } from "../simulate/hosts";

export interface WhatIfChoice extends Toggles {
  /** "recorded" (the recording's own host topology), a preset name, or another recorded host
   * (hosts.ts: HOST_PREFIX + topology id) */
  topology: string;
  /** another recorded host's topology, sent inline (null for "recorded" and the presets) */
  topologyBody: Topology | null;
}

/** The simulated time to allow: four times the recording's span, at least a second (the run stops
 * when every replayed task has ended, so a longer allowance costs nothing), at most `maxMs` (the
 * simulator's limit, GET /api/sim/options' max_duration_ms). */
export function durationMs(spanNs: number, maxMs: number): number {
  const ms = Math.ceil((4 * Math.max(0, spanNs)) / 1e6);
  return Math.min(maxMs, Math.max(1000, ms));
}

/** No hint, every feature at its default, seed 1. */
export function defaultToggles(opts: SimOptions): Toggles {
  const features: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(opts.features)) if (typeof v === "boolean") features[k] = v;
  const hints: Record<string, string> = {};
  for (const cat of Object.keys(opts.hint_categories)) hints[cat] = "";
  return { hints, features, seed: 1 };
}

/** The scenario's hints and the features that differ from their defaults. */
export function toggleParts(choice: Toggles, opts: SimOptions): { hints: string[]; features: Record<string, boolean> } {
  const hints = Object.values(choice.hints).filter((h) => h !== "");
  const features: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(choice.features)) if (opts.features[k] !== v) features[k] = v;
  return { hints, features };
}

export function defaultChoice(opts: SimOptions, hasTopology: boolean): WhatIfChoice {
  return { ...defaultToggles(opts), topology: hasTopology ? "recorded" : (opts.presets[0] ?? "zen3-2s-nps1"), topologyBody: null };
}

export function whatIfScenario(recordingId: string, spanNs: number, choice: WhatIfChoice, opts: SimOptions): Record<string, unknown> {
  return {
    topology: choice.topologyBody ?? choice.topology,
    workload: { kind: "trace", recording: recordingId },
    ...toggleParts(choice, opts),
    seed: choice.seed,
    duration_ms: durationMs(spanNs, opts.max_duration_ms),
  };
}

/** The recording's feature table: the sweep that replays it under every toggle on its own (each
 * hint, each feature switched away from its default), each against the one replay without any, on
 * the form's machine or across `across` (two or more machines: "recorded", presets, and names of
 * `hosts`, other recorded hosts, whose topologies go with it). The form's own toggles are not in
 * it: each toggle runs instead of them. */
export function featureTable(recordingId: string, spanNs: number, choice: WhatIfChoice, opts: SimOptions, across: string[], hosts: ReadonlyMap<string, { topology: Topology }> = new Map()): { scenario: Record<string, unknown>; spec: SimSweepSpec } {
  const spec: SimSweepSpec = { param: "toggle", values: ["all"], baseline: true, seeds: 1, calibrated: false };
  return {
    scenario: whatIfScenario(recordingId, spanNs, baselineOf(choice, opts), opts),
    spec: { ...spec, ...(across.length > 0 ? { across } : {}), ...hostsOf(across, hosts) },
  };
}

/** The same replay without the choice's hints and feature changes (same topology and seed): what
 * the what-if is compared with, so that the model's own error on the recording cancels out. */
export function baselineOf<T extends Toggles>(choice: T, opts: SimOptions): T {
  const base = defaultToggles(opts);
  return { ...choice, hints: base.hints, features: base.features };
}

/** Whether the choice changes anything that the baseline does not have. */
export function changesSomething(choice: Toggles, opts: SimOptions): boolean {
  const t = toggleParts(choice, opts);
  return t.hints.length > 0 || Object.keys(t.features).length > 0;
}

/** A run's metric against its baseline's, as a signed percentage of the baseline. */
export function changePct(value: number, baseline: number): number {
  return baseline > 0 ? ((value - baseline) / baseline) * 100 : 0;
}

/** A signed percentage, one decimal ("+3.2%", "-35.1%"): how both forms show a change. */
export function pctText(v: number): string {
  return `${v >= 0 ? "+" : ""}${v.toFixed(1)}%`;
}

/** The trace profile's skip counts from a twin recording's stored scenario ({} when absent). */
export function profileSkips(scenario: unknown): Record<string, number> {
  const wl = typeof scenario === "object" && scenario !== null ? (scenario as Record<string, unknown>).workload : null;
  const prof = typeof wl === "object" && wl !== null ? (wl as Record<string, unknown>).profile : null;
  const sk = typeof prof === "object" && prof !== null ? (prof as Record<string, unknown>).skipped : null;
  const out: Record<string, number> = {};
  if (typeof sk === "object" && sk !== null) {
    for (const [k, v] of Object.entries(sk)) if (typeof v === "number") out[k] = v;
  }
  return out;
}
