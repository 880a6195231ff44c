/**
 * The "topology notes" line under the grid: what the topology reader said about this machine
 * (offline CPUs, CPU-less nodes, LLCs spanning nodes, sysfs it had to fill in), collapsed to one
 * line until opened. Notes come from a collector on someone's machine: rendered as text only.
 */
import type { CSSProperties } from "react";

// inline: this small component owns its look (styles.css is shared by every feature)
const box: CSSProperties = { fontSize: 12, color: "#4a5463", flex: "0 0 auto" };
const summary: CSSProperties = { cursor: "pointer", whiteSpace: "nowrap", overflow: "hidden", textOverflow: "ellipsis" };
const list: CSSProperties = { margin: "2px 0 0", paddingLeft: 18, overflowWrap: "anywhere" };

export function TopologyNotes({ notes }: { notes: readonly string[] | null | undefined }) {
  if (!notes || notes.length === 0) return null;
  return (
    <details style={box} data-testid="topology-notes">
      <summary style={summary}>{`topology notes (${notes.length}): ${notes[0]}`}</summary>
      <ul style={list}>
        {notes.map((n, i) => (
          <li key={i}>{n}</li>
        ))}
      </ul>
    </details>
  );
}
