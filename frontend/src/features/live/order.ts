/** The recordings list order: live recordings first, otherwise the server's order (newest first). */
export function liveFirst<T extends { status: string }>(recs: readonly T[]): T[] {
  return [...recs.filter((r) => r.status === "live"), ...recs.filter((r) => r.status !== "live")];
}
