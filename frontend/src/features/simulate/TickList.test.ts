/** TickList rendered by React itself (server renderer, no DOM needed): ticks, notes, a ticked name no
 * longer listed, and a hostile host name as text. */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { TickList } from "./TickList";

const render = (names: string[], ticked: string, notes?: ReadonlyMap<string, { note: string; title: string }>) =>
  renderToStaticMarkup(createElement(TickList, { label: "sweep across", names, ticked, onChange: () => undefined, notes }));

describe("TickList", () => {
  it("ticks the names given, notes a recorded host, and breaks names only after - _ +", () => {
    const html = render(["zen3-2s-nps1", "icx-2s", "lab"], "icx-2s,lab", new Map([["lab", { note: "recorded", title: "lab (recorded: 2 CPUs, 1 LLC, 1 node)" }]]));
    expect(html.match(/<input type="checkbox"/g)).toHaveLength(3);
    expect(html.match(/checked=""/g)).toHaveLength(2);
    expect(html).toContain("zen3-<wbr/>2s-<wbr/>nps1");
    expect(html).toContain('<label title="lab (recorded: 2 CPUs, 1 LLC, 1 node)">');
    expect(html).toContain('lab<span class="muted"> recorded</span>');
    expect(html).not.toContain("(gone)");
  });

  it("shows a ticked name no longer listed, ticked and marked gone, so that it can be unticked", () => {
    const html = render(["zen3-2s-nps1", "icx-2s"], "icx-2s,lab");
    expect(html.match(/<input type="checkbox"/g)).toHaveLength(3);
    expect(html).toContain('<label title="no longer listed here: untick it"><input type="checkbox" checked=""/><span>lab<span class="muted"> (gone)</span>');
  });

  it("escapes a hostile host name", () => {
    const html = render(["<script>alert(1)</script>"], "<script>alert(1)</script>", new Map([["<script>alert(1)</script>", { note: "recorded", title: '"><img src=x onerror=y>' }]]));
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});
