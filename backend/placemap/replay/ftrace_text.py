"""A stored recording's events written back as ftrace text, the form `cat trace` prints.

Whatever the source (ftrace, trace-cmd, perf, a live collector, the simulator), the events come out
as the kernel's own trace lines, so a kernel engineer's scripts and habits (grep, awk, a diff
against a real capture) work on any recording, a simulated run included, and the importer reads
the file back to the same events (tests/replay/test_ftrace_text.py holds it to that on the real
traces). What the store does not keep is not invented:

- no irq-info flags column (`d..2.`): the lines are those of `options/irq-info` off;
- timestamps with nine decimals (nanoseconds, as stored; the kernel prints six);
- the TASK column's name is the last one the recording gave that pid (`<idle>` for pid 0, `<...>`
  when none was seen yet, as the kernel prints a pid whose comm it no longer has), a window's
  counting the names before it;
- the TGID column only when the recording has thread-group ids (`(-------)` where one is unknown);
- a lost record as the line an importer reads one from (the kernel's `CPU:N [LOST N EVENTS]`);
  read back, it takes the time of the line before it, as a real trace's does; a loss on no one CPU
  whose count is not known has no such line and is written as a comment;
- a field the store holds no value for (none does, for the fields these lines print, from any
  importer or the simulator) is written as -1, a prev_state as R;
- the per-LLC utilization samples of a live collector, which have no ftrace event, are left out,
  and the header says how many the recording holds;
- sched_process_fork has no prio field: a fork's prio (the simulator stores one) is not written;
  sched_process_exit's group_dead (6.x) is not stored, so not written.

A comm is written as the kernel's bytes: the store's `\\xNN` escapes of bytes that are not UTF-8
become those bytes again. A control character (a newline would end the line) is written as `\\xNN`
text instead, and read back as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay.queries import window_batches
from placemap.replay.seek import state_at
from placemap.schema.events import Kind
from placemap.store import RecordingRow, Store

WAKEUP_NEW = int(Kind.WAKEUP_NEW)
WAKING = int(Kind.WAKING)
WAKEUP = int(Kind.WAKEUP)
MIGRATE = int(Kind.MIGRATE)
SWITCH = int(Kind.SWITCH)
FORK = int(Kind.FORK)
EXIT = int(Kind.EXIT)
EXEC = int(Kind.EXEC)
LLC_UTIL = int(Kind.LLC_UTIL)
LOST = int(Kind.LOST)

_TRACEPOINTS = {
    WAKEUP_NEW: "sched_wakeup_new",
    WAKING: "sched_waking",
    WAKEUP: "sched_wakeup",
    MIGRATE: "sched_migrate_task",
    SWITCH: "sched_switch",
    FORK: "sched_process_fork",
    EXIT: "sched_process_exit",
    EXEC: "sched_process_exec",
}
_ESCAPE = re.compile(rb"\\x([89a-fA-F][0-9a-fA-F])")  # the importer escapes bytes that are not UTF-8
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")


def _raw(text: str, cache: dict[str, bytes]) -> bytes:
    """A stored name as the kernel's bytes (see the module's docstring)."""
    got = cache.get(text)
    if got is None:
        got = _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8", "surrogateescape"))
        got = _CONTROL.sub(lambda m: b"\\x%02x" % m.group(0)[0], got)
        cache[text] = got
    return got


def _lost(cpu: int, n: int | None) -> bytes:
    """A lost record as the line the importers read one from: the kernel's `CPU:N [LOST N EVENTS]`,
    trace-cmd's `CPU:N [EVENTS DROPPED]` for a count not known, a bare `LOST N EVENTS` for a loss on
    no one CPU (a header's count, a collector's dropped batch)."""
    if n is None or n < 0:
        return (
            b"CPU:%d [EVENTS DROPPED]\n" % cpu
            if cpu >= 0
            else b"# events lost on no one CPU, how many not known\n"
        )
    return b"CPU:%d [LOST %d EVENTS]\n" % (cpu, n) if cpu >= 0 else b"LOST %d EVENTS\n" % n


def _ints(col: pa.Array | pa.ChunkedArray, pad: int = 0, fill: str = " ") -> pa.Array:
    """An int column as the decimal bytes the lines print (padded on the left to `pad` with `fill`),
    -1 where it is null."""
    s = pc.cast(col, pa.string())
    if pad:
        s = pc.utf8_lpad(s, pad, fill)
    return pc.cast(pc.fill_null(s, "-1"), pa.binary())


_TP_BY_KIND = pa.array([_TRACEPOINTS.get(k, "").encode() + b": " for k in range(256)], pa.binary())
_SPACES = pa.array([b" " * n for n in range(17)], pa.binary())
# each event's body after `name: ` as the kernel's format prints it, by kind: {column} is a name
# column, or an int column printed in decimal
_FORMATS = {
    (WAKEUP_NEW, WAKING, WAKEUP): "comm={comm} pid={pid} prio={prio} target_cpu={target_cpu}",
    (MIGRATE,): "comm={comm} pid={pid} prio={prio} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
    (SWITCH,): "prev_comm={comm} prev_pid={pid} prev_prio={prio} prev_state={prev_state} "
    "==> next_comm={next_comm} next_pid={next_pid} next_prio={next_prio}",
    (FORK,): "comm={comm} pid={pid} child_comm={child_comm} child_pid={child_pid}",
    (EXIT,): "comm={comm} pid={pid} prio={prio}",
    (EXEC,): "filename={filename} pid={pid} old_pid={old_pid}",
}
# ... split into literal bytes (even places) and column names (odd places), the tracepoint first
_BODIES = tuple(
    (codes, ("kind", *(p.encode() if i % 2 == 0 else p for i, p in enumerate(re.split(r"\{(\w+)\}", f)))))
    for codes, f in _FORMATS.items()
)
_PADS = {"target_cpu": (3, "0")}


def _join(*parts: pa.Array | bytes) -> pa.Array:
    return pc.binary_join_element_wise(*parts, b"")


class FtraceWriter:
    """Turns event batches into ftrace lines, keeping the names seen so far for the TASK column. The
    lines of a batch are made column by column (Arrow's compute kernels): only the names, a few
    hundred distinct per batch, and lost records pass through Python one by one."""

    def __init__(self, *, with_tgid: bool) -> None:
        self.with_tgid = with_tgid
        self.names: dict[int, bytes] = {}  # the last name each pid was given, carried across batches
        self.cache: dict[str, bytes] = {}

    def _names(self, col: pa.Array, fill: str) -> pa.Array:
        """A name column as the kernel's bytes: each distinct value through _raw once."""
        d = pc.dictionary_encode(pc.fill_null(col, fill))
        if isinstance(d, pa.ChunkedArray):
            d = d.combine_chunks()
        raw = pa.array([_raw(v, self.cache) for v in d.dictionary.to_pylist()], pa.binary())
        return pc.take(raw, d.indices)

    def _task_names(
        self, k: np.ndarray, pid: np.ndarray, cur: np.ndarray, b: pa.RecordBatch, values: pa.Array
    ) -> pa.Array:
        """The TASK column's name of every row: the last name given to its running pid, by the row
        itself (its subject) or a row before it (a subject, a switch's next, a fork's child), in
        this batch or before it; `<idle>` for pid 0, `<...>` for one never named. `values` is the
        batch's comm, next_comm and child_comm one after the other."""
        n = len(k)
        idx = np.arange(n, dtype=np.int64)
        next_pid = pc.fill_null(b.column("next_pid"), 0).to_numpy()
        child_pid = pc.fill_null(b.column("child_pid"), 0).to_numpy()
        named = (pid != 0) & (k != LLC_UTIL) & (k != LOST)
        by_switch = (k == SWITCH) & (next_pid != 0)
        by_fork = (k == FORK) & (child_pid != 0)
        keys = np.concatenate([pid[named], next_pid[by_switch], child_pid[by_fork]]).astype(np.int64)
        # a row's own name counts for its line, a switch's next and a fork's child from the next line
        at = np.concatenate([2 * idx[named], 2 * idx[by_switch] + 1, 2 * idx[by_fork] + 1])
        val = np.concatenate([idx[named], n + idx[by_switch], 2 * n + idx[by_fork]])
        order = np.lexsort((at, keys))
        keys, at, val = keys[order], at[order], val[order]
        span = 2 * n + 2
        j = np.searchsorted(keys * span + at, cur.astype(np.int64) * span + 2 * idx, side="right") - 1
        jj = np.clip(j, 0, max(len(keys) - 1, 0))
        found = (j >= 0) & (keys[jj] == cur) if len(keys) else np.zeros(n, dtype=bool)
        pick = np.where(found, val[jj] if len(keys) else 0, -1)
        # the rest: named in an earlier batch, the idle task, or no name yet
        extra: list[bytes] = [b"<idle>", b"<...>"]
        base = 3 * n
        unfound = ~found
        pids, inverse = np.unique(cur[unfound], return_inverse=True)
        where: list[int] = []
        for p in pids.tolist():
            if p in self.names:
                where.append(base + len(extra))
                extra.append(self.names[p])
            else:
                where.append(base + 1)
        pick[unfound] = np.asarray(where, dtype=np.int64)[inverse] if where else pick[unfound]
        pick[cur == 0] = base
        # carry the last name of each pid named here to the next batch
        if len(keys):
            last = np.r_[keys[1:] != keys[:-1], True]
            for p, v in zip(keys[last].tolist(), val[last].tolist(), strict=True):
                self.names[p] = values[v].as_py()
        return pc.take(pa.concat_arrays([values, pa.array(extra, pa.binary())]), pa.array(pick))

    def batch(self, b: pa.RecordBatch) -> bytes:
        """The lines of one batch, in its order."""
        n = b.num_rows
        if n == 0:
            return b""
        col = b.column
        kind = col("kind")
        k = kind.to_numpy()
        pid = col("pid").to_numpy()
        cur = col("cur_pid").to_numpy()
        comm = self._names(col("comm"), "")
        next_comm = self._names(col("next_comm"), "")
        child_comm = self._names(col("child_comm"), "")
        name = self._task_names(k, pid, cur, b, pa.concat_arrays([comm, next_comm, child_comm]))
        pad = pc.take(_SPACES, pc.max_element_wise(pc.subtract(16, pc.binary_length(name)), 0))
        task = _join(
            pad, name, b"-", pc.cast(pc.utf8_rpad(pc.cast(col("cur_pid"), pa.string()), 7), pa.binary())
        )
        if self.with_tgid:
            tgid = pc.fill_null(
                pc.cast(pc.utf8_lpad(pc.cast(col("tgid"), pa.string()), 7), pa.binary()), b"-------"
            )
            task = _join(task, b" (", tgid, b")")
        ts = col("ts_ns")
        secs = pc.divide(ts, 1_000_000_000)
        # "[%03d] ", the irq-info flags when on (never here), then " %5lu.%06lu" (trace_print_context)
        when = _join(
            b" [",
            _ints(col("cpu"), 3, "0"),
            b"]  ",
            _ints(secs, 5),
            b".",
            _ints(pc.subtract(ts, pc.multiply(secs, 1_000_000_000)), 9, "0"),
            b": ",
        )
        # each kind's body from its own rows, then every row's put back in place
        names = {"comm": comm, "next_comm": next_comm, "child_comm": child_comm}
        groups: list[pa.Array] = []
        pos = np.zeros(n, dtype=np.int64)
        done = 0
        for codes, template in _BODIES:
            rows = np.flatnonzero(np.isin(k, codes))
            if len(rows) == 0:
                continue
            take = pa.array(rows)
            parts: list[pa.Array | bytes] = []
            for part in template:
                if isinstance(part, bytes):
                    parts.append(part)
                elif part in names:
                    parts.append(pc.take(names[part], take))
                elif part in ("prev_state", "filename"):
                    parts.append(self._names(pc.take(col(part), take), "R" if part == "prev_state" else ""))
                elif part == "kind":
                    parts.append(pc.take(_TP_BY_KIND, pc.take(kind, take)))
                else:
                    parts.append(_ints(pc.take(col(part), take), *_PADS.get(part, (0, " "))))
            groups.append(_join(*parts))
            pos[rows] = done + np.arange(len(rows))
            done += len(rows)
        body = (
            pc.take(pa.concat_arrays(groups), pa.array(pos)) if groups else pa.array([b""] * n, pa.binary())
        )
        lines = _join(task, when, body, b"\n")
        if ((k == LOST) | (k == LLC_UTIL)).any():
            special: list[bytes | None] = [None] * n
            cpus, lost = col("cpu").to_pylist(), col("lost_events").to_pylist()
            for i in np.flatnonzero(k == LOST).tolist():
                special[i] = _lost(cpus[i], lost[i])
            lines = pc.if_else(pc.equal(kind, LOST), pa.array(special, pa.binary()), lines)
            lines = pc.filter(lines, pc.not_equal(kind, LLC_UTIL))
        return _concat(lines)


def _concat(lines: pa.Array) -> bytes:
    """A binary array's values one after the other: the slice of its data buffer they fill."""
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    _validity, offsets, data = lines.buffers()
    off = np.frombuffer(offsets, dtype=np.int32, count=len(lines) + 1, offset=4 * lines.offset)
    return data.to_pybytes()[off[0] : off[-1]] if data is not None else b""


def header(what: str, with_tgid: bool, left_out: int = 0) -> bytes:
    """The comment lines `cat trace` starts with, saying what this file is (`what`) and what it lacks."""
    # print_func_help_header's two lines
    cols = (
        b"#           TASK-PID       TGID    CPU#     TIMESTAMP  FUNCTION\n"
        b"#              | |           |       |         |         |\n"
        if with_tgid
        else b"#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
        b"#              | |         |         |         |\n"
    )
    safe = _CONTROL.sub(b"?", what.encode("utf-8", "replace"))
    lost = b"# left out: the recording's %d per-LLC utilization samples (no ftrace event)\n" % left_out
    return (
        b"# tracer: nop\n#\n"
        + b"# placemap: %s written as ftrace text; no irq-info flags, nanosecond timestamps\n" % safe
        + (lost if left_out else b"")
        + b"#\n"
        + cols
    )


def write_ftrace(
    batches: Iterable[pa.RecordBatch], *, what: str, left_out: int, names: dict[int, str] | None = None
) -> Iterator[bytes]:
    """The whole file, a piece per batch of events (`left_out` of them llc_util samples, said in the
    header). The TGID column is written when the first batch with a trace event has thread-group ids.
    `names`: the pids named before the first batch (a window's), for the TASK column."""
    it = iter(batches)
    held: list[pa.RecordBatch] = []
    with_tgid = False
    for b in it:
        held.append(b)
        events = pc.sum(pc.less(b.column("kind"), LLC_UTIL).cast(pa.int64())).as_py() or 0
        if events:
            with_tgid = b.column("tgid").null_count < b.num_rows
            break
    w = FtraceWriter(with_tgid=with_tgid)
    for pid, name in (names or {}).items():
        w.names[pid] = _raw(name, w.cache)
    yield header(what, with_tgid, left_out)
    for b in (*held, *it):
        piece = w.batch(b)
        if piece:
            yield piece


class FtraceFile:
    """ftrace text written to `out` as batches of events are handed to `add` (a simulation's, while
    it runs): the header first, then each batch's lines. No thread-group ids (the simulator has none)."""

    def __init__(self, out: BinaryIO, what: str) -> None:
        self.out = out
        self.writer = FtraceWriter(with_tgid=False)
        out.write(header(what, False))

    def add(self, batch: pa.RecordBatch) -> None:
        self.out.write(self.writer.batch(batch))


def recording_text(
    store: Store, rec: RecordingRow, t0: int | None = None, t1: int | None = None
) -> Iterator[bytes]:
    """A stored recording's events of [t0, t1] (all by default) as ftrace text, chunk by chunk."""
    by_kind = rec.meta.get("events_by_kind", {})
    left_out = by_kind.get("llc_util", 0) if isinstance(by_kind, dict) else 0
    what = f"recording {rec.id} ({rec.name})"
    names = None
    if t0 is not None:
        # a window's TASK column names the tasks the events before it named, as the whole file does
        before = state_at(store, rec.id, t0 - 1).state
        names = {int(p): str(c) for p, c in zip(before.pids.tolist(), before.comm.tolist(), strict=True) if c}
    return write_ftrace(window_batches(store, rec.id, t0, t1), what=what, left_out=int(left_out), names=names)


_SUFFIXES = re.compile(r"(\.(gz|zst|txt|dat|ftrace|trace|arrow|perf-script|tracecmd-report))+$")


def file_name(rec: RecordingRow) -> str:
    """A download's file name: the recording's name without its trace suffixes, in safe characters."""
    stem = _SUFFIXES.sub("", re.sub(r"[^A-Za-z0-9._-]+", "_", rec.name)).strip("._") or rec.id
    return f"{stem}.ftrace.txt"
