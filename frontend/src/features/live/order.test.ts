import { describe, expect, it } from "vitest";
import { liveFirst } from "./order";

describe("liveFirst", () => {
  it("puts live recordings first and keeps the server's order within each group", () => {
    const recs = [
      { id: "a", status: "ready" },
      { id: "b", status: "live" },
      { id: "c", status: "failed" },
      { id: "d", status: "live" },
      { id: "e", status: "importing" },
    ];
    expect(liveFirst(recs).map((r) => r.id)).toEqual(["b", "d", "a", "c", "e"]);
    expect(recs[0]?.id).toBe("a"); // not sorted in place
  });
});
