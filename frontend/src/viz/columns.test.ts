import { describe, expect, it } from "vitest";
import { StrColumnBuilder, str } from "./columns";

const enc = new TextEncoder();
const dec = new TextDecoder();

describe("StrColumnBuilder.setUtf8", () => {
  it("interns values from UTF-8 bytes, decoding each distinct value once, and agrees with set()", () => {
    const words = ["hackbench", "<i>x pid=1</i>", "", "hackbench", "kworker/0:1", "ü-zeichen", "<i>x pid=1</i>", "hackbenci"];
    const bytes = enc.encode(words.join(""));
    let decodes = 0;
    const decode = (b: Uint8Array, s: number, e: number): string => {
      decodes++;
      return dec.decode(b.subarray(s, e));
    };
    const b = new StrColumnBuilder(words.length + 1);
    let off = 0;
    words.forEach((w, i) => {
      const n = enc.encode(w).length;
      b.setUtf8(i, bytes, off, off + n, decode);
      off += n;
    });
    // a value first seen through set() is found again by its bytes
    b.set(words.length, "kworker/0:1");
    const col = b.build();
    expect(words.map((_, i) => str(col, i))).toEqual(words);
    expect(str(col, words.length)).toBe("kworker/0:1");
    expect(decodes).toBe(6);
    expect(col.dict.length).toBe(6);
  });
});
