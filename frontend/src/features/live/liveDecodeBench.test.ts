/**
 * Bench (runs only with PLACEMAP_BENCH=1): the main thread's time per live hub frame, before
 * (decodeChunk on the main thread) and after (the worker decodes; the main thread only posts the
 * frame and takes the transferred columns back), side by side in one run on real hub-sized frames
 * cut from a real hackbench capture. Node has no Web Worker, so the main thread's share is
 * measured as a structured clone with transfer of the request and of the reply: serialize and
 * deserialize both (in a browser the worker serializes the reply), so an upper bound. Prints
 * figures; asserts only that both paths give the same columns (tests never assert on wall time).
 *   PLACEMAP_BENCH=1 npx vitest run src/features/live/liveDecodeBench.test.ts
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { decodeChunk } from "../../client/arrow";
import { parseFtrace, readTrace } from "../../testing/ftrace";
import { rowsToIPC } from "../../testing/arrowFixture";
import { TRACES } from "../../testing/paths";
import { handleDecode, type DecodeReply, type DecodeRequest } from "./liveDecodeProtocol";

const ROWS = 16384; // a hub batch is ~16k rows (features/engine/player.ts)
const REPS = Number(process.env.PLACEMAP_BENCH_REPS ?? 20);

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function stats(xs: number[]): string {
  const s = xs.slice().sort((a, b) => a - b);
  const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return `mean ${mean.toFixed(3)} ms, median ${(s[s.length >> 1] ?? 0).toFixed(3)} ms, p90 ${(s[Math.floor(s.length * 0.9)] ?? 0).toFixed(3)} ms`;
}

describe.skipIf(!process.env.PLACEMAP_BENCH)("live frame decode: main-thread time per frame", () => {
  it("main-thread decode vs worker decode (post + transferred reply), same frames, same run", () => {
    const rows = parseFtrace(readTrace(join(TRACES, "vm2-hackbench-g4.ftrace.txt.gz")));
    for (const dictionary of [false, true]) {
      const frames: Uint8Array[] = [];
      for (let k = 0; k + ROWS <= rows.length; k += ROWS) frames.push(rowsToIPC(rows.slice(k, k + ROWS), { dictionary }));
      const before: number[] = [];
      const after: number[] = [];
      const inWorker: number[] = [];
      let cpuBefore = 0;
      let cpuAfter = 0;
      for (let r = 0; r < REPS; r++) {
        for (const f of frames) {
          // before: the whole decode on the main thread
          let c0 = cpuMs();
          let t0 = performance.now();
          const cols = decodeChunk(f);
          before.push(performance.now() - t0);
          cpuBefore += cpuMs() - c0;

          // after: post the frame (transfer), the worker decodes (not main-thread time), take the reply
          const bytes = f.slice().buffer;
          c0 = cpuMs();
          t0 = performance.now();
          const req = structuredClone<DecodeRequest>({ id: r, bytes }, { transfer: [bytes] });
          let main = performance.now() - t0;
          let cpu = cpuMs() - c0;
          const w0 = performance.now();
          const { reply, transfer } = handleDecode(req, decodeChunk);
          inWorker.push(performance.now() - w0);
          c0 = cpuMs();
          t0 = performance.now();
          const got = structuredClone<DecodeReply>(reply, { transfer });
          main += performance.now() - t0;
          cpu += cpuMs() - c0;
          after.push(main);
          cpuAfter += cpu;
          if (got.type !== "decoded") throw new Error("not decoded");
          expect(got.cols.length).toBe(cols.length);
          expect(got.cols.ts[ROWS - 1]).toBe(cols.ts[ROWS - 1]);
          expect(got.cols.comm.dict).toEqual(cols.comm.dict);
        }
      }
      const n = before.length;
      const mb = (before.reduce((a, b) => a + b, 0) / n);
      const ma = (after.reduce((a, b) => a + b, 0) / n);
      console.log(
        `${ROWS}-row frames (${dictionary ? "dictionary" : "plain utf8"} strings, ${((frames[0]?.byteLength ?? 0) / 1024).toFixed(0)} KiB), ${n} frames:\n` +
          `  before, decode on the main thread: ${stats(before)}; CPU ${(cpuBefore / n).toFixed(3)} ms/frame\n` +
          `  after, main thread with the worker: ${stats(after)}; CPU ${(cpuAfter / n).toFixed(3)} ms/frame (upper bound)\n` +
          `  (the worker's decode: ${stats(inWorker)})\n` +
          `  main-thread time per frame: ${(mb / Math.max(ma, 1e-6)).toFixed(1)}x less`,
      );
    }
  }, 600_000);
});
