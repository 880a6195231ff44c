"""A stored recording written back as ftrace text (placemap.replay.ftrace_text) and read again by the
real Go importer into a real SQLite store: every real trace of ../shared, whatever its format, comes
back as the same events, column by column; so does a simulated run (but a fork's prio, which the
tracepoint has no field for); lost records, hostile names and the per-LLC samples that have no
ftrace event are written as the module says."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from collector import collector_binary
from ftrace_lines import G4, TRACES

from placemap.importer import import_file
from placemap.replay.ftrace_text import FtraceWriter, file_name, recording_text, write_ftrace
from placemap.replay.queries import window_batches
from placemap.schema.events import EVENT_SCHEMA, Kind
from placemap.settings import REPO_ROOT
from placemap.store import RecordingRow, Store

BIN = REPO_ROOT / "bin" / "placemap"


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return collector_binary(tmp_path_factory.mktemp("bin"))


def _events(store: Store, rid: str) -> pa.Table:
    return pa.Table.from_batches(list(window_batches(store, rid, None, None)), schema=EVENT_SCHEMA)


def _import(store: Store, collector: Path, path: Path, name: str) -> str:
    rid = store.create_recording(name)
    import_file(store, collector, rid, path)
    rec = store.get_recording(rid)
    assert rec is not None and rec.status == "ready", rec
    return rid


def _round_trip(store: Store, collector: Path, rid: str, tmp: Path) -> tuple[bytes, str]:
    """The recording exported, and the id of its export imported again."""
    rec = store.get_recording(rid)
    assert rec is not None
    text = b"".join(recording_text(store, rec))
    out = tmp / "export.txt"
    out.write_bytes(text)
    return text, _import(store, collector, out, "back")


def _differences(a: pa.Table, b: pa.Table) -> dict[str, int]:
    """Per column, how many rows differ (a different row count differs everywhere)."""
    if a.num_rows != b.num_rows:
        return {"rows": abs(a.num_rows - b.num_rows)}
    out = {}
    for f in a.schema:
        x, y = a.column(f.name), b.column(f.name)
        if not x.equals(y):
            same = pc.fill_null(pc.equal(x, y), False)
            both_null = pc.and_(pc.is_null(x), pc.is_null(y))
            out[f.name] = a.num_rows - pc.sum(pc.or_(same, both_null).cast(pa.int64())).as_py()
    return out


REAL = [
    "vm2-hackbench-g4.ftrace.txt.gz",  # ftrace text, kernel 6.18
    "vm2-hackbench-g2.perf-script.txt.gz",  # perf script
    "vm2-hackbench-g2.perf.data",  # perf record's binary file, nanosecond times
    "vm2-hackbench-mixed.trace.dat",  # trace-cmd's binary trace.dat, two buffers
    "vm2-hackbench-mixed.tracecmd-report.txt.gz",  # trace-cmd report text
    "vm2-hackbench-threads.tracefs-raw",  # the kernel's ring-buffer pages
    "external/lisa/trace_txt/trace.txt",  # Arm Juno, kernel 4.19, numeric prev_state
    "external/trappy/raw_trace.dat",  # an older trace.dat
    "external/lkml-snippets/zen3-2s-256cpu_nps4_stream_shortrun-patch_kprateek-2022-09-26.txt",  # 256 CPUs
]


@pytest.mark.parametrize("name", REAL)
def test_a_real_trace_comes_back_as_the_same_events(
    store: Store, collector: Path, tmp_path: Path, name: str
) -> None:
    rid = _import(store, collector, TRACES / name, name)
    text, back = _round_trip(store, collector, rid, tmp_path)
    before, after = _events(store, rid), _events(store, back)
    assert before.num_rows > 0
    assert _differences(before, after) == {}
    rec = store.get_recording(back)
    assert rec is not None and rec.format == "ftrace"
    # what was skipped reading it back are the header's comment lines, nothing else
    summary = rec.meta["import_summary"]
    assert set(summary["skipped"]) == {"comment"}, summary["skipped"]
    assert text.startswith(b"# tracer: nop\n")


def test_the_lines_are_the_kernels_own_but_for_the_flags_and_the_nanoseconds(
    store: Store, collector: Path, tmp_path: Path
) -> None:
    rid = _import(store, collector, G4, "g4")
    text, _ = _round_trip(store, collector, rid, tmp_path)
    ours = [ln for ln in text.decode().splitlines() if not ln.startswith("#")]
    theirs = [ln for ln in gzip.decompress(G4.read_bytes()).decode().splitlines() if not ln.startswith("#")]
    assert len(ours) == len(theirs) == 72_578
    flags = re.compile(r"^(.*\]) \S{5} ( *\d+\.\d{6})(:.*)$")
    # The kernel's TASK column is the name its comm cache holds when `cat trace` runs, ours the name
    # the events gave the pid up to that line: they differ only for a task whose name changed (an
    # exec; g4's 13275 is sh, then json2ts, and the cache says node).
    task = re.compile(r"^( *)(.*)(-\d+ +\[)")
    renamed = {pid for pid, comms in _comms_by_pid(theirs).items() if len(comms) > 1}
    assert renamed, "g4 has a task that execs"
    differ = 0
    for mine, theirs_line in zip(ours, theirs, strict=True):
        kernel = theirs_line
        mt, kt = task.match(mine), task.match(kernel)
        assert mt is not None and kt is not None, (mine, kernel)
        if mt.group(2) != kt.group(2):
            assert int(kt.group(3)[1:].split()[0]) in renamed, (mine, kernel)
            differ += 1
            kernel = f"{mt.group(2):>16}{kernel[kt.end(2) :]}"
        m = flags.match(kernel)
        assert m is not None, kernel
        # the kernel's line without its irq-info column, its microseconds written as nanoseconds
        # (and an exit's group_dead, which the store does not keep)
        body = m.group(3).removesuffix(" group_dead=true").removesuffix(" group_dead=false")
        assert mine == f"{m.group(1)}  {m.group(2)}000{body}", (mine, kernel)
    assert differ < 10


def _comms_by_pid(lines: list[str]) -> dict[int, set[str]]:
    """The names the events' fields give each pid (comm=, prev_comm=, next_comm=, child_comm=)."""
    out: dict[int, set[str]] = {}
    pair = re.compile(r"(?:^|\s)(?:prev_|next_|child_)?comm=(\S+) (?:prev_|next_|child_)?pid=(\d+)")
    for ln in lines:
        for comm, pid in pair.findall(ln):
            out.setdefault(int(pid), set()).add(comm)
    return out


