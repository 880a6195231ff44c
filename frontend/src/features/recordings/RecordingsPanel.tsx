/**
 * Recording list and upload: drag-and-drop or a file picker posts the raw file (XMLHttpRequest
 * upload progress), on the machine chosen beside it (inferred, a preset, or a machine recorded
 * here), then the recording's import progress is polled until ready or failed.
 * Failed imports show their error; every recording shows its lost-events and skipped-lines counts.
 * Live recordings come first with their host and counts so far (the list is polled while any is
 * live, slowly otherwise, so new runs appear); any recording but a running one can be deleted.
 * The open recording (a ready one that was not itself simulated) offers its what-if replay.
 */
import { useCallback, useEffect, useRef, useState, type DragEvent } from "react";
import type { Recording } from "../../client/types";
import { api, uploadRecording } from "../../client/http";
import { formatDuration } from "../../viz/time";
import { LiveRecordingMeta } from "../live/LiveRecordingMeta";
import { liveFirst } from "../live/order";
import { DeleteRecording } from "./DeleteRecording";
import { SimulatedMeta } from "./SimulatedMeta";
import { WhatIf } from "../whatif/WhatIf";
import { plural } from "../../viz/words";
import { chosenMachine, fileChoice, INFERRED, machineChoices, uploadMachine, type MachineChoice } from "./machine";

interface Props {
  openId: string | null;
  /** live: open it following the head (the recording is still being collected) */
  onOpen: (id: string, live: boolean) => void;
  /** a recording was deleted (close it if it is open) */
  onDeleted?: (id: string) => void;
  /** show a recording beside the open one (a what-if twin) */
  onCompare?: (id: string) => void;
  /** the list as this panel last read it (the Simulate form's recorded hosts come from it) */
  onList?: (recs: Recording[]) => void;
}

/** List refresh period while a recording is live (its counts grow), and otherwise (new live runs appear). */
const LIVE_POLL_MS = 1000;
const IDLE_POLL_MS = 5000;

interface UploadRow {
  key: number;
  name: string;
  /** the machine it was sent as recorded on (null: inferred from the trace) */
  on: string | null;
  fraction: number;
  error: string | null;
}

/** Lost events and skipped lines of a recording; warns unless the only skips are comment lines. */
export function LossBadge({ rec }: { rec: Recording }) {
  const lost = rec.lost_events;
  const skipped = rec.skipped_lines ?? rec.import_summary?.skipped_total ?? 0;
  const reasons = Object.entries(rec.import_summary?.skipped ?? {});
  const notComments = reasons.filter(([k]) => k !== "comment").reduce((s, [, v]) => s + v.count, 0);
  const warn = lost > 0 || (reasons.length > 0 ? notComments > 0 : skipped > 0);
  const title = [
    `${lost.toLocaleString()} events lost at the source`,
    `${skipped.toLocaleString()} input lines skipped`,
    ...reasons.map(([k, v]) => `  ${k}: ${v.count.toLocaleString()}${v.first_lines.length ? ` (lines ${v.first_lines.join(", ")}…)` : ""}`),
  ].join("\n");
  return (
    <span className={`badge ${warn ? "warn" : "ok"}`} title={title}>
      lost {lost.toLocaleString()} · skipped {skipped.toLocaleString()}
    </span>
  );
}

