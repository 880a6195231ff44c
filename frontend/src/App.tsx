/**
 * The dashboard shell: recordings on the left, the grid + playback in the middle, inspector,
 * legend and the text view on the right, in resizable columns (features/layout). Keeps the URL
 * in step with the view (?rec=ID&t=NS&sel=PID&speed=S, &live=1 for a live view, &cmp=ID2 for a
 * recording compared side by side) so a reload opens the same view.
 * A live view swaps the playback controls for the live bar and the live timeline (features/live).
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { RecordingsPanel, LossBadge } from "./features/recordings/RecordingsPanel";
import { usePlayer, usePlayerField, usePlayerOverview, usePlayerSnapshot } from "./features/engine/usePlayer";
import type { Player } from "./features/engine/player";
import { GridView } from "./features/grid/GridView";
import { Controls } from "./features/playback/Controls";
import { Timeline } from "./features/playback/Timeline";
import { TaskInspector } from "./features/inspector/TaskInspector";
import { PlacementText } from "./features/a11y/PlacementText";
import { Legend } from "./features/Legend";
import { formatView, parseView } from "./features/urlState";
import { LiveBar } from "./features/live/LiveBar";
import { LiveTimeline } from "./features/live/LiveTimeline";
import { LiveLanes } from "./features/live/LiveLanes";
import { LiveTaskInspector } from "./features/live/LiveTaskInspector";
import { follow } from "./features/compare/compare";
import { CompareCounts } from "./features/compare/CompareCounts";
import { CompareDecisions } from "./features/compare/CompareDecisions";
import { RunCounts } from "./features/compare/RunCounts";
import { SchedDomainsPanel } from "./features/grid/SchedDomainsPanel";
import { simMetricText } from "./features/compare/simMetric";
import { Simulate } from "./features/simulate/Simulate";
import { ScenarioFile } from "./features/simulate/Reproduce";
import { cliCommand } from "./features/simulate/scenario";
import { formatDuration } from "./viz/time";
import type { Recording } from "./client/types";
import { Columns } from "./features/layout/Columns";
import { plural } from "./viz/words";
import { api } from "./client/http";
import { defaultLanesView, PLAIN_LANES, type LanesView } from "./features/playback/lanesView";

const initialView = parseView(window.location.search);
/** A value given once (the link's, to the recording it opened), then null (opened again later, that
 * recording starts from its own defaults). */
function takeOnce<T>(value: T): () => T | null {
  let left: T | null = value;
  return () => {
    const v = left;
    left = null;
    return v;
  };
}
// the link's zoom
const takeInitialZoom = takeOnce(initialView.zoom ?? null);
// the link's CPU lanes (a link that does not say had them plain: shown, each span)
const takeInitialLanes = takeOnce<LanesView>(initialView.lanes ?? PLAIN_LANES);

/** Keeps the URL in step with the view (at the snapshot rate); renders nothing. */
function UrlSync({ player, cmp, countsUpTo, sweep, zoom, lanes }: { player: Player; cmp: string | null; countsUpTo: boolean; sweep: string | null; zoom: [number, number] | null; lanes: LanesView }) {
  const snap = usePlayerSnapshot(player);
  const ready = snap.status === "ready";
  const liveMode = snap.live?.mode ?? null;
  useEffect(() => {
    if (!ready) return;
    // a live view following the head has no fixed time: ?live=1 without t
    const following = liveMode === "live";
    const url = formatView({
      rec: player.recId,
      t: following ? null : Math.round(snap.playhead),
      sel: snap.selected,
      speed: snap.speed,
      live: liveMode !== null && liveMode !== "ended",
      ...(cmp ? { cmp } : {}),
      ...(countsUpTo ? { counts: "playhead" as const } : {}),
      ...(sweep ? { sweep } : {}),
      ...(zoom ? { zoom } : {}),
      lanes,
    });
    if (url !== window.location.search) window.history.replaceState(null, "", url || window.location.pathname);
  }, [ready, player, snap.playhead, snap.selected, snap.speed, liveMode, cmp, countsUpTo, sweep, zoom, lanes]);
  return null;
}

/** A compared recording's time from its start, at the snapshot rate. */
function FromStart({ player }: { player: Player }) {
  const snap = usePlayerSnapshot(player);
  return <span className="muted small mono" data-testid="from-start">+{formatDuration(snap.playhead - player.tStart)}</span>;
}

/** The open recording and the compared one side by side, the compared one following the open
 * one's time from start (features/compare). */
function CompareRow({ player, cmp, onSelect, onClose }: { player: Player; cmp: Player; onSelect: (pid: number | null) => void; onClose: () => void }) {
  useEffect(() => follow(player, cmp), [player, cmp]);
  // the names show once each recording has loaded
  usePlayerField(player, "status");
  usePlayerField(cmp, "status");
  return (
    <div className="compare-row" data-testid="compare">
      <div className="compare-col">
        <div className="compare-title small">
          <FromStart player={player} />
          <b className="compare-name" title={player.rec?.name}>{player.rec?.name ?? "…"}</b>
        </div>
        <GridView player={player} onSelect={onSelect} />
      </div>
      <div className="compare-col" data-testid="compare-other">
        <div className="compare-title small">
          <FromStart player={cmp} />
          <button type="button" className="linkish" onClick={onClose}>close</button>
          <b className="compare-name" title={cmp.rec?.name}>{cmp.rec?.name ?? "…"}</b>
        </div>
        <GridView player={cmp} onSelect={() => undefined} />
      </div>
    </div>
  );
}

