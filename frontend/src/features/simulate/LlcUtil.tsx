/**
 * Under a simulated result: where the run's work sat on the machine's LLCs, for the run and, when
 * there is one, its baseline: a sentence (how many LLCs carry 90% of the busy time, the busiest
 * one) and a heat map, one row per LLC and one column per bin of simulated time, in the grid's
 * LLC heat colours (heatColor). A run saved before llc_util was kept shows nothing.
 */
import type { SimLlcUtil } from "../../client/types";
import { heatColor } from "../grid/renderer";
import { binSpan, llcSpread, spreadText } from "./llcUtil";

interface Props {
  run: SimLlcUtil | null | undefined;
  base: SimLlcUtil | null | undefined;
  testId?: string;
}

const ROW_H = 5;
const WIDTH = 300;

function HeatMap({ u, label }: { u: SimLlcUtil; label: string }) {
  const bins = u.series[0]?.util.length ?? 0;
  if (bins === 0) return null;
  const cell = WIDTH / bins;
  const h = ROW_H * u.series.length;
  return (
    <svg className="llc-heat" width="100%" height={h} viewBox={`0 0 ${String(WIDTH)} ${String(h)}`} preserveAspectRatio="none" role="img" aria-label={`${label}: busy fraction of each LLC over simulated time, 0 to ${(u.end_ns / 1e6).toFixed(1)} ms in ${String(bins)} bins`}>
      {u.series.map((s, row) => (
        <g key={s.llc}>
          <title>{`LLC ${String(s.llc)} (${String(s.cpus)} CPUs): ${String(Math.round(100 * s.mean))}% busy over the run`}</title>
          {s.util.map((x, i) => (
            // a bin's rect, half a unit wider than its share so that neighbours leave no seam
            <rect key={i} x={i * cell} y={row * ROW_H} width={cell + 0.5} height={ROW_H - 0.5} fill={heatColor(x)}>
              <title>{`LLC ${String(s.llc)}, ${binSpan(u, i, bins)}: ${String(Math.round(100 * x))}% busy`}</title>
            </rect>
          ))}
        </g>
      ))}
    </svg>
  );
}

function One({ u, label, testId }: { u: SimLlcUtil; label: string; testId: string }) {
  const end = (u.end_ns / 1e6).toFixed(1);
  return (
    <div className="llc-util-run" data-testid={testId}>
      <div>
        {label}: <span data-testid={`${testId}-spread`}>{spreadText(llcSpread(u))}</span>
      </div>
      <HeatMap u={u} label={label} />
      <div className="muted llc-heat-axis">
        <span>LLC {u.series[0]?.llc ?? 0} at the top, 0 ms</span>
        <span>{end} ms</span>
      </div>
    </div>
  );
}

export function LlcUtil({ run, base, testId = "simulate-llc-util" }: Props) {
  if (!run) return null;
  return (
    <details className="llc-util" data-testid={testId} open>
      <summary>where the work ran: busy time per LLC</summary>
      <One u={run} label={base ? "with the changes" : "the run"} testId="llc-util-run" />
      {base && <One u={base} label="baseline" testId="llc-util-base" />}
    </details>
  );
}
