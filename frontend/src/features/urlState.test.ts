import { describe, expect, it } from "vitest";
import { formatView, parseView } from "./urlState";

describe("URL view state", () => {
  it("round-trips rec, t, sel and speed", () => {
    const v = { rec: "r-1", t: 450594375123, sel: 3733, speed: 0.05 };
    const s = formatView(v);
    expect(s).toBe("?rec=r-1&t=450594375123&sel=3733&speed=0.05");
    expect(parseView(s)).toEqual({ ...v, live: false });
  });
  it("carries live mode: following without t, paused at t", () => {
    expect(formatView({ rec: "r-1", t: null, sel: null, speed: 1, live: true })).toBe("?rec=r-1&live=1");
    expect(parseView("?rec=r-1&live=1")).toMatchObject({ rec: "r-1", t: null, live: true });
    expect(parseView("?rec=r-1&t=5&live=1")).toMatchObject({ t: 5, live: true });
    expect(parseView("?rec=r-1&live=yes").live).toBe(false);
  });
  it("carries the recording compared beside the open one", () => {
    const s = formatView({ rec: "r-1", t: 7, sel: null, speed: 1, cmp: "r-2" });
    expect(s).toBe("?rec=r-1&t=7&cmp=r-2");
    expect(parseView(s)).toMatchObject({ rec: "r-1", t: 7, cmp: "r-2" });
    expect(parseView("?rec=r-1&cmp=").cmp).toBeUndefined();
  });
  it("carries a stored sweep's result, with or without a recording open", () => {
    expect(formatView({ rec: null, t: null, sel: null, speed: 1, sweep: "s-1" })).toBe("?sweep=s-1");
    const s = formatView({ rec: "r-1", t: 7, sel: null, speed: 1, sweep: "s-1" });
    expect(s).toBe("?rec=r-1&t=7&sweep=s-1");
    expect(parseView(s)).toMatchObject({ rec: "r-1", t: 7, sweep: "s-1" });
    expect(parseView("?sweep=").sweep).toBeUndefined();
  });
  it("carries the counts up to the playhead, of a comparison or of one recording, only with a recording", () => {
    const s = formatView({ rec: "r-1", t: 7, sel: null, speed: 1, cmp: "r-2", counts: "playhead" });
    expect(s).toBe("?rec=r-1&t=7&cmp=r-2&counts=playhead");
    expect(parseView(s).counts).toBe("playhead");
    expect(formatView({ rec: "r-1", t: 7, sel: null, speed: 1, counts: "playhead" })).toBe("?rec=r-1&t=7&counts=playhead");
    expect(parseView("?rec=r-1&counts=playhead").counts).toBe("playhead");
    expect(formatView({ rec: null, t: null, sel: null, speed: 1, counts: "playhead" })).toBe("");
    expect(parseView("?counts=playhead").counts).toBeUndefined();
    expect(parseView("?rec=r-1&cmp=r-2&counts=whatever").counts).toBeUndefined();
  });
  it("carries the timeline's zoom, whole nanoseconds, only with a recording and in order", () => {
    const s = formatView({ rec: "r-1", t: 7, sel: null, speed: 1, zoom: [319_952_333_000.4, 319_953_000_000.2] });
    expect(s).toBe("?rec=r-1&t=7&zoom=319952333000%2C319953000001");
    expect(parseView(s).zoom).toEqual([319_952_333_000, 319_953_000_001]);
    expect(formatView({ rec: null, t: null, sel: null, speed: 1, zoom: [1, 2] })).toBe("");
    expect(parseView("?zoom=1,2").zoom).toBeUndefined();
    for (const bad of ["2,1", "1,1", "1", "a,b", "1,2,3", "-1,2", "1,99999999999999999999"]) {
      expect(parseView(`?rec=r-1&zoom=${bad}`).zoom).toBeUndefined();
    }
  });
  it("carries how the CPU lanes are shown, only with a recording, the twin's only with a compared run", () => {
    const base = { rec: "r-1", t: 7, sel: null, speed: 1 };
    const plain = { shown: true, summed: false, twin: false };
    expect(formatView({ ...base, lanes: plain })).toBe("?rec=r-1&t=7");
    expect(formatView({ ...base, lanes: { ...plain, shown: false } })).toBe("?rec=r-1&t=7&lanes=off");
    // hidden, summed: both said, so the lanes shown again are summed
    const hiddenBusy = formatView({ ...base, lanes: { ...plain, shown: false, summed: true } });
    expect(hiddenBusy).toBe("?rec=r-1&t=7&lanes=off%2Cbusy");
    expect(parseView(hiddenBusy).lanes).toEqual({ shown: false, summed: true, twin: false });
    const busy = formatView({ ...base, lanes: { ...plain, summed: true } });
    expect(busy).toBe("?rec=r-1&t=7&lanes=busy");
    expect(parseView(busy).lanes).toEqual({ shown: true, summed: true, twin: false });
    // the twin's lanes only beside a compared run
    expect(formatView({ ...base, lanes: { ...plain, twin: true } })).toBe("?rec=r-1&t=7");
    const both = formatView({ ...base, cmp: "r-2", lanes: { ...plain, summed: true, twin: true } });
    expect(both).toBe("?rec=r-1&t=7&cmp=r-2&lanes=busy%2Ctwin");
    expect(parseView(both).lanes).toEqual({ shown: true, summed: true, twin: true });
    expect(parseView("?rec=r-1&lanes=twin").lanes).toEqual({ shown: true, summed: false, twin: true });
    expect(parseView("?rec=r-1&lanes=off").lanes).toEqual({ shown: false, summed: false, twin: false });
    expect(formatView({ rec: null, t: null, sel: null, speed: 1, lanes: { ...plain, shown: false } })).toBe("");
    expect(parseView("?lanes=busy").lanes).toBeUndefined();
    for (const bad of ["", "on", "spans", "OFF"]) expect(parseView(`?rec=r-1&lanes=${bad}`).lanes).toBeUndefined();
    // an unknown word beside a known one is dropped
    expect(parseView("?rec=r-1&lanes=busy,sideways").lanes).toEqual({ shown: true, summed: true, twin: false });
  });
  it("ignores junk and clamps speed", () => {
    expect(parseView("?t=abc&sel=-4&speed=1000")).toEqual({ rec: null, t: null, sel: null, speed: 100, live: false });
    expect(parseView("?speed=0").speed).toBe(1);
    expect(formatView({ rec: null, t: null, sel: null, speed: 1 })).toBe("");
  });
});
