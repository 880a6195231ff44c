/**
 * Side-by-side comparison of two recordings (a recording and its what-if twin, a run and its
 * baseline, or any two stored recordings): the compared
 * player follows the main one at the same time from its own start, playing when it plays and at
 * its speed; a seek of the main player moves it too. Pure helpers plus the follow wiring.
 */
import type { Player } from "../engine/player";

/** Where the compared player should be: the main player's time from its start, from the
 * compared one's start, within the compared recording. */
export function followTarget(mainPlayhead: number, mainStart: number, cmpStart: number, cmpEnd: number): number {
  return Math.max(cmpStart, Math.min(cmpEnd, cmpStart + (mainPlayhead - mainStart)));
}

/** A drift smaller than this (ns of trace time) is left alone: both advance at the same speed. */
export const DRIFT_NS = 2_000_000;

/** Keep `cmp` at `main`'s time from start; returns the unsubscribe. */
export function follow(main: Player, cmp: Player): () => void {
  const sync = () => {
    const snap = main.getSnapshot();
    if (snap.status !== "ready" || cmp.getSnapshot().status !== "ready") return;
    const target = followTarget(main.getPlayhead(), main.tStart, cmp.tStart, cmp.tEnd);
    const c = cmp.getSnapshot();
    if (c.speed !== snap.speed) cmp.setSpeed(snap.speed);
    const atEnd = target >= cmp.tEnd;
    const playing = snap.playing && !atEnd;
    const drift = Math.abs(cmp.getPlayhead() - target);
    if (drift > DRIFT_NS || (!snap.playing && drift > 0)) cmp.seek(target);
    if (c.playing !== playing) cmp.setPlaying(playing);
  };
  const offMain = main.subscribe(sync);
  const offCmp = cmp.subscribe(() => {
    // the compared player became ready after the main one moved
    if (cmp.getSnapshot().status === "ready") sync();
  });
  sync();
  return () => {
    offMain();
    offCmp();
  };
}
