/**
 * The dashboard shell: recordings on the left, the grid + playback in the middle, inspector,
 * legend and the text view on the right. Keeps the URL in step with the view
 * (?rec=ID&t=NS&sel=PID&speed=S) so a reload opens the same view.
 */
import { useCallback, useEffect, useState } from "react";
import { RecordingsPanel, LossBadge } from "./features/recordings/RecordingsPanel";
import { usePlayer, usePlayerField, usePlayerSnapshot } from "./features/engine/usePlayer";
import type { Player } from "./features/engine/player";
import { GridView } from "./features/grid/GridView";
import { Controls } from "./features/playback/Controls";
import { Timeline } from "./features/playback/Timeline";
import { TaskInspector } from "./features/inspector/TaskInspector";
import { PlacementText } from "./features/a11y/PlacementText";
import { Legend } from "./features/Legend";
import { formatView, parseView } from "./features/urlState";

const initialView = parseView(window.location.search);

/** Keeps the URL in step with the view (at the snapshot rate); renders nothing. */
function UrlSync({ player }: { player: Player }) {
  const snap = usePlayerSnapshot(player);
  const ready = snap.status === "ready";
  useEffect(() => {
    if (!ready) return;
    const url = formatView({ rec: player.recId, t: Math.round(snap.playhead), sel: snap.selected, speed: snap.speed });
    if (url !== window.location.search) window.history.replaceState(null, "", url || window.location.pathname);
  }, [ready, player, snap.playhead, snap.selected, snap.speed]);
  return null;
}

function Workspace({ player, onSelect }: { player: Player; onSelect: (pid: number | null) => void }) {
  // only status and selection re-render the workspace; ticks re-render the small parts that show them
  const status = usePlayerField(player, "status");
  const selected = usePlayerField(player, "selected");
  const rec = player.rec;
  const ready = status === "ready";

  return (
    <>
      <UrlSync player={player} />
      <main className="center">
        <div className="rec-bar">
          <h1 className="rec-title">{rec?.name ?? "…"}</h1>
          {rec && (
            <span data-testid="loss-badge">
              <LossBadge rec={rec} />
            </span>
          )}
          {rec && (
            <span className="muted small">
              {rec.event_count.toLocaleString()} events · {player.topo?.cpus.length ?? "?"} CPUs · {player.topo?.llcs.length ?? "?"} LLCs · {player.topo?.numa_nodes.length ?? "?"} nodes
              {player.topo ? ` · topology ${player.topo.source}` : ""}
            </span>
          )}
        </div>
        <GridView player={player} onSelect={onSelect} />
        {ready && rec && (
          <>
            <Controls player={player} tStart={player.tStart} tEnd={player.tEnd} />
            <Timeline player={player} overview={player.overview} tStart={player.tStart} tEnd={player.tEnd} />
          </>
        )}
      </main>
      <aside className="right">
        {ready && <TaskInspector player={player} recId={player.recId} topo={player.topo} tStart={player.tStart} tEnd={player.tEnd} selected={selected} onSelect={onSelect} />}
        <Legend />
        <PlacementText player={player} />
      </aside>
    </>
  );
}

export function App() {
  const [recId, setRecId] = useState<string | null>(initialView.rec);
  const [init, setInit] = useState({ t: initialView.t, speed: initialView.speed, selected: initialView.sel });
  const player = usePlayer(recId, init);

  const open = useCallback((id: string) => {
    setInit((v) => ({ t: null, speed: v.speed, selected: null }));
    setRecId(id);
    window.history.replaceState(null, "", formatView({ rec: id, t: null, sel: null, speed: 1 }));
  }, []);
  const onSelect = useCallback(
    (pid: number | null) => {
      player?.select(pid);
    },
    [player],
  );

  return (
    <div className="app">
      <header className="top">
        <span className="brand">placemap</span>
        <span className="muted small">where Linux puts tasks</span>
      </header>
      <aside className="left">
        <RecordingsPanel openId={recId} onOpen={open} />
      </aside>
      {player ? (
        <Workspace key={player.recId} player={player} onSelect={onSelect} />
      ) : (
        <main className="center empty">
          <p>Open a recording on the left, or upload a trace.</p>
        </main>
      )}
    </div>
  );
}