export function RecordingsPanel({ openId, onOpen, onDeleted, onCompare, onList }: Props) {
  const [recs, setRecs] = useState<Recording[]>([]);
  useEffect(() => { onList?.(recs); }, [recs, onList]);
  const [listErr, setListErr] = useState<string | null>(null);
  const [uploads, setUploads] = useState<UploadRow[]>([]);
  const [dragOver, setDragOver] = useState(false);
  // the machine the next uploads were recorded on, and the presets to offer (GET /api/sim/options)
  const [machine, setMachine] = useState(INFERRED);
  const [presets, setPresets] = useState<string[]>([]);
  // topology files read on this page (stored by POST /api/topologies), and why the last one was not
  const [files, setFiles] = useState<MachineChoice[]>([]);
  const [machineErr, setMachineErr] = useState<string | null>(null);
  const fileRef = useRef<HTMLInputElement>(null);
  // the latest file read or machine chosen: a file read that finishes after another read or choice
  // is stale, and neither chooses its machine nor shows its error
  const machineSeq = useRef(0);
  const [readingFile, setReadingFile] = useState<string | null>(null);
  const chooseMachine = (value: string) => {
    machineSeq.current++;
    setReadingFile(null);
    setMachineErr(null);
    setMachine(value);
  };
  const readTopologyFile = async (file: File) => {
    const seq = ++machineSeq.current;
    setMachineErr(null);
    setReadingFile(file.name);
    const fail = (why: string) => {
      if (seq !== machineSeq.current) return;
      setReadingFile(null);
      setMachineErr(`topology file ${file.name}: ${why}`);
    };
    let body: unknown;
    try {
      body = JSON.parse(await file.text()) as unknown;
    } catch (e) {
      fail(`not JSON (${e instanceof Error ? e.message : String(e)})`);
      return;
    }
    try {
      const { id } = await api.createTopology(body);
      // the label from the topology as the server stored it (its own reading of the file)
      const stored = await api.storedTopology(id);
      if (seq !== machineSeq.current) return;
      const choice = fileChoice(id, file.name, stored);
      setFiles((f) => [...f.filter((x) => x.value !== choice.value), choice]);
      setReadingFile(null);
      setMachine(choice.value);
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
    }
  };
  useEffect(() => {
    const ctl = new AbortController();
    api.simOptions(ctl.signal).then(
      (o) => { setPresets(o.presets); },
      () => { /* no presets offered; uploads still go, inferred or on a recorded machine */ },
    );
    return () => { ctl.abort(); };
  }, []);
  const keyRef = useRef(0);
  const listSeq = useRef(0);

  const refresh = useCallback(async () => {
    // only the latest listing lands: an older one (sent before an upload finished) must not
    // replace a list that already holds the new recording
    const seq = ++listSeq.current;
    try {
      const list = await api.listRecordings();
      if (seq !== listSeq.current) return;
      setRecs(list);
      setListErr(null);
    } catch (e) {
      if (seq === listSeq.current) setListErr(e instanceof Error ? e.message : String(e));
    }
  }, []);

  useEffect(() => {
    // initial load of the list from the backend
    // eslint-disable-next-line react-hooks/set-state-in-effect
    void refresh();
  }, [refresh]);

  // poll importing recordings until they are ready or failed
  const importing = recs.filter((r) => r.status === "importing").map((r) => r.id);
  const importingKey = importing.join(",");
  useEffect(() => {
    if (!importingKey) return;
    const ids = importingKey.split(",");
    const timer = setInterval(() => {
      void Promise.all(ids.map((id) => api.recording(id).catch(() => null))).then((got) => {
        setRecs((prev) => prev.map((r) => got.find((g) => g?.id === r.id) ?? r));
      });
    }, 500);
    return () => {
      clearInterval(timer);
    };
  }, [importingKey]);

  const anyLive = recs.some((r) => r.status === "live");
  // any other stored recording can be shown beside a stored open one (say tip and a patched kernel)
  const openReady = recs.some((r) => r.id === openId && r.status === "ready");
  useEffect(() => {
    const timer = setInterval(() => {
      void refresh();
    }, anyLive ? LIVE_POLL_MS : IDLE_POLL_MS);
    return () => {
      clearInterval(timer);
    };
  }, [anyLive, refresh]);

  const deleted = useCallback(
    (id: string) => {
      setRecs((prev) => prev.filter((r) => r.id !== id));
      onDeleted?.(id);
      void refresh();
    },
    [onDeleted, refresh],
  );

  // the machine as offered now: a recorded machine no longer listed (its recordings deleted, or
  // past the newest few) falls back to inferred, so that what the select shows is what is sent
  const choices = machineChoices(presets, recs, files);
  const chosen = chosenMachine(choices, machine);
  const upload = (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const key = ++keyRef.current;
      const on = chosen.value !== INFERRED ? chosen.label : null;
      setUploads((u) => [...u, { key, name: file.name, on, fraction: 0, error: null }]);
      const h = uploadRecording(
        file,
        file.name,
        (fraction) => {
          setUploads((u) => u.map((x) => (x.key === key ? { ...x, fraction } : x)));
        },
        uploadMachine(chosen.value),
      );
      h.promise.then(
        (rec) => {
          setUploads((u) => u.filter((x) => x.key !== key));
          setRecs((prev) => [rec, ...prev.filter((r) => r.id !== rec.id)]);
          void refresh();
        },
        (e: unknown) => {
          setUploads((u) => u.map((x) => (x.key === key ? { ...x, error: e instanceof Error ? e.message : String(e) } : x)));
        },
      );
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragOver(false);
    if (e.dataTransfer.files.length > 0) upload(e.dataTransfer.files);
  };

  return (
    <section className="panel recordings" aria-label="Recordings">
      <h2>Recordings</h2>
      <div
        className={`dropzone ${dragOver ? "over" : ""}`}
        data-testid="upload-dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setDragOver(true);
        }}
        onDragLeave={() => { setDragOver(false); }}
        onDrop={onDrop}
      >
        <label className="file-label">
          <input
            type="file"
            data-testid="upload-input"
            aria-label="Upload a trace file"
            onChange={(e) => {
              if (e.target.files) upload(e.target.files);
              e.target.value = "";
            }}
          />
          <span>
            Drop a trace here or <u>choose a file</u>
          </span>
          <span className="muted small">ftrace text, trace-cmd report / trace.dat, perf script / perf.data; gzip ok</span>
        </label>
        <label className="small upload-machine" title="the machine the trace was recorded on: its CPUs' LLCs and nodes give every figure by LLC (every CPU the trace names must be one of its CPUs)">
          recorded on{" "}
          <select
            data-testid="upload-machine"
            value={chosen.value}
            aria-describedby={machineErr ? "upload-machine-error" : undefined}
            onChange={(e) => { chooseMachine(e.target.value); }}
          >
            {(["inferred", "presets", "recorded", "files"] as const).map((g) => {
              const opts = choices.filter((c) => c.group === g);
              if (opts.length === 0) return null;
              const options = opts.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ));
              return g === "inferred" ? options : (
                <optgroup key={g} label={g === "presets" ? "presets" : g === "recorded" ? "machines recorded here" : "topology files"}>
                  {options}
                </optgroup>
              );
            })}
          </select>
        </label>
        <button type="button" className="linkish small" data-testid="upload-machine-pick" onClick={() => { fileRef.current?.click(); }} title="a host's `placemap-collect topology --json`: read here, stored, and chosen as the machine">
          a topology file…
        </button>
        <input
          ref={fileRef}
          type="file"
          accept=".json,application/json"
          hidden
          data-testid="upload-machine-file"
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = "";
            if (f) void readTopologyFile(f);
          }}
        />
        {readingFile !== null && <div className="muted small">reading {readingFile}…</div>}
        {machineErr && (
          <div className="error small" role="alert" id="upload-machine-error" data-testid="upload-machine-error">
            {machineErr}
          </div>
        )}
      </div>
      {uploads.map((u) => (
        <div key={u.key} className="upload-row" data-testid="upload-progress">
          <div className="rec-name">
            {u.name}
            {u.on !== null && <span className="muted small"> on {u.on}</span>}
          </div>
          {u.error ? (
            <div className="error small">
              upload failed: {u.error}{" "}
              <button type="button" className="linkish" onClick={() => { setUploads((x) => x.filter((y) => y.key !== u.key)); }}>
                dismiss
              </button>
            </div>
          ) : (
            <progress max={1} value={u.fraction} aria-label={`uploading ${u.name}`} />
          )}
        </div>
      ))}
      {listErr && <div className="error small">{listErr}</div>}
      <ul className="rec-list" data-testid="recording-list">
        {liveFirst(recs).map((r) => (
          <li key={r.id} className={`rec ${r.id === openId ? "open" : ""} st-${r.status}`} data-testid="recording-item" data-status={r.status}>
            <button type="button" className="rec-open" disabled={r.status === "importing" || r.status === "failed"} onClick={() => { onOpen(r.id, r.status === "live"); }}>
              <span className="rec-name">{r.name}</span>
              <SimulatedMeta rec={r} />
              {r.status === "live" && <LiveRecordingMeta rec={r} />}
              <span className="rec-meta muted small">
                {r.status === "live"
                  ? `${formatDuration((r.t_end_ns ?? 0) - (r.t_start_ns ?? 0))} so far`
                  : r.status === "ready"
                  ? `${plural(r.event_count, "event")} on ${plural(r.cpus_seen.length, "CPU")} · ${formatDuration((r.t_end_ns ?? 0) - (r.t_start_ns ?? 0))}${r.format ? ` · ${r.format}` : ""}`
                  : r.status}
              </span>
            </button>
            {r.status === "importing" && (
              <progress max={1} value={r.progress ?? undefined} aria-label={`importing ${r.name}`} data-testid="import-progress" />
            )}
            {r.status === "failed" && (
              <div className="error small" data-testid="import-error">
                {r.error ?? "import failed"}
              </div>
            )}
            {r.status !== "importing" && r.status !== "failed" && r.status !== "live" && <LossBadge rec={r} />}
            {r.id === openId && r.status === "ready" && r.source !== "simulated" && (
              <WhatIf rec={r} recordings={recs} onOpen={(id) => { onOpen(id, false); }} onCompare={onCompare} onSaved={() => { void refresh(); }} />
            )}
            {onCompare && openReady && r.id !== openId && r.status === "ready" && (
              <button type="button" className="linkish small" data-testid="compare-with-open" onClick={() => { onCompare(r.id); }}>
                compare with the open recording
              </button>
            )}
            <DeleteRecording rec={r} onDeleted={deleted} />
          </li>
        ))}
        {recs.length === 0 && !listErr && <li className="muted small">No recordings yet.</li>}
      </ul>
    </section>
  );
}