type WorkspaceProps = { player: Player; cmp: Player | null; cmpId: string | null; countsUpTo: boolean; setCountsUpTo: (v: boolean) => void; sweepId: string | null; onSelect: (pid: number | null) => void; onOpenFinished: () => void; onCloseCompare: () => void };

/** The middle column of an open recording: its title, the grid (or two side by side), playback. */
function WorkspaceMain({ player, cmp, cmpId, countsUpTo, sweepId, onSelect, onOpenFinished, onCloseCompare }: Omit<WorkspaceProps, "setCountsUpTo">) {
  // only status and the overview re-render the workspace; ticks re-render the small parts that show them
  const status = usePlayerField(player, "status");
  // and the overview's arrival, which may come after the first frame
  const overview = usePlayerOverview(player);
  const rec = player.rec;
  const ready = status === "ready";
  const live = player.live;
  // the timeline's zoom: the link's for the recording it opened, then this recording's own
  const [zoom, setZoom] = useState<[number, number] | null>(() => (initialView.rec === player.recId ? takeInitialZoom() : null));
  // how the CPU lanes are shown: the link's for the recording it opened, then as this browser had them
  const [lanes, setLanes] = useState<LanesView>(() => ((initialView.rec === player.recId ? takeInitialLanes() : null) ?? defaultLanesView()));

  return (
    <>
      {/* (the live lanes are always shown) */}
      <UrlSync player={player} cmp={cmpId} countsUpTo={countsUpTo} sweep={sweepId} zoom={zoom} lanes={live ? { ...lanes, shown: true } : lanes} />
      <main className="center">
        <div className="rec-bar">
          <h1 className="rec-title">{rec?.name ?? "…"}</h1>
          {rec && !live && (
            <span data-testid="loss-badge">
              <LossBadge rec={rec} />
            </span>
          )}
          {rec && (
            <span className="muted small">
              {live ? `${rec.host ?? "unknown host"} · ${rec.kernel_release ?? "?"}` : plural(rec.event_count, "event")} · {player.topo ? `${plural(player.topo.cpus.length, "CPU")} · ${plural(player.topo.llcs.length, "LLC")} · ${plural(player.topo.numa_nodes.length, "node")}` : "? CPUs · ? LLCs · ? nodes"}
              {player.topo ? ` · topology ${player.topo.source}` : ""}
            </span>
          )}
          {rec?.sim_metric && (
            <span className={`small${rec.sim_metric.note !== null ? " few-samples" : ""}`} data-testid="rec-sim-metric" title={rec.sim_metric.note ?? rec.sim_metric.incomplete ?? undefined}>
              {simMetricText(rec.sim_metric)}
            </span>
          )}
          {rec && ready && !live && (
            <a className="small" href={api.traceTextUrl(rec.id)} download data-testid="rec-trace-text" title="this recording's events as ftrace text, the lines cat trace prints (no irq-info flags; nanosecond timestamps), for grep, awk, a diff or your own scripts; bin/placemap admin export ID writes the same">
              ftrace text
            </a>
          )}
          {rec?.scenario && (
            <span className="small">
              <ScenarioFile recordingId={rec.id} testId="rec-scenario-file" title={`the whole scenario that produced this run (a replay's recorded profile inline): ${cliCommand(false, 1)} reruns it`} />
            </span>
          )}
        </div>
        {ready && live && <LiveBar player={player} onOpenFinished={onOpenFinished} />}
        {cmp && !live ? (
          <CompareRow player={player} cmp={cmp} onSelect={onSelect} onClose={onCloseCompare} />
        ) : (
          <GridView player={player} onSelect={onSelect} />
        )}
        {ready && live && <LiveTimeline player={player} />}
        {ready && live && <LiveLanes player={player} onSelect={onSelect} summed={lanes.summed} onSummed={(summed) => { setLanes((l) => ({ ...l, summed })); }} />}
        {ready && rec && !live && (
          <>
            <Controls player={player} tStart={player.tStart} tEnd={player.tEnd} />
            <Timeline player={player} overview={overview} tStart={player.tStart} tEnd={player.tEnd} onSelect={onSelect} cmp={cmp} zoom={zoom} onZoom={setZoom} lanes={lanes} onLanes={setLanes} />
          </>
        )}
      </main>
    </>
  );
}

