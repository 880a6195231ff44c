/** A player's own GET metrics (it fetches them as it loads): null while loading, "error" when that failed. */
import { useSyncExternalStore } from "react";
import type { Metrics } from "../../client/types";
import type { Player } from "../engine/player";

export function usePlayerMetrics(player: Player): Metrics | null | "error" {
  return useSyncExternalStore(player.subscribe, () => player.metrics ?? (player.metricsFailed ? "error" : null));
}
