/**
 * What the simulate and what-if forms share around their fields: the options (GET /api/sim/options,
 * fetched when the form first opens) with the choice made from them, the "▸ title" toggle, and the
 * form element itself.
 */
import { useEffect, useState, type ReactNode, type Ref } from "react";
import { api } from "../../client/http";
import type { SimOptions, Topology } from "../../client/types";
import { withChosen, type Host } from "../simulate/hosts";

export interface SimChoiceState<T> {
  opts: SimOptions | null;
  choice: T | null;
  set: (f: (c: T) => T) => void;
  err: string | null;
}

/** The options once `open`, and a choice started from them by `init`. */
export function useSimChoice<T>(open: boolean, init: (o: SimOptions) => T): SimChoiceState<T> {
  const [opts, setOpts] = useState<SimOptions | null>(null);
  const [choice, setChoice] = useState<T | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [initFn] = useState(() => init);
  useEffect(() => {
    if (!open || opts) return;
    const ctl = new AbortController();
    api.simOptions(ctl.signal).then(
      (o) => {
        setOpts(o);
        setChoice(initFn(o));
      },
      (e: unknown) => {
        if (!ctl.signal.aborted) setErr(e instanceof Error ? e.message : String(e));
      },
    );
    return () => { ctl.abort(); };
  }, [open, opts, initFn]);
  const set = (f: (c: T) => T) => { setChoice((c) => (c === null ? c : f(c))); };
  return { opts, choice, set, err };
}

export function Toggle({ open, setOpen, title }: { open: boolean; setOpen: (v: boolean) => void; title: string }) {
  return (
    <button type="button" className="linkish" aria-expanded={open} onClick={() => { setOpen(!open); }}>
      {open ? "▾" : "▸"} {title}
    </button>
  );
}

export function SimForm({ label, onSubmit, children, formRef }: { label: string; onSubmit: () => void; children: ReactNode; formRef?: Ref<HTMLFormElement> }) {
  return (
    <form
      ref={formRef}
      className="whatif-form small"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}

/** After a pick in a result table below the form (a cell, a machine, a toggle, a value): the form's
 * submit button scrolled into view and focused, so that Enter or a click runs what was picked, and
 * the form's changed fields are in sight. */
export function showSubmit(form: HTMLFormElement | null): void {
  const button = form?.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (!button) return;
  button.scrollIntoView({ block: "center" });
  button.focus({ preventScroll: true });
}

/** The machine to simulate: a preset (GET /api/sim/options), or `extra` options before them;
 * `title` the chosen option's whole text (a recorded host's label is cut at the select's width). */
export function PresetSelect({ label, value, presets, onChange, extra, title }: { label: string; value: string; presets: string[]; onChange: (v: string) => void; extra?: ReactNode; title?: string | undefined }) {
  return (
    <label>
      {label}{" "}
      <select value={value} aria-label={label} title={title ?? value} onChange={(e) => { onChange(e.target.value); }}>
        {extra}
        {presets.map((p) => <option key={p} value={p}>{p}</option>)}
      </select>
    </label>
  );
}

/**
 * The machine select of both forms: `before` (the what-if's own "recorded host"), the recorded
 * hosts (hosts.ts) in a group named `hostsLabel`, keeping the chosen one while its recordings are
 * gone (withChosen), then the presets. `onChange` gets the value and, for a host, its topology to
 * send inline (null for a preset).
 */
export function MachineSelect({ label, value, body, presets, hosts, hostsLabel, onChange, before }: {
  label: string;
  value: string;
  /** the chosen host's topology (the choice's topologyBody) */
  body: Topology | null;
  presets: string[];
  hosts: Host[];
  hostsLabel: string;
  onChange: (value: string, body: Topology | null) => void;
  before?: ReactNode;
}) {
  const listed = withChosen(hosts, value, body);
  return (
    <PresetSelect
      label={label}
      value={value}
      presets={presets}
      title={listed.find((h) => h.key === value)?.label}
      onChange={(v) => { onChange(v, listed.find((h) => h.key === v)?.topology ?? null); }}
      extra={<>
        {before}
        {listed.length > 0 && (
          <optgroup label={hostsLabel}>
            {listed.map((h) => <option key={h.key} value={h.key}>{h.label}</option>)}
          </optgroup>
        )}
      </>}
    />
  );
}