def test_a_window_is_the_whole_files_lines_in_it(store: Store, collector: Path) -> None:
    # the TASK column of a window's first lines names tasks the events before the window named
    rid = _import(store, collector, G4, "g4")
    rec = store.get_recording(rid)
    assert rec is not None
    whole = [ln for ln in b"".join(recording_text(store, rec)).splitlines() if not ln.startswith(b"#")]
    stamp = re.compile(rb"\] +(\d+)\.(\d{9}): ")

    def ns(line: bytes) -> int:
        m = stamp.search(line)
        assert m is not None, line
        return int(m.group(1)) * 1_000_000_000 + int(m.group(2))

    for t0, t1 in ((320_100_000_000, 320_105_000_000), (320_500_000_000, 320_600_000_000)):
        part = [
            ln for ln in b"".join(recording_text(store, rec, t0, t1)).splitlines() if not ln.startswith(b"#")
        ]
        assert len(part) > 10
        assert part == [ln for ln in whole if t0 <= ns(ln) <= t1]
        assert not any(b"<...>" in ln for ln in part)


def test_batches_of_any_size_give_the_same_file(store: Store, collector: Path) -> None:
    # a stored chunk is one batch or a few: the names a batch gives must reach the lines of the next
    rid = _import(store, collector, G4, "g4")
    rec = store.get_recording(rid)
    assert rec is not None
    whole = b"".join(recording_text(store, rec))
    table = _events(store, rid)
    for rows in (997, 10_000):
        small = b"".join(
            write_ftrace(
                table.to_batches(max_chunksize=rows), what=f"recording {rid} ({rec.name})", left_out=0
            )
        )
        assert small == whole, rows


