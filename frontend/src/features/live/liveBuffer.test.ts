import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { decodeChunk } from "../../client/arrow";
import { parseFtrace, readTrace } from "../../testing/ftrace";
import { rowsToIPC } from "../../testing/arrowFixture";
import { TRACES } from "../../testing/paths";
import { upperBound } from "../../viz/columns";
import { ReplayState } from "../../viz/replay";
import { isLiveSeq, LiveBuffer } from "./liveBuffer";

// a real 2-CPU hackbench capture, cut into hub-sized batches
const rows = parseFtrace(readTrace(join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz")));
const BATCH = 1500;
const batches = Array.from({ length: Math.ceil(rows.length / BATCH) }, (_, k) => decodeChunk(rowsToIPC(rows.slice(k * BATCH, (k + 1) * BATCH))));
const all = decodeChunk(rowsToIPC(rows));
const CPU_LLC = [0, 0];

function rebuild(buf: LiveBuffer, t: number): ReplayState {
  const origin = buf.origin;
  if (!origin) throw new Error("no origin");
  const st = origin.clone();
  for (const s of buf.segments) st.apply(s.cols, upperBound(s.cols.ts, st.tNs), upperBound(s.cols.ts, t));
  return st;
}

function truth(t: number): ReplayState {
  const st = new ReplayState(2, 1, 0);
  st.apply(all, 0, upperBound(all.ts, t));
  return st;
}

describe("LiveBuffer on a real hackbench capture", () => {
  it("rebuilds the state at the head and at times inside it while folding old batches into origin", () => {
    const buf = new LiveBuffer(6000);
    buf.setOrigin(new ReplayState(2, 1, 0));
    let dropped = 0;
    for (const b of batches) {
      buf.append(b);
      dropped += buf.trim().length;
      expect(buf.rows).toBeLessThanOrEqual(6000 + BATCH);
    }
    expect(dropped).toBeGreaterThan(30);
    expect(buf.receivedRows).toBe(rows.length);
    const head = buf.headTs;
    expect(head).toBe(all.ts[all.length - 1]);
    expect(rebuild(buf, head).toPlacementState(CPU_LLC, 1, 0)).toEqual(truth(head).toPlacementState(CPU_LLC, 1, 0));
    // scrub back: a time in the middle of the kept batches
    const mid = buf.segments[1]?.t0 ?? 0;
    expect(mid).toBeGreaterThan(buf.startTs ?? Infinity);
    expect(rebuild(buf, mid).toPlacementState(CPU_LLC, 1, 0)).toEqual(truth(mid).toPlacementState(CPU_LLC, 1, 0));
  });

  it("a keyframe drops the batches it already includes; a straddling batch is applied only past it", () => {
    const buf = new LiveBuffer(1e9);
    for (const b of batches.slice(0, 6)) buf.append(b);
    // a keyframe in the middle of batch 3 (what GET state would answer after a reconnect)
    const kt = batches[3]?.ts[700] ?? 0;
    buf.setOrigin(truth(kt));
    expect(buf.segments[0]?.t0).toBe(batches[3]?.ts[0]);
    const head = buf.headTs;
    expect(rebuild(buf, head).toPlacementState(CPU_LLC, 1, 0)).toEqual(truth(head).toPlacementState(CPU_LLC, 1, 0));
  });

  it("without an origin, trimmed rows are counted as dropped; ids map to negative chunk seqs", () => {
    const buf = new LiveBuffer(2000);
    for (const b of batches.slice(0, 4)) buf.append(b);
    expect(buf.trim().length).toBe(3);
    expect(buf.droppedRows).toBe(3 * BATCH);
    const infos = buf.infos();
    expect(infos.length).toBe(1);
    expect(isLiveSeq(infos[0]?.seq ?? 0)).toBe(true);
    expect(buf.get(-(infos[0]?.seq ?? 0))?.cols).toBe(batches[3]);
    expect(buf.append(decodeChunk(rowsToIPC([])))).toBeNull();
  });
});
