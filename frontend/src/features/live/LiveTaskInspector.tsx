/**
 * The task inspector of a live view, built only from what the browser holds: a live recording has
 * no stored task paths until it ends, so search runs over the replay state's tasks, "now" is the
 * task in the state at the playhead (CPU with its core / LLC / node, state), and the path is the
 * selected task's placements over the hub batches held in memory (features/live/liveTrail.ts, fed
 * by the Player as batches arrive). The panel says how far back that window reaches. Once the run
 * is stored and opened, the stored inspector (features/inspector) takes over. Comms are text.
 */
import { useMemo, useState } from "react";
import type { TaskPlacement } from "../../client/types";
import type { Player } from "../engine/player";
import { usePlayerSnapshot } from "../engine/usePlayer";
import { PathChart, TaskSearch } from "../inspector/TaskInspector";
import { classifyMigration, LEVELS } from "../../viz/colors";
import { TASK_STATE_NAMES, TaskState, type TaskRec } from "../../viz/replay";
import { formatDuration } from "../../viz/time";
import { TRAIL_MAX } from "./liveTrail";

const MAX_RESULTS = 30;
const RECENT_MOVES = 8;

interface Props {
  player: Player;
  onSelect: (pid: number | null) => void;
}

/** Tasks whose comm contains q (case-insensitive) or whose pid is q; alive ones first. */
function searchTasks(tasks: Iterable<TaskRec>, q: string): TaskRec[] {
  const term = q.trim().toLowerCase();
  const pid = /^\d+$/.test(term) ? Number(term) : null;
  const out: TaskRec[] = [];
  for (const t of tasks) {
    if (term === "" || t.pid === pid || t.comm.toLowerCase().includes(term)) out.push(t);
  }
  const rank = (t: TaskRec): number => (t.state === TaskState.Running ? 0 : t.state === TaskState.Dead ? 2 : 1);
  out.sort((a, b) => rank(a) - rank(b) || a.pid - b.pid);
  return out.slice(0, MAX_RESULTS);
}

/** The placements that changed CPU, newest first, each with the CPU it came from. */
function recentMoves(ps: readonly TaskPlacement[], n: number): { p: TaskPlacement; from: number }[] {
  const out: { p: TaskPlacement; from: number }[] = [];
  for (let i = ps.length - 1; i > 0 && out.length < n; i--) {
    const p = ps[i];
    const prev = ps[i - 1];
    if (p && prev && p.cpu !== prev.cpu) out.push({ p, from: prev.cpu });
  }
  return out;
}

