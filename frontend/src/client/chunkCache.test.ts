import { describe, expect, it } from "vitest";
import { ChunkLRU } from "./chunkCache";
import type { EventColumns } from "../viz/columns";

function fake(n: number): EventColumns {
  return { length: n } as EventColumns;
}

describe("ChunkLRU", () => {
  it("shares in-flight loads and evicts least recently used by rows", async () => {
    const calls: number[] = [];
    const lru = new ChunkLRU((seq) => {
      calls.push(seq);
      return Promise.resolve(fake(100));
    }, 250);
    const [a, b] = await Promise.all([lru.get(1), lru.get(1)]);
    expect(a).toBe(b);
    expect(calls).toEqual([1]);
    await lru.get(2);
    expect(lru.peek(1)).toBeDefined(); // touch 1 -> 2 is now least recent
    await lru.get(3);
    expect(lru.has(2)).toBe(false);
    expect(lru.has(1)).toBe(true);
    expect(lru.has(3)).toBe(true);
    expect(lru.residentRows).toBe(200);
    await lru.get(2);
    expect(calls).toEqual([1, 2, 3, 2]);
  });

  it("forgets failed loads so they can be retried", async () => {
    let fail = true;
    const lru = new ChunkLRU(() => (fail ? Promise.reject(new Error("boom")) : Promise.resolve(fake(1))), 10);
    await expect(lru.get(0)).rejects.toThrow("boom");
    fail = false;
    await expect(lru.get(0)).resolves.toBeDefined();
  });
});
