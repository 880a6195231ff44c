/** Legend: migration crossing levels and what the grid's marks mean. */
import { LEVELS, LEVEL_LABELS, levelColor } from "../viz/colors";
import { heatColor } from "./grid/renderer";

export function Legend() {
  return (
    <section className="panel legend" aria-label="Legend">
      <h2>Legend</h2>
      <ul className="legend-list">
        {LEVELS.map((l) => (
          <li key={l}>
            <span className="swatch ring" style={{ borderColor: levelColor(l) }} /> <b>{l}</b> <span className="muted small">{LEVEL_LABELS[l]}</span>
          </li>
        ))}
      </ul>
      <ul className="legend-list small">
        <li>
          <span className="swatch" style={{ background: "#4e79a7" }} /> CPU fill: running task, colored by process
        </li>
        <li>
          <span className="swatch badge-sw">3</span> runnable tasks queued on the CPU
        </li>
        <li>
          <span className="swatch" style={{ background: `linear-gradient(90deg, ${heatColor(0)}, ${heatColor(0.5)}, ${heatColor(1)})` }} /> LLC background: utilization 0 → 100%
        </li>
        <li>
          <span className="swatch sel" /> selected task (dashed when not running)
        </li>
      </ul>
    </section>
  );
}
