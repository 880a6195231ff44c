/**
 * The placement grid: a canvas the Player draws every frame, an SVG overlay with node / LLC / CPU
 * labels (re-rendered only when the layout changes), and a hover card for the CPU under the mouse.
 * Clicking a CPU selects the task running on it. Below it, the topology's notes (TopologyNotes).
 */
import { useCallback, useEffect, useRef, useState, type MouseEvent } from "react";
import type { Player } from "../engine/player";
import { usePlayerField, usePlayerSnapshot } from "../engine/usePlayer";
import { hitTestCpu, type GridLayout } from "../../viz/layout";
import { TASK_STATE_NAMES } from "../../viz/replay";
import { TopologyNotes } from "./TopologyNotes";

interface Props {
  player: Player;
  onSelect: (pid: number | null) => void;
}

function Labels({ layout }: { layout: GridLayout }) {
  const cpuLabels = layout.cpus.filter((c) => c.w >= 20 && c.h >= 14);
  return (
    <svg className="grid-labels" width={layout.width} height={layout.height} aria-hidden="true">
      {layout.nodes.map((n) =>
        n.labelH > 0 ? (
          <text key={`n${n.id}-${n.x}`} x={n.x + 5} y={n.y + 11} className="lbl-node">
            {n.id < 0 ? "unknown node (offline CPUs)" : `node ${n.id}`}
          </text>
        ) : null,
      )}
      {layout.llcs.map((l) =>
        l.labelH > 0 ? (
          <text key={`l${l.id}-${l.node}-${l.x}`} x={l.x + 4} y={l.y + 9} className="lbl-llc">
            {l.id < 0 ? "LLC ?" : `LLC ${l.id}`}
          </text>
        ) : null,
      )}
      {cpuLabels.map((c) => (
        <text key={c.cpu} x={c.x + 3} y={c.y + 10} className="lbl-cpu">
          {c.w >= 64 ? `CPU ${c.cpu}` : c.cpu}
        </text>
      ))}
      {layout.emptyNodes.map((n) => (
        <text key={`e${n.id}`} x={n.x + 4} y={n.y + n.h - 3} className="lbl-llc">
          {`node ${n.id}: no CPUs (memory only)`}
        </text>
      ))}
    </svg>
  );
}

/** The hover card: re-rendered on the Player's snapshot ticks while the mouse is over a CPU. */
function HoverCard({ player, layout, hover }: { player: Player; layout: GridLayout; hover: { cpu: number; x: number; y: number } }) {
  usePlayerSnapshot(player);
  if (!player.state) return null;
  const cell = layout.byCpu[hover.cpu];
  const st = player.state;
  const pid = st.running[hover.cpu] ?? -1;
  const t = pid > 0 ? st.tasks.get(pid) : undefined;
  const rq = st.runnable[hover.cpu] ?? 0;
  const queued = [...st.tasks.values()].filter((x) => x.cpu === hover.cpu && TASK_STATE_NAMES[x.state] === "runnable").slice(0, 6);
  const left = Math.min(hover.x + 14, layout.width - 230);
  const top = Math.min(hover.y + 14, layout.height - 130);
  return (
    <div className="hover-card" style={{ left, top }} data-testid="cpu-card">
      <div className="hc-title">
        CPU {hover.cpu}
        {cell && !cell.online ? " (offline)" : ""}
      </div>
      <div className="hc-sub">
        core {cell?.core ?? "?"} · LLC {cell?.llc ?? "?"} · node {cell?.node ?? "?"}
      </div>
      <div>
        running:{" "}
        {pid > 0 ? (
          <b>
            {t?.comm ?? "?"} ({pid})
          </b>
        ) : pid === 0 ? (
          "idle"
        ) : (
          "unknown"
        )}
      </div>
      <div>queued (runnable, waiting): {rq}</div>
      {queued.length > 0 && (
        <ul className="hc-queue">
          {queued.map((q) => (
            <li key={q.pid}>
              {q.comm} ({q.pid})
            </li>
          ))}
        </ul>
      )}
      {pid > 0 && <div className="hc-hint">click to select</div>}
    </div>
  );
}

export function GridView({ player, onSelect }: Props) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const [layout, setLayout] = useState<GridLayout | null>(null);
  const [hover, setHover] = useState<{ cpu: number; x: number; y: number } | null>(null);
  const status = usePlayerField(player, "status");
  const error = usePlayerField(player, "error");

  const canvasRef = useCallback(
    (el: HTMLCanvasElement | null) => {
      player.attachCanvas(el);
    },
    [player],
  );

  useEffect(() => {
    const el = wrapRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      const r = el.getBoundingClientRect();
      setLayout(player.setSize(Math.floor(r.width), Math.floor(r.height)));
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
    };
  }, [player]);

  // the topology arrives after mount: lay out again once the player is ready
  useEffect(() => {
    if (status !== "ready" || layout) return;
    const el = wrapRef.current;
    if (!el) return;
    const r = el.getBoundingClientRect();
    setLayout(player.setSize(Math.floor(r.width), Math.floor(r.height)));
  }, [status, layout, player]);

  const cpuAt = (e: MouseEvent<HTMLDivElement>): { cpu: number; x: number; y: number } | null => {
    const el = wrapRef.current;
    if (!el || !layout) return null;
    const r = el.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    const cpu = hitTestCpu(layout, x, y);
    return cpu === null ? null : { cpu, x, y };
  };

  const onMove = (e: MouseEvent<HTMLDivElement>) => {
    const h = cpuAt(e);
    if (h?.cpu !== hover?.cpu) player.setHover(h?.cpu ?? null);
    setHover(h);
  };
  const onLeave = () => {
    player.setHover(null);
    setHover(null);
  };
  const onClick = (e: MouseEvent<HTMLDivElement>) => {
    const h = cpuAt(e);
    if (!h || !player.state) return;
    const pid = player.state.running[h.cpu] ?? 0;
    onSelect(pid > 0 ? pid : null);
  };

  return (
    <>
      <div
        className="grid-wrap"
      ref={wrapRef}
      onMouseMove={onMove}
      onMouseLeave={onLeave}
      onClick={onClick}
      data-testid="grid"
    >
      <canvas ref={canvasRef} className="grid-canvas" aria-label="CPU placement grid (see the Placement state text view)" role="img" />
      {layout && <Labels layout={layout} />}
      {hover && layout && <HoverCard player={player} layout={layout} hover={hover} />}
      {status === "loading" && <div className="grid-msg">loading…</div>}
      {status === "error" && <div className="grid-msg error">{error}</div>}
      </div>
      <TopologyNotes notes={status === "ready" ? player.topo?.notes : null} />
    </>
  );
}
