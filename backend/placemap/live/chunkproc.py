"""Live chunking in its own process: the server's GIL and event loop are left to the live feed.

The server runs one worker per live recording (`python -m placemap.live.chunkproc`): the spare it started
when nothing was live (at its start, and after each recording it finished), told the recording on its
stdin, or a new one when no spare waits. Each worker runs in its own session at a lower priority (nice
CHUNKER_NICE, for the process and its autogroup: chunks serve replay, the viewers' feed and the traced
workload come first; in the server's autogroup its CPU use would delay the server's wakeups). The server
sets both as soon as the process exists, before the worker imports anything. A worker's start (numpy,
pyarrow, numba: about 1.4 CPU-seconds) used to fall while the collector was already streaming, at nice 0
(the worker lowered its priority only after its imports) in an autogroup of its own, which CFS weighs like
the whole traced session (autogroup nice 0: weight 1024, nice 10: 110; sched_prio_to_weight,
kernel/sched/core.c). Not lower than 10: the server waits for its workers (finalising waits for `finish`
in a thread of the loop's default pool; commits wait for the SQLite write lock while a worker writes a
chunk), and in a bench run with workers at nice 19 on this host under others' load (load average 10-20),
three of ten collectors had batches still unacknowledged after their 30 s drain.
Commands on its stdin, one line each: `finish` (chunk everything committed, write the derived data,
answer `ok` or `broken <reason>` on stdout) and `close` (stop now). It stops at once when its stdin
closes (the server went away: a restarted server rebuilds the chunks from the batches); a lock file held
for its lifetime makes a newer worker of the same recording wait until an older one has stopped.

ProcChunker is the server's handle, with LiveChunker's interface (lock, offer, finish, close).
PLACEMAP_LIVE_CHUNKER=thread keeps the chunker in the server process (the earlier design, for benches).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import select
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa

from placemap.live.chunker import ChunkingBrokenError, LiveChunker
from placemap.schema.models.topology_schema import Topology
from placemap.store import Store
from placemap.store.live import LiveStore

CHUNKER_NICE = 10
POLL_S = 0.1  # how often the worker looks for new committed batches
READ_BATCHES = 64  # batches read from the database at a time
ENV = "PLACEMAP_LIVE_CHUNKER"


def in_process() -> bool:
    return os.environ.get(ENV, "process") == "thread"


def _spawn(db: Path, rid: str | None, resume: bool) -> subprocess.Popen[str]:
    """A worker for rid, or (rid None) a spare that waits on its stdin for `start RID 0|1`."""
    cmd = [sys.executable, "-m", "placemap.live.chunkproc", "--db", str(db), "--nice", str(CHUNKER_NICE)]
    cmd += [] if rid is None else ["--rid", rid] + (["--resume"] if resume else [])
    # Its own session, so its own autogroup (see main): a busy chunker in the server's autogroup would
    # spend the group's fair share, and the server's event loop would then wait for turns on wakeup.
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    lower_priority(proc.pid, CHUNKER_NICE)
    return proc


# One spare worker per database, started when nothing is live (server start, a recording finished): a
# worker's start (its imports, ~1.4 CPU-seconds) then falls outside the live sessions, when the traced
# host may be busy, instead of at each session's first batch.
_spares: dict[Path, subprocess.Popen[str]] = {}
_spares_lock = threading.Lock()


def _release(proc: subprocess.Popen[str]) -> None:
    """Close a worker's stdin (it exits when it sees the end), reap it and close its stdout: pipes left
    to the garbage collector are ResourceWarnings."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    proc.wait()
    with contextlib.suppress(OSError, ValueError):
        if proc.stdout is not None:
            proc.stdout.close()


def start_spare(store: Store) -> None:
    """A spare worker for store's database, unless one is waiting already."""
    db = Path(store.path)
    with _spares_lock:
        old = _spares.get(db)
        if old is None or old.poll() is not None:
            if old is not None:
                _release(old)
            _spares[db] = _spawn(db, None, False)


def stop_spares() -> None:
    """Spares exit when their stdin closes."""
    with _spares_lock:
        for proc in _spares.values():
            _release(proc)
        _spares.clear()


def _take_spare(db: Path, rid: str, resume: bool) -> subprocess.Popen[str] | None:
    with _spares_lock:
        proc = _spares.pop(db, None)
    if proc is None:
        return None
    if proc.poll() is not None or proc.stdin is None:
        _release(proc)
        return None
    try:
        proc.stdin.write(f"start {rid} {int(resume)}\n")
        proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
        proc.kill()
        _release(proc)
        return None
    return proc


