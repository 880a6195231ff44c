"""A recording's whole-run numbers as text (placemap.metrics_text): what a line says where a count
is missing or zero, without dividing by it."""

from __future__ import annotations

from typing import Any

from placemap.metrics_text import llc_pairs_line, metrics_lines, task_lines
from placemap.store.store import TaskRow

ZERO_LEVELS = {"smt": 0, "llc": 0, "node": 0, "cross_node": 0}


def _metrics(**over: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        "events_by_kind": {},
        "migrations": {
            "total": 0,
            "by_level": ZERO_LEVELS,
            "by_cause": {"wakeup": 0, "fork": 0, "balance": 0},
        },
        "wakeups": {"total": 0, "same_cpu": 0, "by_level": ZERO_LEVELS, "by_waker": None},
        "lost_events": 3,
        "skipped_lines": 0,
        "per_cpu_busy": None,
        "wakeup_latency": None,
    }
    m.update(over)
    return m


def test_a_recording_without_wakeups_switches_or_counts_says_so_without_dividing() -> None:
    lines = metrics_lines(_metrics())
    assert lines[1] == "wakeups 0: on their last CPU -; moved by level smt 0, llc 0, node 0, cross_node 0"
    assert lines[2] == "wakeups by their waker: not counted (a stored chunk could not be read)"
    assert lines[3] == "run-queue delay after a wakeup: none measured (no wakeup followed by its switch-in)"
    unread = metrics_lines(_metrics(wakeup_latency_unread="stored chunk 3: not zstd"))
    assert unread[3] == "run-queue delay after a wakeup: not read (stored chunk 3: not zstd)"
    assert lines[4] == "CPU busy - (no switch events to measure it)"
    assert lines[5] == "context switches 0; events lost 3; lines skipped 0"


def test_no_cross_llc_wakeup_has_no_shares_and_an_unknown_waker_no_on_waker_share() -> None:
    by_waker = {"shared_llc": 0, "cross_llc": 0, "to_waker_llc": 0, "to_prev_llc": 0, "elsewhere": 0,
                "on_waker_cpu": 0, "still_running": 2, "unknown": 8}  # fmt: skip
    wakeups = {"total": 10, "same_cpu": 10, "by_level": ZERO_LEVELS, "by_waker": by_waker}
    line = metrics_lines(_metrics(wakeups=wakeups))[2]
    assert line == (
        "wakeups by their waker: waker in another LLC 0 (pulled to the waker's LLC -, kept in its own -, "
        "in neither -); waker in its LLC 0; on the waker's CPU -; woken while it ran 2; waker unknown 8"
    )


def test_the_tasks_most_woken_from_another_llc_first_none_when_none_and_said_when_not_counted() -> None:
    def task(pid: int, cross: int | None, pulled: int | None) -> TaskRow:
        return TaskRow(pid, f"t{pid}", 10, 0, 0, 1, None if cross is None else 9, cross, pulled)

    listed = [task(7, 12, 3), task(8, 1, 0), task(9, 0, 0)]
    assert task_lines(listed) == [
        "tasks most often woken from another LLC: 7 t7 12 (3 pulled), 8 t8 1 (0 pulled)"
    ]
    assert task_lines(listed, top=1) == ["tasks most often woken from another LLC: 7 t7 12 (3 pulled)"]
    assert task_lines([task(9, 0, 0)]) == [] and task_lines([]) == []
    assert task_lines([task(9, None, None)]) == [
        "tasks by their wakeups from another LLC: not counted per task (stored before; import it again)"
    ]


def test_llc_pairs_line_names_the_diagonal_share_and_the_busiest_pairs_across() -> None:
    # [waker's LLC, wakee's LLC, wakeups]
    pairs = {"llcs": 3, "pairs": [[0, 0, 5], [0, 2, 7], [1, 0, 2], [1, 1, 1], [2, 0, 7], [2, 1, 9]]}
    wakeups = {"total": 31, "same_cpu": 0, "by_level": ZERO_LEVELS, "by_waker": None, "llc_pairs": pairs}
    lines = metrics_lines(_metrics(wakeups=wakeups))
    assert lines[3] == (
        "wakeups by LLC pair: in the waker's LLC 6 of 31 (19.4%); across LLCs most: LLC 2 -> 1 9, "
        "LLC 0 -> 2 7, LLC 2 -> 0 7"
    )
    assert llc_pairs_line({"llcs": 2, "pairs": [[0, 0, 4], [1, 1, 2]]}) == (
        "wakeups by LLC pair: in the waker's LLC 6 of 6 (100.0%); across LLCs most: none"
    )
    assert llc_pairs_line({"llcs": 2, "pairs": []}) == (
        "wakeups by LLC pair: in the waker's LLC 0 of 0 (-); across LLCs most: none"
    )
    # a stored chunk kept them from being counted: said, as by_waker's line says it
    assert llc_pairs_line(None) == "wakeups by LLC pair: not counted (a stored chunk could not be read)"
    # one LLC (a trace alone) says nothing more than by_waker does; a document without the field
    # (not refilled) has no line
    one = {**wakeups, "llc_pairs": {"llcs": 1, "pairs": [[0, 0, 6]]}}
    older = {k: v for k, v in wakeups.items() if k != "llc_pairs"}
    for w in (one, older):
        assert not any(line.startswith("wakeups by LLC pair") for line in metrics_lines(_metrics(wakeups=w)))
