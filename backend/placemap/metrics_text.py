"""A stored recording's whole-run numbers as lines of text, the rows the dashboard's "whole run"
panel shows (migrations by level and cause, wakeups by level and by where their waker ran, the
run-queue delay after a wakeup, CPU busy, what was lost), for `placemap admin show`. Pure: it reads
the recording's row, topology and Metrics document (GET /api/recordings/{id}/metrics' shape), and
the tasks most often woken from another LLC (GET tasks?order=cross_llc)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from placemap.store.store import RecordingRow, TaskRow

LEVELS = ("smt", "llc", "node", "cross_node")
CAUSES = ("wakeup", "fork", "balance")


def _n(x: int) -> str:
    return f"{x:,}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _named(counts: dict[str, int], names: tuple[str, ...]) -> str:
    return ", ".join(f"{k} {_n(int(counts.get(k, 0)))}" for k in names)


def _us(ns: int) -> str:
    return f"{ns / 1000:,.1f}"


def _plural(n: int, word: str) -> str:
    return f"{_n(n)} {word}{'' if n == 1 else 's'}"


def llc_pairs_line(pairs: dict[str, Any] | None, top: int = 3) -> str | None:
    """Metrics.wakeups.llc_pairs in a line: the share that woke in the waker's LLC, and the `top`
    pairs of LLCs most wakeups crossed, "waker's LLC -> wakee's"; None for a machine of one LLC."""
    if pairs is None:
        return "wakeups by LLC pair: not counted (a stored chunk could not be read)"
    if int(pairs["llcs"]) < 2:
        return None
    n = sum(int(c) for _, _, c in pairs["pairs"])
    same = sum(int(c) for w, t, c in pairs["pairs"] if w == t)
    across = [(int(c), w, t) for w, t, c in pairs["pairs"] if w != t]
    across.sort(key=lambda p: (-p[0], p[1], p[2]))
    most = ", ".join(f"LLC {w} -> {t} {_n(c)}" for c, w, t in across[:top]) or "none"
    return (
        f"wakeups by LLC pair: in the waker's LLC {_n(same)} of {_n(n)} ({_pct(same, n)}); "
        f"across LLCs most: {most}"
    )


def header_lines(rec: RecordingRow, topology: dict[str, Any] | None) -> list[str]:
    """Who the recording is: name, id, status, events, span, format, and its machine."""
    parts = [f"{rec.name} ({rec.id})", rec.status, _plural(rec.event_count, "event")]
    if rec.t_start_ns is not None and rec.t_end_ns is not None:
        parts.append(f"{(rec.t_end_ns - rec.t_start_ns) / 1e6:,.1f} ms")
    if rec.format:
        parts.append(rec.format)
    out = [" · ".join(parts)]
    if topology is not None:
        cpus = sum(1 for c in topology.get("cpus", []) if c.get("online", True))
        llcs, nodes = len(topology.get("llcs", [])), len(topology.get("numa_nodes", []))
        machine = f"machine {topology.get('machine', '?')} ({topology.get('source', '?')})"
        out.append(f"{machine}: {_plural(cpus, 'CPU')}, {_plural(llcs, 'LLC')}, {_plural(nodes, 'node')}")
    return out


def metrics_lines(m: dict[str, Any]) -> list[str]:
    """The whole-run numbers of a Metrics document, a line per row group."""
    mig, wk = m["migrations"], m["wakeups"]
    total = int(wk["total"])
    lines = [
        f"migrations {_n(int(mig['total']))}: by level {_named(mig['by_level'], LEVELS)}; "
        f"by cause {_named(mig['by_cause'], CAUSES)}",
        f"wakeups {_n(total)}: on their last CPU {_pct(int(wk['same_cpu']), total)}; moved by level "
        f"{_named(wk['by_level'], LEVELS)}",
    ]
    bw = wk.get("by_waker")
    if bw is None:
        lines.append("wakeups by their waker: not counted (a stored chunk could not be read)")
    else:
        cross, known = int(bw["cross_llc"]), int(bw["shared_llc"]) + int(bw["cross_llc"])
        lines.append(
            f"wakeups by their waker: waker in another LLC {_n(cross)} (pulled to the waker's LLC "
            f"{_pct(int(bw['to_waker_llc']), cross)}, kept in its own "
            f"{_pct(int(bw['to_prev_llc']), cross)}, in neither {_pct(int(bw['elsewhere']), cross)}); "
            f"waker in its LLC {_n(int(bw['shared_llc']))}; on the waker's CPU "
            f"{_pct(int(bw['on_waker_cpu']), known)}; woken while it ran {_n(int(bw['still_running']))}; "
            f"waker unknown {_n(int(bw['unknown']))}"
        )
    # (a document without the field at all is one admin show did not refill: nothing to say)
    pairs_line = llc_pairs_line(wk["llc_pairs"]) if "llc_pairs" in wk else None
    if pairs_line is not None:
        lines.append(pairs_line)
    lat = m.get("wakeup_latency")
    if lat:
        lines.append(
            f"run-queue delay after a wakeup over {_n(int(lat['samples']))} wakeups (us): "
            f"p50 {_us(lat['p50_ns'])}, p90 {_us(lat['p90_ns'])}, p99 {_us(lat['p99_ns'])}, "
            f"max {_us(lat['max_ns'])}"
        )
    elif m.get("wakeup_latency_unread"):
        lines.append(f"run-queue delay after a wakeup: not read ({m['wakeup_latency_unread']})")
    else:
        lines.append("run-queue delay after a wakeup: none measured (no wakeup followed by its switch-in)")
    busy = m.get("per_cpu_busy")
    if busy:
        lines.append(f"CPU busy {100 * sum(busy) / len(busy):.1f}% (mean of {_plural(len(busy), 'CPU')})")
    else:
        lines.append("CPU busy - (no switch events to measure it)")
    by_kind = m.get("events_by_kind", {})
    lines.append(
        f"context switches {_n(int(by_kind.get('switch', 0)))}; events lost {_n(int(m['lost_events']))}; "
        f"lines skipped {_n(int(m['skipped_lines']))}"
    )
    return lines


def task_lines(tasks: list[TaskRow], top: int = 5) -> list[str]:
    """The tasks most often woken from another LLC than the one they last ran in (`tasks` in that
    order, as Store.tasks(order="cross_llc") gives them), with the pulls to the waker's LLC among
    them: the tasks a wake hint would move. None when no task was (one LLC); a line saying so when
    the recording was stored before they were counted per task."""
    if tasks and all(t.cross_llc is None for t in tasks):
        return [
            "tasks by their wakeups from another LLC: not counted per task (stored before; import it again)"
        ]
    woken = [t for t in tasks if t.cross_llc][:top]
    if not woken:
        return []
    listed = ", ".join(f"{t.pid} {t.comm} {_n(t.cross_llc or 0)} ({_n(t.pulled or 0)} pulled)" for t in woken)
    return [f"tasks most often woken from another LLC: {listed}"]