def test_thread_group_ids_are_kept(store: Store, collector: Path, tmp_path: Path) -> None:
    # g4's lines as the kernel prints them with options/record-tgid on: a TGID column after TASK-PID
    # (no trace in ../shared has one); the hackbench tasks are their own thread groups (processes)
    lines = gzip.decompress(G4.read_bytes()).decode().splitlines()[:2000]
    task = re.compile(r"^(.*-(\d+) +)(\[\d{3}\])")  # a comm may hold spaces: "npm exec json2t-13093"
    src = tmp_path / "tgid.txt"
    src.write_text(
        "\n".join(task.sub(lambda m: f"{m.group(1)}({int(m.group(2)):7d}) {m.group(3)}", ln) for ln in lines)
        + "\n"
    )
    rid = _import(store, collector, src, "tgid")
    before = _events(store, rid)
    assert before.column("tgid").null_count == 0
    text, back = _round_trip(store, collector, rid, tmp_path)
    assert _differences(before, _events(store, back)) == {}
    first = next(ln for ln in text.decode().splitlines() if not ln.startswith("#"))
    assert first == (
        "            bash-13109   (  13109) [000]    319.952333000: sched_process_fork: "
        "comm=bash pid=13109 child_comm=bash child_pid=13113"
    )


def test_a_simulated_run_comes_back_but_for_its_forks_prio(
    store: Store, collector: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(
        json.dumps({"topology": "zen3-2s-nps1", "workload": {"kind": "hackbench", "groups": 2, "loops": 20}})
    )
    run = subprocess.run(
        [str(BIN), "sim", str(scenario), "--save", "--db", str(store.path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    (rec,) = store.list_recordings()
    assert rec.source == "simulated"
    _, back = _round_trip(store, collector, rec.id, tmp_path)
    before, after = _events(store, rec.id), _events(store, back)
    forks = pc.equal(before.column("kind"), int(Kind.FORK))
    assert pc.sum(forks.cast(pa.int64())).as_py() > 0
    assert after.filter(forks).column("prio").null_count == after.filter(forks).num_rows
    # the rest is the same, and every other row's prio too
    assert _differences(before.drop_columns(["prio"]), after.drop_columns(["prio"])) == {}
    keep = pc.invert(forks)
    assert before.filter(keep).column("prio").equals(after.filter(keep).column("prio"))


def _batch(rows: list[dict[str, object]]) -> pa.RecordBatch:
    cols = {f.name: [r.get(f.name) for r in rows] for f in EVENT_SCHEMA}
    for f in EVENT_SCHEMA:
        if not f.nullable:
            cols[f.name] = [
                0 if v is None and f.name != "comm" else ("" if v is None else v) for v in cols[f.name]
            ]
    return pa.RecordBatch.from_pydict(cols, schema=EVENT_SCHEMA)


def test_lost_records_and_llc_samples() -> None:
    w = FtraceWriter(with_tgid=False)
    text = w.batch(
        _batch(
            [
                {"ts_ns": 5, "cpu": 1, "kind": int(Kind.LOST), "lost_events": 12},
                {"ts_ns": 6, "cpu": 0, "kind": int(Kind.LOST), "lost_events": -1},
                {"ts_ns": 7, "cpu": -1, "kind": int(Kind.LOST), "lost_events": 40},
                {"ts_ns": 8, "cpu": -1, "kind": int(Kind.LLC_UTIL), "llc": 0, "util": 0.5},
                {"ts_ns": 9, "cpu": -1, "kind": int(Kind.LOST), "lost_events": None},
            ]
        )
    ).decode()
    assert text.splitlines() == [
        "CPU:1 [LOST 12 EVENTS]",
        "CPU:0 [EVENTS DROPPED]",
        "LOST 40 EVENTS",
        "# events lost on no one CPU, how many not known",
    ]


def test_lost_lines_read_back_with_their_counts(store: Store, collector: Path, tmp_path: Path) -> None:
    lines = gzip.decompress(G4.read_bytes()).decode().splitlines()[:300]
    lines.insert(150, "CPU:1 [LOST 17 EVENTS]")
    lines.insert(250, "CPU:0 [LOST 3 EVENTS]")
    src = tmp_path / "lossy.txt"
    src.write_text("\n".join(lines) + "\n")
    rid = _import(store, collector, src, "lossy")
    text, back = _round_trip(store, collector, rid, tmp_path)
    assert b"CPU:1 [LOST 17 EVENTS]\n" in text and b"CPU:0 [LOST 3 EVENTS]\n" in text
    assert _differences(_events(store, rid), _events(store, back)) == {}
    rec = store.get_recording(back)
    assert rec is not None and rec.lost_events == 20


def test_hostile_names_are_written_as_the_kernels_bytes(
    store: Store, collector: Path, tmp_path: Path
) -> None:
    lines = gzip.decompress(G4.read_bytes()).splitlines()[:400]
    # markup, a name that looks like a line's prefix, bytes that are not UTF-8, a name that looks
    # like a field, and a literal backslash-x (which the importer keeps as text)
    hostile = [b"<script>", b"a b-1 [000]", b"\xff\xfeok", b"x pid=1", b"rc\\x41u"]
    text = b"\n".join(lines) + b"\n"
    for i, name in enumerate(hostile):  # rename four real tasks wherever a body names them
        pid = 13114 + i
        text = re.sub(
            rb"(comm|prev_comm|next_comm|child_comm)=hackbench (\w*pid=%d )" % pid,
            lambda m, name=name: m.group(1) + b"=" + name + b" " + m.group(2),
            text,
        )
    src = tmp_path / "hostile.txt"
    src.write_bytes(text)
    rid = _import(store, collector, src, "<b>hostile</b>")
    out, back = _round_trip(store, collector, rid, tmp_path)
    for name in hostile:
        assert b"comm=" + name + b" " in out, name
    assert _differences(_events(store, rid), _events(store, back)) == {}
    assert "\\xff\\xfeok" in _events(store, back).column("comm").to_pylist()


def test_a_control_character_in_a_name_is_written_as_text() -> None:
    w = FtraceWriter(with_tgid=False)
    text = w.batch(
        _batch(
            [
                {
                    "ts_ns": 1_500_000_123,
                    "cpu": 2,
                    "kind": int(Kind.EXIT),
                    "cur_pid": 7,
                    "pid": 7,
                    "comm": "a\nb",
                    "prio": 120,
                }
            ]
        )
    )
    line = (
        b"          a\\x0ab-7       [002]      1.500000123: sched_process_exit: comm=a\\x0ab pid=7 prio=120\n"
    )
    assert text == line


def test_the_download_name() -> None:
    def row(name: str) -> RecordingRow:
        return RecordingRow(
            id="abc",
            name=name,
            source="import",
            status="ready",
            created_at="",
            format=None,
            topology_id=None,
            error=None,
            progress=None,
            event_count=0,
            t_start_ns=None,
            t_end_ns=None,
            lost_events=0,
            skipped_lines=None,
            bytes_stored=0,
            chunk_count=0,
        )

    assert file_name(row("vm2-hackbench-g4.ftrace.txt.gz")) == "vm2-hackbench-g4.ftrace.txt"
    assert file_name(row('sim zen3 "x" <b>')) == "sim_zen3_x_b.ftrace.txt"
    assert file_name(row("../../etc/passwd")) == "etc_passwd.ftrace.txt"
    assert file_name(row("...")) == "abc.ftrace.txt"
