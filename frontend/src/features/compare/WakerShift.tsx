/**
 * One sentence under a simulated pair's result: of the wakeups whose waker ran in another LLC than the
 * wakee's prev CPU (where wake_affine() chooses, and the wake hints act), the share that woke in the
 * waker's LLC, with the changes and without (each run's counters.wakeups.by_waker). Nothing when
 * either run lacks the counts (saved before they were kept) or neither has such a wakeup.
 */
import type { WakerCounts } from "../../client/types";
import { formatValue, shareOfCross } from "./counts";

export function WakerShift({ without, withChanges, testId }: { without: WakerCounts | null | undefined; withChanges: WakerCounts | null | undefined; testId: string }) {
  if (!without || !withChanges || (without.cross_llc === 0 && withChanges.cross_llc === 0)) return null;
  const n = (w: WakerCounts) => w.cross_llc.toLocaleString("en-US");
  return (
    <span data-testid={testId} title="wakeups whose waker (sched_waking's CPU) ran outside the LLC of the CPU the task last ran on, and the share of them that woke in the waker's LLC">
      {" "}
      Woken from another LLC: {n(withChanges)} wakeups, {formatValue(shareOfCross(withChanges, "to_waker_llc"), "fraction")} of them in the waker's LLC ({n(without)} and {formatValue(shareOfCross(without, "to_waker_llc"), "fraction")} without).
    </span>
  );
}
