/** React glue for the Player: create one per open recording, and read its throttled snapshot. */
import { useEffect, useState, useSyncExternalStore } from "react";
import type { Overview } from "../../client/types";
import { Player, type PlayerSnapshot } from "./player";

export function usePlayer(
  recId: string | null,
  init: { t: number | null; speed: number; selected: number | null; live?: boolean },
): Player | null {
  const [player, setPlayer] = useState<Player | null>(null);
  const { t, speed, selected } = init;
  const live = init.live ?? false;
  useEffect(() => {
    if (!recId) return;
    // the Player is an external system (fetches, rAF loop): created here so StrictMode's
    // mount/unmount/mount destroys the first one cleanly
    const p = new Player(recId, { t, speed, selected, live });
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setPlayer(p);
    return () => {
      p.destroy();
      setPlayer(null);
    };
    // the initial view only matters when the recording (or live mode) changes
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [recId, live]);
  return recId && player?.recId === recId ? player : null;
}

const EMPTY: PlayerSnapshot = {
  status: "loading",
  error: null,
  playhead: 0,
  playing: false,
  speed: 1,
  buffering: false,
  selected: null,
  version: -1,
  live: null,
};
const noop = (): (() => void) => () => undefined;

export function usePlayerSnapshot(player: Player | null): PlayerSnapshot {
  return useSyncExternalStore(
    player ? player.subscribe : noop,
    player ? player.getSnapshot : () => EMPTY,
  );
}

/** One field of the snapshot: re-renders only when that field changes (not on every tick). */
export function usePlayerField<K extends keyof PlayerSnapshot>(player: Player | null, key: K): PlayerSnapshot[K] {
  return useSyncExternalStore(
    player ? player.subscribe : noop,
    () => (player ? player.getSnapshot() : EMPTY)[key],
  );
}

/** The player's GET overview once it has arrived (null before, "error" when it failed): the
 * overview may come after the first frame, which alone re-renders the views that read it. */
export function usePlayerOverview(player: Player | null): Overview | null | "error" {
  return useSyncExternalStore(player ? player.subscribe : noop, () =>
    player ? (player.overview ?? (player.overviewFailed ? "error" : null)) : null,
  );
}
