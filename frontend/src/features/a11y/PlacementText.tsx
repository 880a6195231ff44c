/**
 * The accessible text view of the state at the playhead: a region "Placement state" with the
 * per-LLC task counts as a table, a sentence for the selected task (selectedSentence.ts), and (up
 * to PER_CPU_ROWS CPUs) what runs on each CPU. Updated from the Player's throttled snapshots (a few times a second while
 * playing or following a live run), never per frame. Comms are rendered as text (React escapes them).
 */
import type { Player } from "../engine/player";
import { usePlayerSnapshot } from "../engine/usePlayer";
import { RUN_IDLE } from "../../viz/replay";
import { formatNs } from "../../viz/time";
import { selectedSentence } from "./selectedSentence";

/** Beyond this many CPUs the per-CPU table would drown the view; the LLC table stays. */
const PER_CPU_ROWS = 64;

export function PlacementText({ player }: { player: Player }) {
  const snap = usePlayerSnapshot(player);
  const st = player.state;
  const topo = player.topo;
  const nLlcs = topo?.llcs.length ?? 0;
  const counts = st && topo ? st.llcCounts(player.idx?.llc ?? [], nLlcs) : null;
  const sentence = snap.selected !== null && st ? selectedSentence(st, snap.selected, player.idx) : "No task selected.";
  return (
    <section role="region" aria-label="Placement state" className="panel a11y" data-testid="placement-state">
      <h2>Placement state</h2>
      <p className="small">
        At <span className="mono">{formatNs(snap.playhead)}</span> s.
      </p>
      <p data-testid="selected-sentence">{sentence}</p>
      {counts && topo && (
        <table className="llc-table">
          <caption className="small muted">Tasks per LLC</caption>
          <thead>
            <tr>
              <th scope="col">LLC</th>
              <th scope="col">node</th>
              <th scope="col">CPUs</th>
              <th scope="col">running</th>
              <th scope="col">runnable</th>
              <th scope="col">tasks</th>
            </tr>
          </thead>
          <tbody>
            {topo.llcs.map((l) => (
              <tr key={l.id}>
                <th scope="row">{l.id}</th>
                <td>{l.numa_nodes.join(",")}</td>
                <td>{l.cpus.length}</td>
                <td>{counts.running[l.id] ?? 0}</td>
                <td>{counts.runnable[l.id] ?? 0}</td>
                <td>{counts.tasks[l.id] ?? 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {st && topo && topo.cpus.length <= PER_CPU_ROWS && (
        <>
          <h3 className="small muted" id="cpu-list-caption">
            Running on each CPU
          </h3>
          <ul className="cpu-list small" data-testid="cpu-list" aria-labelledby="cpu-list-caption">
            {topo.cpus.map((c) => {
              const pid = st.running[c.cpu] ?? -1;
              const comm = pid > 0 ? (st.tasks.get(pid)?.comm ?? "") : "";
              const waiting = st.runnable[c.cpu] ?? 0;
              return (
                <li key={c.cpu} data-cpu={c.cpu} data-pid={pid}>
                  CPU {c.cpu}: <span className="mono">{pid > 0 ? `${comm} (${pid})` : pid === RUN_IDLE ? "idle" : "unknown"}</span>
                  {waiting > 0 ? `, ${waiting} waiting` : ""}
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}
