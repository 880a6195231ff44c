/**
 * One sentence under a simulated pair's result: the wakeup or fork reason whose share moved most between
 * the run without the changes and the run with them (both jobs' result.decisions). Nothing when either
 * run has no decisions or none moved.
 */
import type { SimDecisions } from "../../client/types";
import { formatValue } from "./counts";
import { largestShift } from "./decisions";

export function DecisionShift({ without, withChanges, testId }: { without: SimDecisions | null | undefined; withChanges: SimDecisions | null | undefined; testId: string }) {
  const shift = without && withChanges ? largestShift(without, withChanges) : null;
  if (!shift) return null;
  return (
    <span data-testid={testId}>
      {" "}
      The decision that moved most: {formatValue(shift.bShare, "fraction")} of the {shift.kind === "wakeup" ? "wakeups" : "forks"} went “{shift.label}” ({formatValue(shift.aShare, "fraction")} without).
    </span>
  );
}
