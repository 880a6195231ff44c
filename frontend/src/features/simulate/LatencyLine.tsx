/**
 * Under a latency metric (schbench's p99 wakeup latency): the percentiles it is one of and how
 * many wakeups they are read from; when too few for the p99 to be more than one of the largest,
 * the server's note, in the warning colour, for the run and for its baseline (said once when both
 * have it).
 */
import type { SimLatency } from "../../client/types";
import { latencyText } from "./scenario";

interface Props {
  run: SimLatency;
  base: SimLatency | null;
}

export function LatencyLine({ run, base }: Props) {
  const text = latencyText(run);
  if (text === null) return null;
  return (
    <div data-testid="simulate-latency">
      wakeup latency over <span className="mono">{text}</span>
      {run.note !== null && (
        <div className="few-samples" data-testid="simulate-few-samples">
          {run.note}
          {base?.note != null && `; so is its baseline's (${String(base.samples)} wakeups)`}
        </div>
      )}
      {run.note === null && base?.note != null && <div className="few-samples" data-testid="simulate-few-samples">baseline: {base.note}</div>}
    </div>
  );
}