export function LiveTaskInspector({ player, onSelect }: Props) {
  const snap = usePlayerSnapshot(player);
  const [q, setQ] = useState("");
  const st = player.state;
  const idx = player.idx;
  const selected = snap.selected;
  const live = snap.live;
  // re-searched on each snapshot (a few times a second): the task table changes as events arrive
  const results = useMemo(() => (st && q.trim() !== "" ? searchTasks(st.tasks.values(), q) : []), [st, q, snap.version]); // eslint-disable-line react-hooks/exhaustive-deps

  const buf = player.liveBuffer;
  const trail = selected !== null ? player.liveTrail() : null;
  const placements = trail && trail.pid === selected ? trail.placements : [];
  const head = buf && Number.isFinite(buf.headTs) ? buf.headTs : player.tEnd;
  const capped = placements.length >= TRAIL_MAX;
  // the trail's own reach (it outlives the buffer's restarts at resyncs), never past the head
  const winFrom = Math.min(trail && Number.isFinite(trail.since) ? trail.since : head, head);
  const holes = live ? live.skipped + live.drops : 0;
  const path = useMemo(
    () => (trail && selected !== null && trail.pid === selected ? trail.toPath() : null),
    // the trail is mutated in place as batches arrive: a new snapshot is when to copy it
    [trail, selected, snap.version], // eslint-disable-line react-hooks/exhaustive-deps
  );
  const byLevel = new Map<string, number>();
  const perCpu = new Map<number, number>();
  for (const p of placements) {
    if (p.level) byLevel.set(p.level, (byLevel.get(p.level) ?? 0) + 1);
    perCpu.set(p.cpu, (perCpu.get(p.cpu) ?? 0) + 1);
  }
  const moves = recentMoves(placements, RECENT_MOVES);
  const task = selected !== null ? st?.tasks.get(selected) : undefined;
  const comm = task?.comm || trail?.comm || "?";
  const atHead = live?.mode === "live";

  let now: string;
  if (!task) now = "not seen in this view yet";
  else if (task.state === TaskState.Dead) now = `exited${task.cpu >= 0 ? `, last on CPU ${task.cpu}` : ""}`;
  else if (task.cpu < 0) now = `not on a CPU yet (${TASK_STATE_NAMES[task.state] ?? "?"})`;
  else {
    const f = (n: number | undefined): string => (n === undefined || n < 0 ? "?" : String(n));
    now = `CPU ${task.cpu} · core ${f(idx?.core[task.cpu])} · LLC ${f(idx?.llc[task.cpu])} · node ${f(idx?.node[task.cpu])} · ${TASK_STATE_NAMES[task.state] ?? "?"}`;
  }

  return (
    <section className="panel inspector" aria-label="Task inspector" data-testid="live-inspector">
      <h2>Task inspector · live</h2>
      <TaskSearch value={q} onChange={setQ} placeholder="comm or pid (tasks seen in this view)" />
      <ul className="task-results" data-testid="task-results">
        {results.map((t) => (
          <li key={t.pid}>
            <button type="button" className={`task-btn ${t.pid === selected ? "sel" : ""}`} onClick={() => { onSelect(t.pid === selected ? null : t.pid); }} data-testid="task-result">
              <span className="mono">{t.pid}</span> <span className="comm">{t.comm}</span>
              <span className="muted small"> · {TASK_STATE_NAMES[t.state] ?? "?"}{t.cpu >= 0 ? ` on CPU ${t.cpu}` : ""}</span>
            </button>
          </li>
        ))}
      </ul>
      {selected === null && <p className="muted small">Click a CPU in the grid or search to follow a task.</p>}
      {selected !== null && (
        <div className="task-detail" data-testid="task-detail">
          <div className="td-head">
            <b>
              <span className="comm" data-testid="live-task-comm">{comm}</span> ({selected})
            </b>
            <button type="button" className="linkish" onClick={() => { onSelect(null); }}>
              clear
            </button>
          </div>
          <div className="small" data-testid="live-task-now">
            <span className="muted">{atHead ? "now" : "at the playhead"}: </span>
            {now}
          </div>
          <div className="muted small" data-testid="live-path-count" data-placements={placements.length}>
            {placements.length.toLocaleString()} placements · {LEVELS.map((l) => `${l} ${byLevel.get(l) ?? 0}`).join(" · ")}
            {perCpu.size > 0 && (
              <>
                {" · on "}
                {[...perCpu.entries()].sort((a, b) => a[0] - b[0]).slice(0, 8).map(([c, n]) => `CPU ${c} ×${n}`).join(", ")}
                {perCpu.size > 8 ? ", …" : ""}
              </>
            )}
          </div>
          {path && path.placements.length > 0 && <PathChart path={path} topo={player.topo} tStart={winFrom} tEnd={Math.max(head, winFrom + 1)} t0={player.tStart} player={player} />}
          {moves.length > 0 && (
            <ol className="live-moves small" data-testid="live-path-moves" aria-label="Recent moves, newest first">
              {moves.map(({ p, from }) => (
                <li key={`${p.ts_ns}-${p.kind}`}>
                  <span className="mono">+{formatDuration(p.ts_ns - player.tStart)}</span> CPU {from} → CPU {p.cpu}
                  <span className="muted">
                    {" "}
                    {/* the level of this move (a placement's own level counts from the CPU its waking named) */}
                    · {(idx && classifyMigration(idx, from, p.cpu)) ?? "level unknown"} · {p.kind.replace("_", " ")}
                    {p.kind === "migrate" && p.cause ? ` (${p.cause})` : ""}
                  </span>
                </li>
              ))}
            </ol>
          )}
          <p className="muted small live-window" data-testid="live-inspector-window">
            {buf && buf.segments.length > 0
              ? `From the events this browser has received since the live view opened: the last ${formatDuration(Math.max(0, head - winFrom))}${capped ? ` (the newest ${TRAIL_MAX.toLocaleString()} placements)` : ""}. Older events are not in this panel${holes > 0 ? `, nor the moves inside the ${holes.toLocaleString()} feed ${holes === 1 ? "gap" : "gaps"}` : ""}; the full path is shown once the recording is stored.`
              : "No live events received yet: the path starts with the first batch this browser receives."}
          </p>
        </div>
      )}
    </section>
  );
}
