/** TopologyNotes rendered by React itself (server renderer, no DOM needed): collapsed, every note as escaped text. */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { TopologyNotes } from "./TopologyNotes";

const render = (notes: string[] | null | undefined) => renderToStaticMarkup(createElement(TopologyNotes, { notes }));

describe("TopologyNotes", () => {
  it("renders nothing without notes (null from the API, absent, or empty)", () => {
    expect(render(null)).toBe("");
    expect(render(undefined)).toBe("");
    expect(render([])).toBe("");
  });

  it("is a closed details element listing every note", () => {
    const html = render(["CPUs 0-3,21-23 were offline when the topology was read", "NUMA nodes 4-5 have no CPUs"]);
    expect(html).toMatch(/^<details[^>]*data-testid="topology-notes"[^>]*>/);
    expect(html).not.toMatch(/<details[^>]*\sopen/);
    expect(html).toContain(">topology notes (2): CPUs 0-3,21-23 were offline when the topology was read</summary>");
    expect(html.match(/<li>/g)).toHaveLength(2);
    expect(html).toContain("<li>NUMA nodes 4-5 have no CPUs</li>");
  });

  it("escapes hostile notes", () => {
    const html = render(['<script>alert(1)</script> & <img src=x onerror="y">']);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("<li>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x onerror=&quot;y&quot;&gt;</li>");
  });
});
