/**
 * Playback controls: play/pause, speed (0.01x..100x of trace time), step to the next migration,
 * and a time field that takes an exact time (ns, seconds, or +relative). The clock text is
 * updated every frame by a Player frame hook.
 */
import { useEffect, useRef, useState, type SyntheticEvent } from "react";
import type { Player } from "../engine/player";
import { usePlayerSnapshot } from "../engine/usePlayer";
import { SPEEDS } from "../urlState";
import { formatDuration, formatNs, parseTime } from "../../viz/time";

export function Controls({ player, tStart, tEnd }: { player: Player; tStart: number; tEnd: number }) {
  const snap = usePlayerSnapshot(player);
  const clockRef = useRef<HTMLSpanElement>(null);
  const relRef = useRef<HTMLSpanElement>(null);
  const [timeText, setTimeText] = useState("");
  const [timeErr, setTimeErr] = useState<string | null>(null);
  const [stepMsg, setStepMsg] = useState<string | null>(null);

  useEffect(
    () =>
      player.onFrame((t) => {
        const c = clockRef.current;
        if (c) {
          const s = formatNs(t);
          if (c.textContent !== s) c.textContent = s;
        }
        const r = relRef.current;
        if (r) {
          const s = `+${formatDuration(t - tStart)} / ${formatDuration(tEnd - tStart)}`;
          if (r.textContent !== s) r.textContent = s;
        }
      }),
    [player, tStart, tEnd],
  );

  // keyboard: space plays/pauses, "n" steps to the next migration (not while typing)
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const el = e.target as HTMLElement | null;
      if (el && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA" || el.tagName === "BUTTON")) return;
      if (e.key === " ") {
        e.preventDefault();
        player.setPlaying(!player.getSnapshot().playing);
      } else if (e.key === "n") {
        void player.stepToNextMigration();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
    };
  }, [player]);

  const onSubmit = (e: SyntheticEvent) => {
    e.preventDefault();
    const t = parseTime(timeText, tStart);
    if (t === null) {
      setTimeErr("use ns (450594375123), seconds (450.5943s), ms/us, or +1.5s from the start");
      return;
    }
    setTimeErr(t < tStart || t > tEnd ? "outside the recording: clamped" : null);
    player.seek(t);
  };

  const speeds = SPEEDS.includes(snap.speed) ? SPEEDS : [...SPEEDS, snap.speed].sort((a, b) => a - b);
  const ready = snap.status === "ready";
  return (
    <div className="controls">
      <button
        type="button"
        className="btn primary"
        data-testid="play"
        title="space"
        data-state={snap.playing ? "playing" : "paused"}
        disabled={!ready}
        onClick={() => { player.setPlaying(!snap.playing); }}
      >
        <span aria-hidden="true">{snap.playing ? "■ " : "▶ "}</span>
        {snap.playing ? "Pause" : "Play"}
      </button>
      <label className="speed">
        speed
        <select
          data-testid="speed-select"
          value={snap.speed}
          onChange={(e) => { player.setSpeed(Number(e.target.value)); }}
        >
          {speeds.map((s) => (
            <option key={s} value={s}>
              {s}x
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="btn"
        data-testid="next-migration"
        title="n"
        disabled={!ready}
        onClick={() => {
          setStepMsg(null);
          void player.stepToNextMigration().then((ok) => {
            if (!ok) setStepMsg("no later migration");
          });
        }}
      >
        next migration ▸|
      </button>
      <span className="clock" aria-live="off">
        <span ref={clockRef} data-testid="time-display" className="mono">
          {formatNs(snap.playhead)}
        </span>{" "}
        <span ref={relRef} className="muted" />
        {snap.buffering && <span className="muted"> · loading…</span>}
      </span>
      <form className="seek-form" onSubmit={onSubmit}>
        <label>
          go to
          <input
            data-testid="seek-input"
            type="text"
            inputMode="decimal"
            placeholder="ns, 450.59s, +12ms"
            value={timeText}
            onChange={(e) => { setTimeText(e.target.value); }}
            aria-describedby="seek-help"
          />
        </label>
        <button type="submit" className="btn" data-testid="seek-button" disabled={!ready}>
          seek
        </button>
        <span id="seek-help" className={timeErr ? "error small" : "muted small"}>
          {timeErr ?? stepMsg ?? ""}
        </span>
      </form>
    </div>
  );
}
