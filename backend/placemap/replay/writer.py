"""Chunk writer thread: compresses a chunk, its keyframe and placement table and commits them, while
the ingest computes the next chunk (zstd and SQLite release the GIL, so the two overlap)."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

import pyarrow as pa

from placemap.store.codec import compress_ipc, encode_table
from placemap.store.store import ChunkWrite, Store

QUEUE_CHUNKS = 2  # bounds memory: at most this many chunks wait besides the one being written


@dataclass
class PendingChunk:
    """A chunk as computed, before compression."""

    seq: int
    t_start_ns: int
    t_end_ns: int
    first_row: int
    events: pa.Table
    keyframe: pa.Table
    placements: pa.Table
    pids: list[int]
    events_ipc: bytes | None = None  # the events' IPC stream when it came already written (importer --chunks)


class ChunkWriter:
    """One background thread per ingest; errors surface on the next submit, drain or close."""

    def __init__(self, store: Store, rid: str) -> None:
        self.store = store
        self.rid = rid
        self._queue: queue.Queue[PendingChunk | None] = queue.Queue(maxsize=QUEUE_CHUNKS)
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"chunk-writer-{self.rid}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while True:
                item = self._queue.get()
                try:
                    if item is None:
                        return
                    if self._error is None:
                        self._write(item)
                except BaseException as exc:
                    self._error = exc
                finally:
                    self._queue.task_done()
        finally:
            self.store.close()

    def _write(self, c: PendingChunk) -> None:
        # dictionary-encoded by the ingest, or written as the stored IPC by the importer
        data = compress_ipc(c.events_ipc) if c.events_ipc is not None else encode_table(c.events)
        kf = encode_table(c.keyframe)
        pl = encode_table(c.placements)
        self.store.append_chunk(
            self.rid,
            ChunkWrite(
                seq=c.seq, t_start_ns=c.t_start_ns, t_end_ns=c.t_end_ns, first_row=c.first_row,
                rows=c.events.num_rows, data=data.data, raw_bytes=data.raw_bytes, keyframe=kf.data,
                keyframe_raw=kf.raw_bytes, placements=pl.data, placements_raw=pl.raw_bytes, pids=c.pids,
            ),
        )  # fmt: skip

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def submit(self, chunk: PendingChunk) -> None:
        self._check()
        if self._thread is None:
            self._start()
        self._queue.put(chunk)

    def drain(self) -> None:
        """Wait until every submitted chunk is committed; raise the writer's error if any."""
        if self._thread is not None:
            self._queue.join()
        self._check()

    def close(self) -> None:
        if self._thread is not None and not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join()
        self._check()
