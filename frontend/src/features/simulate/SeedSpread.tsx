/**
 * The change over seeds under the simulate form's result: the saved pair's seed and the further
 * seeds' pairs, while they run how many have ended, then whether the change holds its sign on every
 * seed or the seed decides, its median and range, whether the seeds moved it at all, and each
 * seed's pair (in a closed list).
 */
import type { SimMetric } from "../../client/types";
import { jobEnded } from "../whatif/useJobPair";
import { changePct, pctText } from "../whatif/scenario";
import { comparable, metricText, seedSummary, type SeedResult } from "./scenario";
import { seedResults, type SeedJobs } from "./useSeedRuns";

interface Props {
  /** every seed's jobs, the form's own seed first */
  runs: SeedJobs[];
  better: SimMetric["better"];
}

function seedText(r: SeedResult): string {
  if ("failed" in r) return `failed: ${r.failed}`;
  const vs = `${metricText(r.run)} against ${metricText(r.base)}`;
  return comparable(r.run, r.base) ? `${vs}, ${pctText(changePct(r.run.metric.value, r.base.metric.value))}` : `${vs}: not compared (a run did not complete)`;
}

export function SeedSpread({ runs, better }: Props) {
  const done = runs.filter((r) => jobEnded(r.job) && jobEnded(r.base)).length;
  const first = runs[0]?.seed ?? 0;
  const last = runs[runs.length - 1]?.seed ?? 0;
  const head = `on ${String(runs.length)} seeds (${String(first)}..${String(last)})`;
  if (done < runs.length) {
    return (
      <div className="muted" data-testid="simulate-seeds">
        {head}: {done} of {runs.length} pairs done…
      </div>
    );
  }
  const results = seedResults(runs);
  const s = seedSummary(results, better);
  const spread = s.median === null || s.min === null || s.max === null ? "" : `; change median ${pctText(s.median)}, range ${pctText(s.min)} .. ${pctText(s.max)}`;
  const partial = s.measured < s.seeds ? ` (${String(s.measured)} of ${String(s.seeds)} seeds measured)` : "";
  return (
    <div data-testid="simulate-seeds">
      {head}: <b data-testid="simulate-seeds-verdict">{s.verdict}</b> ({better} is better){spread}
      {partial}
      {s.identical && (
        <span className="muted" data-testid="simulate-seeds-same">
          {" "}— every seed gave the same change: a seed picks only the CPU the workload starts on and its own jitter, and they move nothing here
        </span>
      )}
      <details>
        <summary>each seed</summary>
        <ul className="seed-list">
          {results.map((r) => (
            <li key={r.seed} data-testid="simulate-seed">
              seed {r.seed}: {seedText(r)}
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}
