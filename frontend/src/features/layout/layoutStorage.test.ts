import { describe, expect, it } from "vitest";
import { guardedStorage, validLayout } from "./layoutStorage";

describe("validLayout", () => {
  it("passes an object of percentages through as it was stored", () => {
    const raw = '{"left":19.5,"center":55.5,"right":25}';
    expect(validLayout(raw)).toBe(raw);
  });
  it.each([
    ["nothing stored", null],
    ["not JSON", "{not json"],
    ["JSON null", "null"],
    ["an array", "[40, 40, 20]"],
    ["an empty object", "{}"],
    ["a width that is a string", '{"left":"wide","center":50}'],
    ["an infinite width", '{"left":1e999}'],
    ["a negative width", '{"left":-5,"center":105}'],
    ["a width beyond 100%", '{"left":120}'],
  ])("refuses %s", (_what, raw) => {
    expect(validLayout(raw)).toBeNull();
  });
});

describe("guardedStorage", () => {
  it("reads and writes the backing storage, handing back only valid layouts", () => {
    const backing = new Map<string, string>();
    const s = guardedStorage(() => ({ getItem: (k) => backing.get(k) ?? null, setItem: (k, v) => void backing.set(k, v) }));
    s.setItem("a", '{"left":30,"center":70}');
    expect(backing.get("a")).toBe('{"left":30,"center":70}');
    expect(s.getItem("a")).toBe('{"left":30,"center":70}');
    backing.set("a", "garbage");
    expect(s.getItem("a")).toBeNull();
  });
  it("keeps the layout for the visit when the browser refuses storage, and never throws", () => {
    const refuse = () => {
      throw new DOMException("denied", "SecurityError");
    };
    const s = guardedStorage(() => ({ getItem: refuse, setItem: refuse }));
    expect(s.getItem("a")).toBeNull();
    s.setItem("a", '{"left":30,"center":70}');
    expect(s.getItem("a")).toBe('{"left":30,"center":70}');
    const none = guardedStorage(() => null);
    none.setItem("b", '{"left":20,"center":80}');
    expect(none.getItem("b")).toBe('{"left":20,"center":80}');
  });
});
