import { describe, expect, it } from "vitest";
import { openWidths, pixelStorage, toLayout, toPixels } from "./layoutStorage";

const SIDES = ["column-left", "column-right"] as const;
const CENTER = "column-center";

describe("toPixels / toLayout", () => {
  it("keeps the side columns' pixels: at the same window the layout comes back, at a wider one the sides keep their width", () => {
    const px = toPixels('{"column-left":37.5,"column-center":37.5,"column-right":25}', SIDES, 1280);
    expect(px).toBe('{"column-left":480,"column-right":320}');
    expect(JSON.parse(toLayout(px, SIDES, CENTER, 1280) ?? "null")).toEqual({ "column-left": 37.5, "column-right": 25, "column-center": 37.5 });
    // 480 and 320 px of a 1600 px window: 30% and 20%, the middle the other half
    expect(JSON.parse(toLayout(px, SIDES, CENTER, 1600) ?? "null")).toEqual({ "column-left": 30, "column-right": 20, "column-center": 50 });
  });
  it("scales the sides down together when a narrower window cannot hold them", () => {
    const got = JSON.parse(toLayout('{"column-left":600,"column-right":600}', SIDES, CENTER, 1000) ?? "null") as Record<string, number>;
    expect(got).toEqual({ "column-left": 50, "column-right": 50, "column-center": 0 });
  });
  it.each([
    ["nothing stored", null],
    ["not JSON", "{not json"],
    ["JSON null", "null"],
    ["an array", "[480, 320]"],
    ["an empty object", "{}"],
    ["a side missing", '{"column-left":480}'],
    ["a width that is a string", '{"column-left":"wide","column-right":320}'],
    ["an infinite width", '{"column-left":1e999,"column-right":320}'],
    ["a negative width", '{"column-left":-5,"column-right":320}'],
    ["an absurd width", '{"column-left":1e9,"column-right":320}'],
  ])("reads %s as no layout", (_what, raw) => {
    expect(toLayout(raw, SIDES, CENTER, 1280)).toBeNull();
  });
  it("stores nothing for a layout that is not the library's", () => {
    expect(toPixels('{"column-left":120,"column-right":10}', SIDES, 1280)).toBeNull();
    expect(toPixels('{"column-left":20}', SIDES, 1280)).toBeNull();
    expect(toPixels('{"column-left":20,"column-right":20}', SIDES, 0)).toBeNull();
  });
});

describe("a folded side's open width", () => {
  it("is kept beside the fold: its width in the record before, or the open width that record kept", () => {
    const open = toPixels('{"column-left":37.5,"column-center":37.5,"column-right":25}', SIDES, 1280);
    const folded = toPixels('{"column-left":0,"column-center":75,"column-right":25}', SIDES, 1280, open);
    expect(folded).toBe('{"column-left":0,"column-right":320,"open":{"column-left":480}}');
    // folded again (the other side this time): the first fold's open width is carried on
    const both = toPixels('{"column-left":0,"column-center":100,"column-right":0}', SIDES, 1280, folded);
    expect(openWidths(both, SIDES)).toEqual({ "column-left": 480, "column-right": 320 });
    // unfolded: nothing to keep; the layout itself reads as before
    expect(toPixels('{"column-left":30,"column-center":45,"column-right":25}', SIDES, 1280, both)).toBe('{"column-left":384,"column-right":320}');
    expect(JSON.parse(toLayout(folded, SIDES, CENTER, 1280) ?? "null")).toEqual({ "column-left": 0, "column-right": 25, "column-center": 75 });
  });
  it("is none when nothing open was stored before the fold", () => {
    expect(toPixels('{"column-left":0,"column-center":75,"column-right":25}', SIDES, 1280)).toBe('{"column-left":0,"column-right":320}');
    expect(toPixels('{"column-left":0,"column-center":75,"column-right":25}', SIDES, 1280, "garbage")).toBe('{"column-left":0,"column-right":320}');
  });
  it.each([
    ["not JSON", "{not"],
    ["no open", '{"column-left":0,"column-right":320}'],
    ["open not an object", '{"column-left":0,"column-right":320,"open":[480]}'],
    ["a string", '{"column-left":0,"column-right":320,"open":{"column-left":"480"}}'],
    ["zero", '{"column-left":0,"column-right":320,"open":{"column-left":0}}'],
    ["an absurd width", '{"column-left":0,"column-right":320,"open":{"column-left":1e9}}'],
  ])("reads %s as no open width", (_what, raw) => {
    expect(openWidths(raw, SIDES)).toEqual({});
  });
  it("is what pixelStorage says for the library's key, from the backing or from the visit", () => {
    const backing = new Map<string, string>();
    const s = pixelStorage(() => ({ getItem: (k) => backing.get(k) ?? null, setItem: (k, v) => void backing.set(k, v) }), SIDES, CENTER, () => 1000);
    expect(s.openWidth("column-left")).toBeNull();
    backing.set("k", '{"column-left":0,"column-right":300,"open":{"column-left":420}}');
    s.getItem("k");
    expect(s.openWidth("column-left")).toBe(420);
    expect(s.openWidth("column-right")).toBeNull();
    const refused = pixelStorage(() => null, SIDES, CENTER, () => 1000);
    refused.setItem("k", '{"column-left":40,"column-center":30,"column-right":30}');
    refused.setItem("k", '{"column-left":0,"column-center":70,"column-right":30}');
    expect(refused.openWidth("column-left")).toBe(400);
  });
});

describe("pixelStorage", () => {
  it("stores pixels in the backing storage and reads them back for the window of the moment", () => {
    const backing = new Map<string, string>();
    let width = 1280;
    const s = pixelStorage(() => ({ getItem: (k) => backing.get(k) ?? null, setItem: (k, v) => void backing.set(k, v) }), SIDES, CENTER, () => width);
    s.setItem("k", '{"column-left":25,"column-center":50,"column-right":25}');
    expect(backing.get("k")).toBe('{"column-left":320,"column-right":320}');
    width = 640;
    expect(JSON.parse(s.getItem("k") ?? "null")).toEqual({ "column-left": 50, "column-right": 50, "column-center": 0 });
    backing.set("k", "garbage");
    expect(s.getItem("k")).toBeNull();
  });
  it("keeps the layout for the visit when the browser refuses storage, and never throws", () => {
    const refuse = () => {
      throw new DOMException("denied", "SecurityError");
    };
    const s = pixelStorage(() => ({ getItem: refuse, setItem: refuse }), SIDES, CENTER, () => 1000);
    expect(s.getItem("k")).toBeNull();
    s.setItem("k", '{"column-left":20,"column-center":50,"column-right":30}');
    expect(JSON.parse(s.getItem("k") ?? "null")).toEqual({ "column-left": 20, "column-right": 30, "column-center": 50 });
    const none = pixelStorage(() => null, SIDES, CENTER, () => 1000);
    none.setItem("k", '{"column-left":20,"column-center":80,"column-right":0}');
    expect(JSON.parse(none.getItem("k") ?? "null")).toEqual({ "column-left": 20, "column-right": 0, "column-center": 80 });
  });
});
