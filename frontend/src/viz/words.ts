/** Counts in words, as the page prints them beside a noun. */

/** "1 LLC", "16 LLCs", "0 nodes": `n` and the noun `one`, with an s unless `n` is 1. */
export function plural(n: number, one: string): string {
  return `${n.toLocaleString("en-US")} ${one}${n === 1 ? "" : "s"}`;
}