class ProcChunker:
    """The server's handle on one recording's chunk worker (the spare, when one waits)."""

    def __init__(self, store: Store, rid: str, *, resume: bool) -> None:
        self.rid = rid
        self.store = store
        self.lock = threading.Lock()  # a commit holds it across its transaction (finalising waits for it)
        db = Path(store.path)
        self._proc = _take_spare(db, rid, resume) or _spawn(db, rid, resume)

    def offer(self, table: pa.Table) -> None:
        """Nothing to hand over: the worker reads the committed batch from the database."""

    def _say(self, cmd: str) -> bool:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(cmd + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def finish(self) -> None:
        """Chunk every committed batch and write the derived data (call after the sessions are closed).
        Raises ChunkingBrokenError when the worker's chunking stopped (the caller rebuilds)."""
        assert self._proc.stdout is not None
        answer = self._proc.stdout.readline() if self._say("finish") else ""
        _release(self._proc)
        start_spare(self.store)  # for the next live recording, now that this one has ended
        if answer.strip() != "ok":
            raise ChunkingBrokenError(answer.strip() or f"the chunk worker exited ({self._proc.returncode})")

    def close(self) -> None:
        """Stop without finishing."""
        if self._proc.poll() is None:
            self._say("close")
        _release(self._proc)


def lower_priority(pid: int, nice: int) -> None:
    """Give the process pid (its main thread: threads it starts inherit it) and its autogroup the nice
    value `nice` (absolute; raising one's nice needs no privilege). Without autogroups, the nice alone."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(f"{nice}\n")


def _topology(store: Store, rid: str) -> Topology | None:
    rec = store.get_recording(rid)
    body = None if rec is None or rec.topology_id is None else store.get_topology(rec.topology_id)
    return None if body is None else Topology.model_validate(body)


def _work(db: Path, rid: str, resume: bool) -> None:
    store = Store(db)
    live = LiveStore(store)
    through = live.last_seq(rid) if resume else None
    ch = LiveChunker(store, rid, _topology(store, rid), resume_through=through)
    last = -1 if through is None else through

    def catch_up() -> None:
        nonlocal last
        while got := live.batches_after(rid, last, limit=READ_BATCHES):
            for seq, data in got:
                ch.offer(pa.ipc.open_stream(pa.py_buffer(data)).read_all())
                last = seq

    buf = b""
    while True:
        ready, _, _ = select.select([sys.stdin.fileno()], [], [], POLL_S)
        catch_up()
        if not ready:
            continue
        got = os.read(sys.stdin.fileno(), 4096)
        if not got:  # the server went away
            os._exit(0)
        buf += got
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line == b"close":
                os._exit(0)  # a later worker rebuilds from the batches; nothing half-written is kept
            if line == b"finish":
                catch_up()  # the sessions are closed: this is every batch there will be
                try:
                    ch.finish()
                except ChunkingBrokenError as exc:
                    print(f"broken {exc}", flush=True)
                else:
                    print("ok", flush=True)
                return


def _first_line() -> str:
    """One line of stdin read a byte at a time: what follows it stays in the pipe for _work's reads."""
    out = b""
    while (c := os.read(sys.stdin.fileno(), 1)) not in (b"", b"\n"):
        out += c
    return out.decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--rid", help="the recording (without: a spare, told `start RID 0|1` on stdin)")
    ap.add_argument("--resume", action="store_true", help="rebuild from the committed batches first")
    ap.add_argument("--nice", type=int, default=0, help="run at this nice value (and so its autogroup)")
    args = ap.parse_args()
    lower_priority(os.getpid(), args.nice)  # the server has set it already; a worker started by hand
    rid, resume = args.rid, args.resume
    if rid is None:
        words = _first_line().split()
        if len(words) != 3 or words[0] != "start":
            return 0  # the server went away (or stops its spares)
        rid, resume = words[1], words[2] == "1"
    lock_path = Path(f"{args.db}.chunker-{rid}.lock")
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # an older worker of this recording has stopped writing
        _work(args.db, rid, resume)
        lock_path.unlink(missing_ok=True)  # finished: no later worker of this recording
    return 0


if __name__ == "__main__":
    sys.exit(main())
