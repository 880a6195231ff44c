/**
 * A sweep's names to tick (the machines of a sweep over presets, the toggles of a feature table):
 * one checkbox each, two to a row; the ticked ones kept as the form keeps them, joined by commas in
 * the names' order (sweepView.toggleTicked).
 */
import { toggleTicked } from "./sweepView";

interface Props {
  label: string;
  names: string[];
  /** the ticked names, joined by commas */
  ticked: string;
  onChange: (ticked: string) => void;
}

export function TickList({ label, names, ticked, onChange }: Props) {
  const on = new Set(ticked.split(","));
  return (
    <div className="sweep-machines" role="group" aria-label={label}>
      {names.map((name) => (
        <label key={name}>
          <input type="checkbox" checked={on.has(name)} onChange={(e) => { onChange(toggleTicked(ticked, name, e.target.checked, names)); }} /> {name}
        </label>
      ))}
    </div>
  );
}
