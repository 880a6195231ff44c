import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { Bool, Dictionary, Float32, Int32, Int64, Table, Utf8, tableFromIPC, tableToIPC, vectorFromArray } from "apache-arrow";
import { decodeChunk, decodeLaneBusy, decodeLanes, ArrowDecodeError } from "./arrow";
import { str } from "../viz/columns";
import { emptyRow, parseFtrace, readTrace } from "../testing/ftrace";
import { rowsToIPC } from "../testing/arrowFixture";
import { TRACES } from "../testing/paths";
import { Kind } from "./events";

const rows = parseFtrace(readTrace(join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz"))).slice(0, 3000);

describe("decodeChunk", () => {
  for (const dictionary of [false, true]) {
    it(`decodes a real trace excerpt (${dictionary ? "dictionary" : "plain"} strings) column for column`, () => {
      expect(rows.length).toBe(3000);
      const cols = decodeChunk(rowsToIPC(rows, { dictionary }));
      expect(cols.length).toBe(rows.length);
      rows.forEach((r, i) => {
        expect(cols.ts[i]).toBe(Number(r.ts_ns));
        expect(cols.cpu[i]).toBe(r.cpu);
        expect(cols.kind[i]).toBe(r.kind);
        expect(cols.pid[i]).toBe(r.pid);
        expect(str(cols.comm, i)).toBe(r.comm);
        expect(cols.targetCpu[i]).toBe(r.target_cpu ?? -1);
        expect(cols.nextPid[i]).toBe(r.next_pid ?? -1);
        expect(str(cols.nextComm, i)).toBe(r.next_comm);
        expect(str(cols.prevState, i)).toBe(r.prev_state);
        expect(cols.childPid[i]).toBe(r.child_pid ?? -1);
      });
      // a comm with a space from the real trace survives
      expect(cols.comm.dict).toContain("npm exec json2t");
    });
  }

  it("keeps int64 ns exact up to 2^53 and refuses beyond", () => {
    const big = 9_007_199_254_740_991n; // 2^53 - 1
    const a = emptyRow(big - 5n, 0, Kind.Lost, 0);
    a.lost_events = 12345678901n;
    const b = emptyRow(big, 1, Kind.Lost, 0);
    const cols = decodeChunk(rowsToIPC([a, b]));
    expect(cols.ts[0]).toBe(9_007_199_254_740_986);
    expect(cols.ts[1]).toBe(9_007_199_254_740_991);
    expect(cols.lostEvents[0]).toBe(12345678901);
    expect(Number.isNaN(cols.lostEvents[1])).toBe(true);
    const c = emptyRow(big + 2n, 0, Kind.Lost, 0);
    expect(() => decodeChunk(rowsToIPC([c]))).toThrow(ArrowDecodeError);
  });

  it("keeps hostile comm bytes intact", () => {
    const r = emptyRow(1n, 0, Kind.Wakeup, 0);
    r.comm = "<svg/onload=1>";
    r.pid = 7;
    r.target_cpu = 0;
    const r2 = emptyRow(2n, 0, Kind.Wakeup, 0);
    r2.comm = "x pid=1 prio=1";
    r2.pid = 8;
    r2.target_cpu = 0;
    const r3 = emptyRow(3n, 0, Kind.Wakeup, 0);
    r3.comm = "kworker/\u00e9\\xff";
    for (const dictionary of [false, true]) {
      const cols = decodeChunk(rowsToIPC([r, r2, r3], { dictionary }));
      expect(str(cols.comm, 0)).toBe("<svg/onload=1>");
      expect(str(cols.comm, 1)).toBe("x pid=1 prio=1");
      expect(str(cols.comm, 2)).toBe("kworker/\u00e9\\xff");
    }
  });

  it("names bad input", () => {
    expect(() => decodeChunk(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).toThrow(ArrowDecodeError);
  });
});

describe("decodeLanes", () => {
  it("reads a lanes stream: int64 times exactly, dictionary comms, bit-packed lost flags past a byte", () => {
    const n = 11;
    const rows = Array.from({ length: n }, (_, i) => i);
    const table = new Table({
      cpu: vectorFromArray(rows.map((i) => i % 3), new Int32()),
      start_ns: vectorFromArray(rows.map((i) => BigInt(319_952_333_000 + i * 1000)), new Int64()),
      end_ns: vectorFromArray(rows.map((i) => BigInt(319_952_333_500 + i * 1000)), new Int64()),
      pid: vectorFromArray(rows.map((i) => 13100 + i), new Int32()),
      comm: vectorFromArray(rows.map((i) => (i % 2 ? "hackbench" : "<script>")), new Dictionary(new Utf8(), new Int32())),
      tgid: vectorFromArray(rows.map((i) => (i === 4 ? 4242 : -1)), new Int32()),
      lost: vectorFromArray(rows.map((i) => i === 1 || i === 9), new Bool()),
    });
    const got = decodeLanes(tableToIPC(table, "stream"));
    expect(got.length).toBe(n);
    expect([...got.cpu]).toEqual(rows.map((i) => i % 3));
    expect(got.start[10]).toBe(319_952_343_000);
    expect(got.end[0]).toBe(319_952_333_500);
    expect(got.comm.dict[got.comm.idx[0] ?? -1]).toBe("<script>");
    expect(got.comm.dict[got.comm.idx[3] ?? -1]).toBe("hackbench");
    expect([...got.tgid].indexOf(4242)).toBe(4);
    expect([...got.lost].flatMap((v, i) => (v ? [i] : []))).toEqual([1, 9]);
  });

  it("names a stream that is not Arrow", () => {
    expect(() => decodeLanes(new Uint8Array([1, 2, 3]))).toThrow(ArrowDecodeError);
  });
});

describe("decodeLaneBusy", () => {
  it("reads the parts' sums beside the lanes' columns", () => {
    const table = new Table({
      cpu: vectorFromArray([0, 0, 5], new Int32()),
      start_ns: vectorFromArray([0n, 2_500_000n, 0n], new Int64()),
      end_ns: vectorFromArray([2_500_000n, 5_000_000n, 2_500_000n], new Int64()),
      pid: vectorFromArray([7, 8, 9], new Int32()),
      comm: vectorFromArray(["a", "<script>", "a"], new Dictionary(new Utf8(), new Int32())),
      tgid: vectorFromArray([-1, -1, 9], new Int32()),
      lost: vectorFromArray([false, true, false], new Bool()),
      busy: vectorFromArray([1, 0.625, 0.25], new Float32()),
      share: vectorFromArray([0.5, 0.625, 0.125], new Float32()),
      spans: vectorFromArray([3, 1, 40_000], new Int32()),
      mine: vectorFromArray([0, 0.25, 0], new Float32()),
    });
    const got = decodeLaneBusy(tableToIPC(table, "stream"));
    expect(got.length).toBe(3);
    expect([...got.cpu]).toEqual([0, 0, 5]);
    expect(got.end[1]).toBe(5_000_000);
    expect(got.comm.dict[got.comm.idx[1] ?? -1]).toBe("<script>");
    expect([...got.lost]).toEqual([0, 1, 0]);
    expect([...(got.busy?.busy ?? [])]).toEqual([1, 0.625, 0.25]);
    expect([...(got.busy?.share ?? [])]).toEqual([0.5, 0.625, 0.125]);
    expect([...(got.busy?.spans ?? [])]).toEqual([3, 1, 40_000]);
    expect([...(got.busy?.mine ?? [])]).toEqual([0, 0.25, 0]);
    // (a stream without the selected task's column: none ran)
    const older = tableFromIPC(tableToIPC(table, "stream")).select(["cpu", "start_ns", "end_ns", "pid", "comm", "tgid", "lost", "busy", "share", "spans"]);
    expect([...(decodeLaneBusy(tableToIPC(older, "stream")).busy?.mine ?? [])]).toEqual([0, 0, 0]);
    expect(decodeLanes(tableToIPC(table, "stream")).busy).toBeUndefined();
  });
});
