"""Run `placemap-collect import FILE --format F --out - --chunks --json --progress` and store what it
writes.

stdout: the recording's chunks in their stored form before compression (65,536 rows, strings
dictionary-encoded, one Arrow IPC stream each), as frames `"PMCK", rows u32, ipc_bytes u64` + IPC
(collectors/internal/importer/chunkout.go). The importer cuts and encodes them in parallel goroutines;
here the state machine reads each table straight from the frame's bytes, and the chunk writer thread
zstd-compresses those same bytes as the stored chunk, one chunk at a time (never the whole recording
in memory). stderr: progress lines {"bytes_read","bytes_total",
"events"}, then the ImportSummary JSON object; on bad input the importer exits 1 with a one-line
message. Any failure leaves the recording failed with a readable reason and none of its data.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
from pydantic import ValidationError

from placemap.importer.machine import machine_mismatch
from placemap.replay.ingest import IngestError, Ingestor
from placemap.replay.topo import inferred_topology
from placemap.schema.models.import_summary_schema import ImportSummary
from placemap.schema.models.topology_schema import Topology
from placemap.store.store import Store

PROGRESS_EVERY_S = 0.25
PIPE_BYTES = 1 << 20  # the default /proc/sys/fs/pipe-max-size
CHUNK_MAGIC = b"PMCK"
_HEADER = struct.Struct("<4sIQ")  # magic, rows, ipc_bytes
MAX_IPC_BYTES = 1 << 31  # a chunk's IPC is tens of MB at most; more means a garbled stream


class ChunkStreamError(Exception):
    """The importer's chunk frames are cut short or malformed."""


def read_chunks(stream: IO[bytes]) -> Iterator[tuple[pa.Table, bytes]]:
    """The (table, its IPC bytes) of each chunk frame on `stream`, in order."""
    while True:
        head = stream.read(_HEADER.size)
        if not head:
            return
        if len(head) < _HEADER.size:
            raise ChunkStreamError(f"a chunk header is cut short ({len(head)} of {_HEADER.size} bytes)")
        magic, rows, size = _HEADER.unpack(head)
        if magic != CHUNK_MAGIC or size > MAX_IPC_BYTES:
            raise ChunkStreamError(f"not a chunk frame header: {head[:8]!r}")
        ipc = stream.read(size)
        if len(ipc) < size:
            raise ChunkStreamError(f"a chunk is cut short ({len(ipc)} of {size} bytes)")
        try:
            table = pa.ipc.open_stream(pa.py_buffer(ipc)).read_all()  # no copy: views into ipc
        except (pa.ArrowInvalid, OSError) as exc:
            raise ChunkStreamError(f"a chunk does not decode: {exc}") from exc
        if table.num_rows != rows:
            raise ChunkStreamError(f"a chunk holds {table.num_rows} rows, its header says {rows}")
        yield table, ipc


class ImportFailedError(Exception):
    """The file could not be imported; the message says why, for a person."""


