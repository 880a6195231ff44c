"""Background imports: one thread per upload running the Go importer, killed at shutdown."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from placemap.importer import import_file
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store


class ImportService:
    """Starts imports off the event loop and tracks their processes."""

    def __init__(self, store: Store, collector: Path) -> None:
        self.store = store
        self.collector = collector
        self._lock = threading.Lock()
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._threads: dict[str, threading.Thread] = {}

    def start(self, rid: str, path: Path, fmt: str, topology: Topology | None, machine: str) -> None:
        def run() -> None:
            try:
                import_file(
                    self.store,
                    self.collector,
                    rid,
                    path,
                    fmt=fmt,
                    topology=topology,
                    machine=machine,
                    on_process=lambda p: self._track(rid, p),
                )
            finally:
                path.unlink(missing_ok=True)
                with self._lock:
                    self._procs.pop(rid, None)
                    self._threads.pop(rid, None)
                self.store.close()

        thread = threading.Thread(target=run, name=f"import-{rid}", daemon=True)
        with self._lock:
            self._threads[rid] = thread
        thread.start()

    def _track(self, rid: str, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs[rid] = proc

    def cancel(self, rid: str) -> None:
        """Stop an import (its recording is being deleted)."""
        with self._lock:
            proc = self._procs.get(rid)
            thread = self._threads.get(rid)
        if proc is not None and proc.poll() is None:
            proc.kill()
        if thread is not None:
            thread.join(timeout=30)

    def shutdown(self) -> None:
        with self._lock:
            rids = list(self._threads)
        for rid in rids:
            self.cancel(rid)
