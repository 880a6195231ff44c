/** SimulatedMeta rendered by React itself (server renderer, no DOM needed): badge, scenario parts, escaping. */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Recording } from "../../client/types";
import { SimulatedMeta, scenarioSummary } from "./SimulatedMeta";

const base: Recording = {
  id: "r1",
  name: "sim zen3-2s-nps1 schbench seed 1",
  source: "simulated",
  status: "ready",
  created_at: "2026-11-22T00:00:00Z",
  event_count: 10,
  t_start_ns: 0,
  t_end_ns: 1,
  cpus_seen: [0],
  lost_events: 0,
  events_by_kind: {},
  bytes_stored: 1,
  chunk_count: 1,
};
const render = (rec: Recording) => renderToStaticMarkup(createElement(SimulatedMeta, { rec }));

describe("SimulatedMeta", () => {
  it("renders nothing for imported and live recordings", () => {
    expect(render({ ...base, source: "imported", scenario: { topology: "x" } })).toBe("");
    expect(render({ ...base, source: "live" })).toBe("");
  });

  it("shows the run's metric, marked when its p99 has few wakeups, and none for a run without it", () => {
    const sim_metric = { name: "p99_wakeup_latency_us", value: 39.9, better: "lower" as const, complete: true, incomplete: null, samples: 24, note: "few samples: <b>" };
    const html = render({ ...base, scenario: { topology: "zen3-2s-nps1" }, sim_metric });
    expect(html).toContain('<span data-testid="sim-metric" class="few-samples" title="few samples: &lt;b&gt;">p99_wakeup_latency_us 39.9 us over 24 wakeups</span>');
    const plain = render({ ...base, scenario: { topology: "zen3-2s-nps1" }, sim_metric: { ...sim_metric, samples: 400, note: null } });
    expect(plain).toContain('<span data-testid="sim-metric">p99_wakeup_latency_us 39.9 us over 400 wakeups</span>');
    expect(render({ ...base, scenario: { topology: "zen3-2s-nps1" } })).not.toContain("sim-metric");
  });

  it("shows the badge, topology, workload, hints and features", () => {
    const html = render({
      ...base,
      scenario: { topology: "zen3-2s-nps1", workload: { kind: "schbench", workers: 16 }, hints: ["fork_affine", "wake_wide"], features: { SIS_SHORT: true, SIS_UTIL: false } },
    });
    expect(html).toContain('data-testid="sim-badge">simulated</span>');
    expect(html).toContain(">zen3-2s-nps1 · schbench</span>");
    expect(html).toContain(" · hints fork_affine, wake_wide</span>");
    expect(html).toContain(" · features SIS_SHORT=on, SIS_UTIL=off</span>");
  });

  it("still marks a simulated recording without a stored scenario", () => {
    const html = render({ ...base, scenario: null });
    expect(html).toContain(">simulated</span>");
    expect(html).not.toContain("hints");
    expect(html).toContain('title="no scenario stored"');
  });

  it("escapes hostile scenario text", () => {
    const evil = '<script>alert(1)</script> & <img src=x onerror="y">';
    const html = render({ ...base, scenario: { topology: { machine: evil }, workload: { kind: evil }, hints: [evil], features: { [evil]: evil } } });
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x onerror=&quot;y&quot;&gt;");
  });

  it("summarises odd shapes without throwing", () => {
    expect(scenarioSummary("nope")).toEqual({ topology: null, workload: null, hints: [], features: [] });
    expect(scenarioSummary({ topology: 3, workload: [], hints: "x", features: [1] })).toEqual({ topology: null, workload: null, hints: [], features: [] });
    expect(scenarioSummary({ hints: [1, { a: 2 }] }).hints).toEqual(["1", '{"a":2}']);
  });
});

describe("a replayed recording", () => {
  it("says what it replayed, from the profile's source", () => {
    const s = scenarioSummary({
      topology: "zen3-2s-nps1",
      workload: { kind: "trace", profile: { source: "recording abc", recorded_ns: 5, tasks: 3 } },
      hints: ["wake_affine"],
    });
    expect(s.workload).toBe("trace of recording abc");
    expect(scenarioSummary({ workload: { kind: "trace", profile: { source: "" } } }).workload).toBe("trace");
    const html = renderToStaticMarkup(
      createElement(SimulatedMeta, {
        rec: { ...base, scenario: { workload: { kind: "trace", profile: { source: "file <b>x</b>.txt" } } } },
      }),
    );
    expect(html).toContain("trace of file &lt;b&gt;x&lt;/b&gt;.txt");
  });
});