class _Stderr:
    """Collects the importer's stderr on a thread: progress updates, the summary, other messages."""

    def __init__(self, stream: IO[bytes], on_progress: Callable[[float], None]) -> None:
        self.summary: dict[str, Any] | None = None
        self.messages: list[str] = []
        self._stream = stream
        self._on_progress = on_progress
        self._last = 0.0
        self.thread = threading.Thread(target=self._run, name="import-stderr", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        pending: list[str] = []  # a summary printed over several lines (pretty JSON)
        for raw in self._stream:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            text = "\n".join([*pending, line]) if pending else line
            try:
                obj = json.loads(text)
            except json.JSONDecodeError:
                if pending or line.startswith("{"):
                    pending.append(line)
                elif line.strip():
                    self.messages.append(line.strip())
                continue
            pending = []
            if isinstance(obj, dict) and "bytes_read" in obj and "format" not in obj:
                self._progress(obj)
            elif isinstance(obj, dict):
                self.summary = obj
        self.messages.extend(p for p in pending if p.strip())

    def _progress(self, obj: dict[str, Any]) -> None:
        total = obj.get("bytes_total") or 0
        now = time.monotonic()
        if total > 0 and now - self._last >= PROGRESS_EVERY_S:
            self._last = now
            # the last few percent are sorting/flushing and storing: never claim 1.0 before ready
            self._on_progress(min(float(obj.get("bytes_read", 0)) / float(total), 1.0) * 0.99)


def import_file(
    store: Store,
    collector: Path,
    rid: str,
    path: Path,
    *,
    fmt: str = "auto",
    topology: Topology | None = None,
    machine: str = "trace",
    on_process: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> None:
    """Import `path` into recording `rid` (status importing). Fails the recording on any error."""
    try:
        _run(store, collector, rid, path, fmt, topology, machine, on_process)
    except ImportFailedError as exc:
        store.fail_recording(rid, str(exc))
    except IngestError as exc:
        store.fail_recording(rid, f"the importer's output could not be stored: {exc}")
    except Exception as exc:
        store.fail_recording(rid, f"import failed unexpectedly: {type(exc).__name__}: {exc}")
        raise


def _run(  # noqa: PLR0917 - private, called once with everything import_file got
    store: Store,
    collector: Path,
    rid: str,
    path: Path,
    fmt: str,
    topology: Topology | None,
    machine: str,
    on_process: Callable[[subprocess.Popen[bytes]], None] | None,
) -> None:
    if not collector.is_file():
        raise ImportFailedError(
            f"the importer binary is missing at {collector}: build it with "
            "`cd collectors && CGO_ENABLED=0 go build -o bin/placemap-collect ./cmd/placemap-collect`"
        )
    cmd = [
        str(collector),
        "import",
        str(path),
        "--format",
        fmt,
        "--out",
        "-",
        "--chunks",
        "--json",
        "--progress",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, bufsize=1 << 20
    )
    if on_process is not None:
        on_process(proc)
    assert proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(OSError):
        # a 1 MB pipe instead of 64 KB: ~16x fewer wake-ups for the ~80 bytes/event that pass through
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    err = _Stderr(proc.stderr, lambda p: store.set_progress(rid, p))
    ingestor = Ingestor(store, rid, topology)
    try:
        stream_error: str | None = None
        try:
            try:
                for table, ipc in read_chunks(proc.stdout):
                    ingestor.add_stored(table, ipc)
                    if topology is not None:
                        # a CPU the given machine lacks ends the import at the chunk naming it
                        mismatch = machine_mismatch(set(ingestor.cpus_seen), topology)
                        if mismatch is not None:
                            raise ImportFailedError(mismatch)
            except (ChunkStreamError, OSError) as exc:
                stream_error = str(exc)
            rc = proc.wait()
            err.thread.join(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            err.thread.join(timeout=10)
            proc.stdout.close()
            proc.stderr.close()
        if rc != 0:
            reason = err.messages[-1] if err.messages else f"the importer exited with status {rc}"
            raise ImportFailedError(reason.removeprefix("placemap-collect: "))
        if stream_error is not None:
            raise ImportFailedError(f"the importer's output was not a valid chunk stream: {stream_error}")
        summary = err.summary
        if summary is not None:
            try:
                summary = ImportSummary.model_validate(summary).model_dump(mode="json", exclude_none=True)
            except ValidationError as exc:
                raise ImportFailedError(
                    f"the importer's summary does not match import-summary.schema.json: {exc}"
                ) from exc
        ingestor.flush()
        if ingestor.rows == 0:
            raise ImportFailedError(
                "no scheduler events found in the file (is it an ftrace, trace-cmd or perf trace?)"
            )
        if topology is None:
            cpus = set(ingestor.cpus_seen) | set((summary or {}).get("cpus_seen", []))
            inferred = inferred_topology(cpus, machine)
            store.set_topology(rid, store.put_topology(inferred.model_dump(mode="json")))
        ingestor.finish(summary)
    except BaseException:
        # stop the chunk writer before the caller drops the recording's chunks
        with contextlib.suppress(Exception):
            ingestor.close()
        raise