/** The right column of an open recording: counts, the inspector, the domains, the legend, the text view. */
function WorkspaceSide({ player, cmp, countsUpTo, setCountsUpTo, onSelect }: Pick<WorkspaceProps, "player" | "cmp" | "countsUpTo" | "setCountsUpTo" | "onSelect">) {
  const status = usePlayerField(player, "status");
  const selected = usePlayerField(player, "selected");
  const rec = player.rec;
  const ready = status === "ready";
  const live = player.live;

  return (
    <aside className="right">
      {ready && !cmp && !live && <RunCounts player={player} upTo={countsUpTo} setUpTo={setCountsUpTo} onSelect={onSelect} />}
      {ready && cmp && !live && <CompareCounts a={player} b={cmp} upTo={countsUpTo} setUpTo={setCountsUpTo} onSelect={onSelect} />}
      {ready && cmp && !live && <CompareDecisions a={player} b={cmp} />}
      {/* the stored inspector asks the server for task paths, which a live recording has only once it
          is stored: a live view's inspector works from the events the browser holds */}
      {ready && live && <LiveTaskInspector player={player} onSelect={onSelect} />}
      {ready && !live && <TaskInspector player={player} recId={player.recId} topo={player.topo} tStart={player.tStart} tEnd={player.tEnd} selected={selected} onSelect={onSelect} simulated={rec?.source === "simulated"} />}
      {ready && !cmp && !live && player.topo && (
        <SchedDomainsPanel key={player.recId} recId={player.recId} cpus={player.topo.cpus.filter((c) => c.online).map((c) => c.cpu)} />
      )}
      <Legend />
      <PlacementText player={player} />
    </aside>
  );
}

export function App() {
  const [recId, setRecId] = useState<string | null>(initialView.rec);
  const [init, setInit] = useState({ t: initialView.t, speed: initialView.speed, selected: initialView.sel, live: initialView.live ?? false });
  const player = usePlayer(recId, init);
  const [cmpId, setCmpId] = useState<string | null>(initialView.cmp ?? null);
  // the recordings list as the panel last read it, for the Simulate form's recorded hosts
  const [recList, setRecList] = useState<Recording[]>([]);
  const cmpPlayer = usePlayer(cmpId, { t: null, speed: 1, selected: null });
  const [countsUpTo, setCountsUpTo] = useState(initialView.counts === "playhead");
  // the stored sweep the Simulate panel shows (?sweep=ID), kept in the URL beside the recording's view
  const [sweepId, setSweepId] = useState<string | null>(initialView.sweep ?? null);
  const sweepRef = useRef(sweepId); // for the URL writes of callbacks made once
  useEffect(() => {
    sweepRef.current = sweepId;
  }, [sweepId]);
  useEffect(() => {
    if (player) return; // UrlSync writes the URL while a recording is open
    const url = formatView({ rec: null, t: null, sel: null, speed: 1, ...(sweepId ? { sweep: sweepId } : {}) });
    if (url !== window.location.search) window.history.replaceState(null, "", url || window.location.pathname);
  }, [player, sweepId]);

  const open = useCallback((id: string, live: boolean, sel: number | null = null) => {
    setInit((v) => ({ t: null, speed: v.speed, selected: sel, live }));
    setRecId(id);
    setCmpId(null);
    const sweep = sweepRef.current;
    window.history.replaceState(null, "", formatView({ rec: id, t: null, sel, speed: 1, live, ...(sweep ? { sweep } : {}) }));
  }, []);
  const onDeleted = useCallback(
    (id: string) => {
      if (id === cmpId) setCmpId(null);
      if (id !== recId) return;
      setRecId(null);
      const sweep = sweepRef.current;
      window.history.replaceState(null, "", sweep ? formatView({ rec: null, t: null, sel: null, speed: 1, sweep }) : window.location.pathname);
    },
    [recId, cmpId],
  );
  const onSelect = useCallback(
    (pid: number | null) => {
      player?.select(pid);
    },
    [player],
  );

  const key = player ? `${player.recId}${init.live ? ":live" : ""}` : "none";

  return (
    <div className="app">
      <header className="top">
        <span className="brand">placemap</span>
        <span className="muted small">where Linux puts tasks</span>
      </header>
      <Columns
        left={
          <aside className="left">
            <Simulate
              recordings={recList}
              sweepId={sweepId}
              onSweep={setSweepId}
              onOpen={(id) => { open(id, false); }}
              onComparePair={(main, other) => {
                open(main, false);
                setCmpId(other);
              }}
            />
            <RecordingsPanel openId={recId} onOpen={open} onDeleted={onDeleted} onCompare={setCmpId} onList={setRecList} />
          </aside>
        }
        center={
          player ? (
            <WorkspaceMain
              key={key}
              player={player}
              cmp={cmpPlayer}
              cmpId={cmpId}
              countsUpTo={countsUpTo}
              sweepId={sweepId}
              onCloseCompare={() => { setCmpId(null); }}
              onSelect={onSelect}
              onOpenFinished={() => {
                // the task followed live stays selected in the stored recording's inspector
                open(player.recId, false, player.getSnapshot().selected);
              }}
            />
          ) : (
            <main className="center empty">
              <p>Open a recording on the left, or upload a trace.</p>
            </main>
          )
        }
        right={
          player ? (
            <WorkspaceSide key={key} player={player} cmp={cmpPlayer} countsUpTo={countsUpTo} setCountsUpTo={setCountsUpTo} onSelect={onSelect} />
          ) : (
            <aside className="right" />
          )
        }
      />
    </div>
  );
}
