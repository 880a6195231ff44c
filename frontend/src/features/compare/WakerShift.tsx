/**
 * One sentence under a simulated pair's result: of the wakeups whose waker ran in another LLC than the
 * wakee's prev CPU (where wake_affine() chooses, and the wake hints act), the share that woke in the
 * waker's LLC, with the changes and without (each run's counters.wakeups.by_waker). When neither run
 * has such a wakeup, that the run's wake hints (wake_affine, wake_hold) had nothing to choose, and
 * nothing without wake hints; nothing when either run lacks the counts (saved before they were kept).
 */
import type { WakerCounts } from "../../client/types";
import { formatValue, shareOfCross } from "./counts";

/** The wake hints of a scenario (its `hints`), the ones that act only on a wakeup from another LLC. */
export function wakeHints(scenario: Record<string, unknown> | null | undefined): string[] {
  const hints = scenario?.hints;
  return Array.isArray(hints) ? hints.filter((h): h is string => h === "wake_affine" || h === "wake_hold") : [];
}

export function WakerShift({
  without,
  withChanges,
  testId,
  hints = [],
}: {
  without: WakerCounts | null | undefined;
  withChanges: WakerCounts | null | undefined;
  testId: string;
  /** the run's wake hints: when no wakeup came from another LLC, the sentence says they had nothing to choose */
  hints?: string[];
}) {
  if (!without || !withChanges) return null;
  if (without.cross_llc === 0 && withChanges.cross_llc === 0) {
    if (hints.length === 0) return null;
    return (
      <span data-testid={testId}>
        {" "}
        No wakeup came from another LLC than the woken task's, in either run: {hints.join(" and ")} had nothing to choose.
      </span>
    );
  }
  const n = (w: WakerCounts) => w.cross_llc.toLocaleString("en-US");
  const pct = (w: WakerCounts) => formatValue(shareOfCross(w, "to_waker_llc"), "fraction");
  const text =
    withChanges.cross_llc === 0
      ? `none (${n(without)} wakeups without, ${pct(without)} of them in the waker's LLC)`
      : without.cross_llc === 0
        ? `${n(withChanges)} wakeups, ${pct(withChanges)} of them in the waker's LLC (none without)`
        : `${n(withChanges)} wakeups, ${pct(withChanges)} of them in the waker's LLC (${n(without)} and ${pct(without)} without)`;
  return (
    <span data-testid={testId} title="wakeups whose waker (sched_waking's CPU) ran outside the LLC of the CPU the task last ran on, and the share of them that woke in the waker's LLC">
      {" "}
      Woken from another LLC: {text}.
    </span>
  );
}
