/**
 * A sweep's names to tick (the machines of a sweep over presets and recorded hosts, the toggles of
 * a feature table): one checkbox each, two to a row; the ticked ones kept as the form keeps them,
 * joined by commas in the names' order (sweepView.toggleTicked). A ticked name no longer listed (a
 * recorded host since deleted) is shown ticked, marked gone, so that it can be unticked: the sweep
 * refuses it by name until then.
 */
import { Breakable } from "./Breakable";
import { toggleTicked } from "./sweepView";

interface Props {
  label: string;
  names: string[];
  /** the ticked names, joined by commas */
  ticked: string;
  onChange: (ticked: string) => void;
  /** a word after some names (a recorded host's "recorded"), and the name's tooltip */
  notes?: ReadonlyMap<string, { note: string; title: string }>;
}

export function TickList({ label, names, ticked, onChange, notes }: Props) {
  const on = new Set(ticked.split(",").map((s) => s.trim()).filter((s) => s !== ""));
  const gone = [...on].filter((n) => !names.includes(n));
  return (
    <div className="sweep-machines" role="group" aria-label={label}>
      {names.map((name) => {
        const note = notes?.get(name);
        return (
          <label key={name} title={note?.title}>
            <input type="checkbox" checked={on.has(name)} onChange={(e) => { onChange(toggleTicked(ticked, name, e.target.checked, names)); }} />
            <span>
              <Breakable text={name} />
              {note && <span className="muted"> {note.note}</span>}
            </span>
          </label>
        );
      })}
      {gone.map((name) => (
        <label key={name} title="no longer listed here: untick it">
          <input type="checkbox" checked onChange={() => { onChange(toggleTicked(ticked, name, false, names)); }} />
          <span>
            <Breakable text={name} />
            <span className="muted"> (gone)</span>
          </span>
        </label>
      ))}
    </div>
  );
}
