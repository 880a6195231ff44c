/**
 * The simulator toggles both forms share (what-if replay, simulate): one hint per category and the
 * feature switches; `seed` is in the choice but has its field in the simulate form only (a replay
 * draws nothing from it). The choices come from GET /api/sim/options.
 */
import type { SimOptions } from "../../client/types";

export interface Toggles {
  /** per hint category, the chosen hint or "" for none */
  hints: Record<string, string>;
  /** boolean feature switches as chosen (the others keep their defaults) */
  features: Record<string, boolean>;
  seed: number;
}

export function ToggleFields<T extends Toggles>({ opts, choice, set }: { opts: SimOptions; choice: T; set: (f: (c: T) => T) => void }) {
  return (
    <>
      {Object.entries(opts.hint_categories).map(([cat, hints]) => (
        <fieldset key={cat}>
          <legend>{cat} hint</legend>
          {["", ...hints].map((h) => (
            <label key={h || "none"}>
              <input
                type="radio"
                name={`hint-${cat}`}
                value={h}
                checked={choice.hints[cat] === h}
                onChange={() => { set((c) => ({ ...c, hints: { ...c.hints, [cat]: h } })); }}
              />
              {h || "none"}
            </label>
          ))}
        </fieldset>
      ))}
      <fieldset>
        <legend>features</legend>
        {Object.keys(choice.features).map((f) => (
          <label key={f}>
            <input
              type="checkbox"
              checked={choice.features[f]}
              onChange={(e) => { const v = e.target.checked; set((c) => ({ ...c, features: { ...c.features, [f]: v } })); }}
            />
            {f}
          </label>
        ))}
      </fieldset>
    </>
  );
}
