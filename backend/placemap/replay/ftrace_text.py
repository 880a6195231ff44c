"""A stored recording's events written back as ftrace text, the form `cat trace` prints.

Whatever the source (ftrace, trace-cmd, perf, a live collector, the simulator), the events come out
as the kernel's own trace lines, so a kernel engineer's scripts and habits (grep, awk, a diff
against a real capture) work on any recording, a simulated run included, and the importer reads
the file back to the same events (tests/replay/test_ftrace_text.py holds it to that on the real
traces). What the store does not keep is not invented:

- no irq-info flags column (`d..2.`): the lines are those of `options/irq-info` off;
- timestamps with nine decimals (nanoseconds, as stored; the kernel prints six);
- the TASK column's name is the last one the recording gave that pid (`<idle>` for pid 0, `<...>`
  when none was seen yet, as the kernel prints a pid whose comm it no longer has);
- the TGID column only when the recording has thread-group ids (`(-------)` where one is unknown);
- a lost record as the line an importer reads one from (the kernel's `CPU:N [LOST N EVENTS]`);
  read back, it takes the time of the line before it, as a real trace's does;
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

import pyarrow as pa
import pyarrow.compute as pc

from placemap.replay.queries import window_batches
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
_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})")
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")


def _raw(text: str | None, cache: dict[str, str]) -> str:
    """A stored name as the kernel's bytes (see the module's docstring), held in a str whose bytes that
    are not UTF-8 are surrogate escapes (the file is encoded with "surrogateescape")."""
    if text is None:
        return ""
    got = cache.get(text)
    if got is None:
        raw = _ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8", "surrogateescape"))
        raw = _CONTROL.sub(lambda m: b"\\x%02x" % m.group(0)[0], raw)
        got = raw.decode("utf-8", "surrogateescape")
        cache[text] = got
    return got


def _lost(cpu: int, n: int | None) -> str:
    """A lost record as the line the importers read one from: the kernel's `CPU:N [LOST N EVENTS]`,
    trace-cmd's `CPU:N [EVENTS DROPPED]` for a count not known, a bare `LOST N EVENTS` for a loss on
    no one CPU (a header's count, a collector's dropped batch)."""
    known = n is not None and n >= 0
    if cpu >= 0:
        return f"CPU:{cpu} [LOST {n} EVENTS]\n" if known else f"CPU:{cpu} [EVENTS DROPPED]\n"
    return f"LOST {n} EVENTS\n" if known else "# events lost on no one CPU, how many not known\n"


def _text(col: pa.Array, pad: int = 0, fill: str = " ") -> list[str]:
    """An int column as the decimal strings the lines print (padded on the left to `pad` with
    `fill`), -1 where it is null: made for a whole batch at once."""
    s = pc.cast(col, pa.string())
    if pad:
        s = pc.utf8_lpad(s, pad, fill)
    return pc.fill_null(s, "-1").to_pylist()  # type: ignore[no-any-return]


class FtraceWriter:
    """Turns event batches into ftrace lines, keeping the names seen so far for the TASK column."""

    def __init__(self, *, with_tgid: bool) -> None:
        self.with_tgid = with_tgid
        self.names: dict[int, str] = {0: "<idle>"}
        self.cache: dict[str, str] = {}
        self.lines = 0

    def batch(self, batch: pa.RecordBatch) -> bytes:
        """The lines of one batch, in its order."""
        col = batch.column
        kinds = col("kind").to_pylist()
        pids = col("pid").to_pylist()
        cpus = col("cpu").to_pylist()
        curs = col("cur_pid").to_pylist()
        comms = col("comm").to_pylist()
        next_pids = col("next_pid").to_pylist()
        next_comms = col("next_comm").to_pylist()
        child_pids = col("child_pid").to_pylist()
        child_comms = col("child_comm").to_pylist()
        ts = col("ts_ns")
        secs = _text(pc.divide(ts, 1_000_000_000), 5)
        nsecs = _text(pc.subtract(ts, pc.multiply(pc.divide(ts, 1_000_000_000), 1_000_000_000)), 9, "0")
        cpu_s = _text(col("cpu"), 3, "0")
        prio = _text(col("prio"))
        target = _text(col("target_cpu"), 3, "0")
        orig, dest = _text(col("orig_cpu")), _text(col("dest_cpu"))
        next_pid_s, next_prio = _text(col("next_pid")), _text(col("next_prio"))
        child_pid_s, old_pid = _text(col("child_pid")), _text(col("old_pid"))
        tgids = _text(col("tgid"), 7) if self.with_tgid else None
        states = col("prev_state").to_pylist()
        files = col("filename").to_pylist()
        lost = col("lost_events").to_pylist()
        out: list[str] = []
        names = self.names
        raw = self.cache
        for i, kind in enumerate(kinds):
            if kind == LLC_UTIL:
                continue  # no ftrace event; counted in the header
            if kind == LOST:
                out.append(_lost(cpus[i], lost[i]))
                continue
            pid = pids[i]
            comm = _raw(comms[i], raw)
            if pid != 0:
                names[pid] = comm  # the running task is often the event's subject (a switch's prev)
            cur = curs[i]
            task = f"{names.get(cur, '<...>'):>16}-{cur:<7}"
            if tgids is not None:
                tg = tgids[i]
                task += " (-------)" if tg == "-1" else f" ({tg})"
            if kind == SWITCH:
                nxt = _raw(next_comms[i], raw)
                body = (
                    f"sched_switch: prev_comm={comm} prev_pid={pid} prev_prio={prio[i]} "
                    f"prev_state={_raw(states[i] or 'R', raw)} ==> next_comm={nxt} next_pid={next_pid_s[i]} "
                    f"next_prio={next_prio[i]}"
                )
                if next_pids[i]:
                    names[next_pids[i]] = nxt
            elif kind in (WAKING, WAKEUP, WAKEUP_NEW):
                body = f"{_TRACEPOINTS[kind]}: comm={comm} pid={pid} prio={prio[i]} target_cpu={target[i]}"
            elif kind == MIGRATE:
                body = (
                    f"sched_migrate_task: comm={comm} pid={pid} prio={prio[i]} "
                    f"orig_cpu={orig[i]} dest_cpu={dest[i]}"
                )
            elif kind == FORK:
                child = _raw(child_comms[i], raw)
                body = (
                    f"sched_process_fork: comm={comm} pid={pid} child_comm={child} child_pid={child_pid_s[i]}"
                )
                if child_pids[i]:
                    names[child_pids[i]] = child
            elif kind == EXIT:
                body = f"sched_process_exit: comm={comm} pid={pid} prio={prio[i]}"
            else:
                body = f"sched_process_exec: filename={_raw(files[i], raw)} pid={pid} old_pid={old_pid[i]}"
            out.append(f"{task} [{cpu_s[i]}] {secs[i]}.{nsecs[i]}: {body}\n")
        self.lines += len(out)
        return "".join(out).encode("utf-8", "surrogateescape")


def header(name: str, rid: str, with_tgid: bool, left_out: int) -> bytes:
    """The comment lines `cat trace` starts with, saying what this file is and what it lacks."""
    cols = (
        b"#           TASK-PID    TGID     CPU#     TIMESTAMP  FUNCTION\n"
        if with_tgid
        else (b"#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n")
    )
    safe = _CONTROL.sub(b"?", name.encode("utf-8", "replace"))
    return (
        b"# tracer: nop\n#\n"
        + b"# placemap: recording %s (%s) written as ftrace text; no irq-info flags, nanosecond "
        b"timestamps\n"
        % (rid.encode(), safe)
        + (
            b"# left out: the recording's %d per-LLC utilization samples (no ftrace event)\n" % left_out
            if left_out
            else b""
        )
        + b"#\n"
        + cols
        + b"#              | |         |         |         |\n"
    )


def write_ftrace(batches: Iterable[pa.RecordBatch], *, name: str, rid: str, left_out: int) -> Iterator[bytes]:
    """The whole file, a piece per batch of events (`left_out` of them llc_util samples, said in the
    header). The TGID column is written when the first batch has thread-group ids."""
    it = iter(batches)
    first = next(it, None)
    with_tgid = first is not None and first.column("tgid").null_count < first.num_rows
    w = FtraceWriter(with_tgid=with_tgid)
    yield header(name, rid, with_tgid, left_out)
    if first is None:
        return
    for b in (first, *it):
        piece = w.batch(b)
        if piece:
            yield piece


def recording_text(
    store: Store, rec: RecordingRow, t0: int | None = None, t1: int | None = None
) -> Iterator[bytes]:
    """A stored recording's events of [t0, t1] (all by default) as ftrace text, chunk by chunk."""
    by_kind = rec.meta.get("events_by_kind", {})
    left_out = by_kind.get("llc_util", 0) if isinstance(by_kind, dict) else 0
    return write_ftrace(
        window_batches(store, rec.id, t0, t1), name=rec.name, rid=rec.id, left_out=int(left_out)
    )


_SUFFIXES = re.compile(r"(\.(gz|zst|txt|dat|ftrace|trace|arrow|perf-script|tracecmd-report))+$")


def file_name(rec: RecordingRow) -> str:
    """A download's file name: the recording's name without its trace suffixes, in safe characters."""
    stem = _SUFFIXES.sub("", re.sub(r"[^A-Za-z0-9._-]+", "_", rec.name)).strip("._") or rec.id
    return f"{stem}.ftrace.txt"
