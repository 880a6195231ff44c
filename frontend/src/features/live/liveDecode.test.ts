import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { ArrowDecodeError, decodeChunk } from "../../client/arrow";
import { parseFtrace, readTrace } from "../../testing/ftrace";
import { rowsToIPC } from "../../testing/arrowFixture";
import { TRACES } from "../../testing/paths";
import type { EventColumns } from "../../viz/columns";
import { handleDecode, handleRequest, transferables, type DecodeReply } from "./liveDecodeProtocol";
import { LiveDecoder } from "./liveDecoder";
import { InOrder } from "./inOrder";
import { FrameInflateError } from "./frameInflate";

// real hub-sized frames from a 2-CPU hackbench capture, one dictionary-encoded like the backend may send
const rows = parseFtrace(readTrace(join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz")));
const frames = [rowsToIPC(rows.slice(0, 16384)), rowsToIPC(rows.slice(16384, 20000), { dictionary: true }), rowsToIPC(rows.slice(20000, 20001))];
const TYPED_COLUMNS = 19; // 15 numeric columns + the index arrays of 4 string columns

const copy = (b: Uint8Array): ArrayBuffer => b.slice().buffer;
// what the hub sends: each frame's IPC in a zlib stream (zlib's own deflate here, as the server's Python zlib)
const wire = frames.map((f) => new Uint8Array(deflateSync(f, { level: 1 })));

/** Columns as comparable bytes + dictionaries (a deep toEqual over 16k-row typed arrays is slow). */
function digest(c: EventColumns): Record<string, string | string[] | number> {
  const out: Record<string, string | string[] | number> = {};
  for (const [k, v] of Object.entries(c) as [string, unknown][]) {
    if (ArrayBuffer.isView(v)) out[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64");
    else if (typeof v === "object" && v !== null && "idx" in v && "dict" in v) {
      const s = v as EventColumns["comm"];
      out[k] = Buffer.from(s.idx.buffer, s.idx.byteOffset, s.idx.byteLength).toString("base64");
      out[`${k}.dict`] = s.dict;
    } else out[k] = v as number;
  }
  return out;
}

describe("the decode worker's side (liveDecodeProtocol)", () => {
  it("decodes a real frame and moves every column buffer back through a real structured clone", () => {
    for (const f of frames) {
      const { reply, transfer } = handleDecode({ id: 7, bytes: copy(f) }, decodeChunk);
      if (reply.type !== "decoded") throw new Error(`not decoded: ${JSON.stringify(reply)}`);
      expect(reply.id).toBe(7);
      expect(transfer.length).toBe(TYPED_COLUMNS);
      expect(new Set(transfer).size).toBe(transfer.length);
      const want = decodeChunk(f);
      expect(digest(reply.cols)).toEqual(digest(want));
      // what postMessage(reply, transfer) does: buffers are moved (the sender's are detached), strings copied
      const got = structuredClone(reply, { transfer }) as DecodeReply;
      if (got.type !== "decoded") throw new Error("lost in the clone");
      expect(digest(got.cols)).toEqual(digest(want));
      expect(reply.cols.ts.byteLength).toBe(0);
      expect(reply.cols.comm.idx.byteLength).toBe(0);
    }
  });

  it("inflates a hub frame (a zlib stream) before decoding it, to the same columns", async () => {
    for (const [i, w] of wire.entries()) {
      expect(w.byteLength).toBeLessThan((frames[i]?.byteLength ?? 0) / 2 + 64);
      const { reply, transfer } = await handleRequest({ id: i, bytes: copy(w), inflate: true }, decodeChunk);
      if (reply.type !== "decoded") throw new Error(`not decoded: ${JSON.stringify(reply)}`);
      expect(transfer.length).toBe(TYPED_COLUMNS);
      expect(digest(reply.cols)).toEqual(digest(decodeChunk(frames[i] ?? new Uint8Array())));
    }
  });

  it("answers a frame that is not a zlib stream, or is cut short, with a named failure", async () => {
    const plain = await handleRequest({ id: 4, bytes: copy(frames[0] ?? new Uint8Array()), inflate: true }, decodeChunk);
    expect(plain.reply).toMatchObject({ type: "failed", id: 4, name: "FrameInflateError" });
    const w = wire[0] ?? new Uint8Array();
    const cut = await handleRequest({ id: 5, bytes: copy(w.subarray(0, w.byteLength >> 1)), inflate: true }, decodeChunk);
    expect(cut.reply).toMatchObject({ type: "failed", id: 5, name: "FrameInflateError" });
  });

  it("answers bytes that are not Arrow with a named failure, not a throw", () => {
    const { reply, transfer } = handleDecode({ id: 3, bytes: new TextEncoder().encode("<html>not arrow</html>").buffer }, decodeChunk);
    expect(reply).toMatchObject({ type: "failed", id: 3, name: "ArrowDecodeError" });
    expect(transfer).toEqual([]);
  });

  it("lists each buffer once even when columns share one", () => {
    const cols = decodeChunk(frames[2] ?? new Uint8Array());
    const shared: EventColumns = { ...cols, origCpu: cols.cpu, destCpu: cols.cpu };
    expect(transferables(shared).length).toBe(TYPED_COLUMNS - 2);
  });
});

describe("LiveDecoder without a worker (Node has none: the main-thread fallback)", () => {
  it("decodes frames on the main thread and counts them", async () => {
    const dec = new LiveDecoder(null, () => Promise.resolve(decodeChunk));
    expect(dec.mode).toBe("main");
    const got = await Promise.all(wire.map((f) => dec.decode(f)));
    expect(got.map(digest)).toEqual(frames.map((f) => digest(decodeChunk(f))));
    expect(dec.frames).toBe(frames.length);
    expect(dec.mainMs).toBeGreaterThan(0);
    // a stored chunk is decoded the same way but is not a hub frame in the stats
    const chunk = await dec.decode(frames[0] ?? new Uint8Array(), false);
    expect(chunk.length).toBe(16384);
    expect(dec.frames).toBe(frames.length);
    await expect(dec.decode(new Uint8Array([1, 2, 3]))).rejects.toBeInstanceOf(FrameInflateError);
    await expect(dec.decode(new Uint8Array([1, 2, 3]), false)).rejects.toBeInstanceOf(ArrowDecodeError);
  });
});

describe("InOrder", () => {
  const later = <T,>(v: T, ms: number, fail = false): Promise<T> =>
    new Promise((res, rej) => setTimeout(() => { if (fail) rej(new Error(String(v))); else res(v); }, ms));

  it("delivers in the order work was queued, whatever order it finishes in, failures in their place", async () => {
    const q = new InOrder();
    const out: string[] = [];
    const push = (p: Promise<string>): void => {
      q.push(p, (v) => out.push(v), (e: unknown) => out.push(`failed ${e instanceof Error ? e.message : "?"}`));
    };
    push(later("status 1", 0));
    push(later("batch 1", 40)); // the slowest decode
    push(later("batch 2", 5, true));
    push(later("batch 3", 1));
    push(Promise.resolve("status 2"));
    await q.idle();
    expect(out).toEqual(["status 1", "batch 1", "failed batch 2", "batch 3", "status 2"]);
  });

  it("a throwing handler does not stop later deliveries", async () => {
    const q = new InOrder();
    const out: number[] = [];
    q.push(Promise.resolve(1), () => { throw new Error("handler bug"); }, () => undefined);
    q.push(Promise.resolve(2), (v) => out.push(v), () => undefined);
    await q.idle();
    expect(out).toEqual([2]);
  });
});
