"""hackbench -g G [process|thread] [pipe|socket] -l L.

Defaults are hackbench's own (rt-tests hackbench.c, as perf bench sched messaging): 10 groups,
processes, unix sockets (pipes only with -p / --pipe), 100 loops of 100-byte messages.

Per group 20 senders and 20 receivers; every sender writes L messages of 100 bytes to every
receiver; a receiver reads until it has 20 x L. Writes and reads are sync wakeups; a sender
blocks when the receiver's buffer is full; the blocked senders are woken (sync) one at a time,
the first by the reading receiver, each next one by the sender woken before it (fs/pipe.c's
exclusive waits; a unix socket's reader wakes them all).
The main task forks all receivers then all senders, each child runs its setup and waits;
when the last is ready main wakes them all (the start) and the run ends when the last child
exits. Metric: runtime_s (lower is better), from the start to the last exit.

A sender's burst is one pass over the receivers (its messages are delivered when the burst
ends); a receiver's burst reads everything pending. Costs per message are parameters below;
a message read on another LLC than the one its sender wrote it on costs its lines' transfer
on top (cost.msg_transfer_ns), and a write to a pipe last used (read or written) on another
LLC costs the pipe's lines (cost.pipe_write_transfer_ns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from placemap.sim import cost
from placemap.sim.domains import LEVEL_NAMES
from placemap.sim.engine import EXIT, SLEEP, Engine, Program
from placemap.sim.state import TASK_SLEEPING, Task
from placemap.sim.workloads.catalog import read

if TYPE_CHECKING:
    from mypy_extensions import i64  # compiled, a native int (see core.py); annotations only

FDS: Final = 20  # hackbench's default: 20 senders and 20 receivers per group
# CPU cost of one 100-byte write / read (syscall, copy, wakeup check): perf of hackbench on
# Zen3/ICX shows ~1-2 us per message end to end; sockets cost more than pipes (skb alloc).
WRITE_NS: Final = {"pipe": 1_200, "socket": 2_000}
READ_NS: Final = {"pipe": 800, "socket": 1_500}
# Messages a receiver's buffer holds: a pipe's 16 pages hold 655 messages of 100 bytes; a
# unix socket's 208 KiB sndbuf holds ~230 skbs of ~900 bytes truesize.
CAPACITY: Final = {"pipe": 655, "socket": 230}
FORK_NS: Final = {"process": 60_000, "thread": 20_000}  # fork()/clone() in the parent
WSS_KB: Final = 64  # stacks, pipe buffers and 100-byte messages: a small working set
SETUP_NS: Final = 10_000  # a child's setup before it waits for the start
START_WAKE_NS: Final = 500  # main's cost per child woken at the start


class _Main(Program):
    def __init__(self, hb: Hackbench) -> None:
        self.hb = hb
        self.phase = 0  # 0 forking, 1 waiting ready, 2 waking, 3 waiting end
        self.next_child = 0

    def step(self, eng: Engine, p: Task) -> int:
        hb = self.hb
        if self.phase == 0:
            if self.next_child < hb.nr_children:
                i = self.next_child
                self.next_child += 1
                g, k = divmod(i, 2 * FDS)
                beh: _Receiver | _Sender = _Receiver(hb, g, k) if k < FDS else _Sender(hb, g, k - FDS)
                child = eng.fork(p, "hackbench", beh)
                hb.tasks.append(child)
                if k < FDS:
                    hb.pipes[g * FDS + k].reader = child
                return FORK_NS[hb.mode]
            self.phase = 1
            if hb.ready < hb.nr_children:
                return SLEEP
        if self.phase == 1:
            self.phase = 2
            hb.t_start = eng.env.now
            for t in hb.tasks:
                eng.wake(t, p, sync=True)
            return START_WAKE_NS * hb.nr_children
        return SLEEP


class _Child(Program):
    def __init__(self, hb: Hackbench, group: int, index: int) -> None:
        self.hb = hb
        self.group = group
        self.index = index
        self.started = False
        self.set_up = False

    def _ready(self, eng: Engine, p: Task) -> int:
        """Setup burst, then wait for the start."""
        hb = self.hb
        if not self.set_up:
            self.set_up = True
            return SETUP_NS
        self.started = True
        hb.ready += 1
        if hb.ready == hb.nr_children and hb.main is not None:
            eng.wake(hb.main, p, sync=True)
        return SLEEP


class Pipe:
    """One receiver's pipe (or unix socket): its pending messages, the CPU that used it last
    and the writers waiting for room. One object per receiver, so that a pass over a group's
    pipes loads one object per pipe instead of an item of each of several lists (compiled, its
    int fields are unboxed: a count changes without allocating an int object)."""

    def __init__(self, capacity: int) -> None:
        # i64 (compiled: a machine word; the count and the CPUs are compared, stored and used
        # as list indices per message without a tag test or a tagged int's reference count)
        self.n: i64 = 0  # messages pending (written, not read yet)
        # the CPU each pending message was written on, in src[:n]; sized for a full pipe plus
        # one undelivered message of each writer (a writer checks for room a burst before its
        # messages land), so that writes store into it instead of growing and freeing a list
        # (list[Any]: a sender stores one int object, boxed once per burst, into each pipe)
        self.src: list[Any] = [0] * (capacity + FDS)
        self.received: i64 = 0  # messages read so far
        self.last_user: i64 = -1  # the CPU that used the pipe last (-1: none yet)
        self.waiters: list[Task] = []  # writers waiting for room, in the order they began to
        self.reader: Task | None = None

    def put(self, cpu: int) -> None:
        """A message written on `cpu` lands in the pipe."""
        n = self.n
        if n < len(self.src):
            self.src[n] = cpu
        else:
            self.src.append(cpu)
        self.n = n + 1


class _Receiver(_Child):
    def __init__(self, hb: Hackbench, group: int, index: int) -> None:
        super().__init__(hb, group, index)
        self.pipe = hb.pipes[group * FDS + index]

    def step(self, eng: Engine, p: Task) -> int:
        if not self.started:
            return self._ready(eng, p)
        hb = self.hb
        pipe = self.pipe
        k = pipe.n
        if k:
            pipe.received += k
            # the messages' lines come from the LLCs they were written on
            xfer: i64 = 0
            row = hb.msg_row(eng, p.cpu)
            src = pipe.src
            j: i64 = 0
            while j < k:
                c: i64 = src[j]
                xfer += row[c]
                j += 1
            pipe.n = 0
            pipe.last_user = p.cpu  # the read took the pipe's mutex and moved its tail
            # pipe_read(): writers wait exclusively (wait_event_interruptible_exclusive on
            # wr_wait), and a read that found the pipe full wakes one of them, the first to
            # have waited; the others are woken one by one by the writer before them
            # (pipe_write()'s wake_next_writer, in _Sender.step). A unix socket's writers
            # wait non-exclusively (sock_wait_for_wmem): the read's write_space wakes all.
            waiters = pipe.waiters
            if waiters:
                if hb.exclusive:
                    eng.wake(waiters.pop(0), p, sync=True)
                else:
                    pipe.waiters = []
                    for s in waiters:
                        eng.wake(s, p, sync=True)
            return k * hb.read_ns + xfer
        if pipe.received >= FDS * hb.loops:
            hb.exited(eng)
            return EXIT
        return SLEEP


class _Sender(_Child):
    def __init__(self, hb: Hackbench, group: int, index: int) -> None:
        super().__init__(hb, group, index)
        self.pipes = hb.pipes[group * FDS : (group + 1) * FDS]  # the group's, by receiver
        self.loop = 0
        self.next_r = 0
        # the burst's messages, delivered when it ends: one to each of `batch` receivers of
        # the group, from receiver `batch_first` on (wrapping at FDS). Two ints rather than a
        # list of receivers, since a pass always takes them in turn.
        self.batch_first = 0
        self.batch = 0
        self.waited = -1  # the receiver whose full pipe this sender waited on, until it writes

    def step(self, eng: Engine, p: Task) -> int:
        if not self.started:
            return self._ready(eng, p)
        hb = self.hb
        pipes = self.pipes
        n = self.batch
        if n == FDS and self.batch_first == self.next_r and self.loop < hb.loops:
            return self._deliver_and_write(eng, p)
        if n:
            here: Any = p.cpu  # the writer's CPU as an object: boxed here, not per message
            i = self.batch_first
            for _m in range(n):  # (named: compiled, `_` is untyped, boxed per message)
                pipe = pipes[i]
                k = pipe.n  # Pipe.put, inlined
                src = pipe.src
                if k < len(src):
                    src[k] = here
                else:
                    src.append(here)
                pipe.n = k + 1
                rt = pipe.reader
                if rt is not None and rt.state == TASK_SLEEPING:
                    eng.wake(rt, p, sync=True)
                i += 1
                if i == FDS:
                    i = 0
            self.batch = 0
        cap: i64 = hb.capacity
        loops = hb.loops
        nxt = self.next_r  # (two statements: compiled, a tuple assignment boxes both ints)
        loop = self.loop
        first = nxt
        n = 0
        xfer = 0
        if loop < loops:
            # each write pulls the pipe's lines from whoever used the pipe last
            cpu = p.cpu
            row = hb.write_row(eng, cpu)
            while n < FDS and loop < loops:
                pipe = pipes[nxt]
                if pipe.n >= cap:
                    break
                u = pipe.last_user
                if u >= 0:
                    xfer += row[u]
                pipe.last_user = cpu
                n += 1
                nxt += 1
                if nxt == FDS:
                    nxt = 0
                    loop += 1
        self.next_r = nxt
        self.loop = loop
        return self._wrote(eng, p, first, n, xfer)

    def _deliver_and_write(self, eng: Engine, p: Task) -> int:
        """step() after a full pass (the common case): the last burst wrote one message to
        each of the FDS pipes from next_r on, which is where the next burst begins, so one
        pass over the pipes delivers the last burst's message and writes the next burst's,
        pipe by pipe, instead of two passes. Same result as delivering all, then writing:
        a write to a pipe reads only that pipe's count (its message delivered just before)
        and last user, and a wakeup (eng.wake) queues the reader and posts events without
        running any task's step or touching a pipe, so that the later pipes' readers being
        woken after the earlier pipes' writes changes nothing; the wakeups keep their order."""
        hb = self.hb
        pipes = self.pipes
        cap: i64 = hb.capacity
        loops = hb.loops
        cpu = p.cpu
        here: Any = cpu  # the writer's CPU as an object: boxed here, not per message
        row = hb.write_row(eng, cpu)
        nxt = self.next_r  # (two statements: compiled, a tuple assignment boxes both ints)
        loop = self.loop
        first = nxt
        n = 0
        xfer = 0
        writing = True  # until a full pipe or the end of the last loop ends the next burst
        i = first  # the pipe the last burst's message goes to
        for _m in range(FDS):  # (named: compiled, `_` is untyped, boxed per pipe)
            pipe = pipes[i]
            k = pipe.n  # Pipe.put, inlined
            src = pipe.src
            if k < len(src):
                src[k] = here
            else:
                src.append(here)
            k += 1
            pipe.n = k
            rt = pipe.reader
            if rt is not None and rt.state == TASK_SLEEPING:
                eng.wake(rt, p, sync=True)
            if writing:
                if k >= cap:
                    writing = False
                else:
                    # each write pulls the pipe's lines from whoever used the pipe last
                    u = pipe.last_user
                    if u >= 0:
                        xfer += row[u]
                    pipe.last_user = cpu
                    n += 1
                    nxt += 1
                    if nxt == FDS:
                        nxt = 0
                        loop += 1
                        if loop >= loops:
                            writing = False
            i += 1
            if i == FDS:
                i = 0
        self.batch = 0
        self.next_r = nxt
        self.loop = loop
        return self._wrote(eng, p, first, n, xfer)

    def _wrote(self, eng: Engine, p: Task, first: int, n: int, xfer: int) -> int:
        """The end of step(): a burst of n writes from receiver `first` on (next_r and loop
        already say where the one after begins), else the exit or the wait for room."""
        hb = self.hb
        pipes = self.pipes
        cap = hb.capacity
        if n:
            self.batch_first = first
            self.batch = n
            w = self.waited
            if w >= 0 and hb.exclusive:
                # pipe_write(): a writer that waited for room wakes the next waiting writer
                # once its own write leaves the pipe not full (wake_next_writer); its first
                # write of this burst is to that pipe
                self.waited = -1
                queue = pipes[w].waiters
                if queue and pipes[w].n + 1 < cap:
                    eng.wake(queue.pop(0), p, sync=True)
            return n * hb.write_ns + xfer
        if self.loop >= hb.loops:
            hb.exited(eng)
            return EXIT
        nxt = self.next_r
        pipes[nxt].waiters.append(p)
        self.waited = nxt
        return SLEEP


class Hackbench:
    """The workload; `tasks` in fork order (per group: 20 receivers, then 20 senders)."""

    metric_name = "runtime_s"
    better = "lower"

    def __init__(
        self, groups: int = 10, mode: str = "process", ipc: str = "socket", loops: int = 100
    ) -> None:
        self.groups = groups
        self.mode = mode
        self.ipc = ipc
        # the per-message costs of this ipc, looked up once instead of per burst
        self.write_ns = WRITE_NS[ipc]
        self.read_ns = READ_NS[ipc]
        self.capacity = CAPACITY[ipc]
        self.exclusive = ipc == "pipe"  # writers waiting for room are woken one at a time
        self.loops = loops
        self.nr_children = groups * 2 * FDS
        # per receiver (group g's receiver r at g * FDS + r): its pipe
        self.pipes = [Pipe(self.capacity) for _ in range(groups * FDS)]
        self.msg_ns = tuple(cost.msg_transfer_ns(lv) for lv in LEVEL_NAMES)  # by level_index
        # per reader CPU: msg_ns by writer CPU (SchedDomains.cost_row; looked up on a
        # receiver's first read there). Lists by CPU (None: not looked up yet), sized on the
        # first lookup: an item load per burst instead of a dictionary lookup
        self.msg_rows: list[list[int] | None] = []
        # per writer CPU: the cost of a write by the CPU that used the pipe last
        # (cost.pipe_write_transfer_ns)
        self.write_ns_by_level = tuple(cost.pipe_write_transfer_ns(lv) for lv in LEVEL_NAMES)
        self.write_rows: list[list[int] | None] = []
        self.tasks: list[Task] = []
        self.main: Task | None = None
        self.ready = 0
        self.alive = self.nr_children
        self.t_start = -1
        self.t_end = -1

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> Hackbench:
        p = read(spec, "hackbench", field)
        return cls(groups=p.int("groups"), mode=p.choice("mode"), ipc=p.choice("ipc"), loops=p.int("loops"))

    def msg_row(self, eng: Engine, cpu: int) -> list[int]:
        """Extra cost of reading on `cpu` one message written on each CPU: one list lookup per
        message instead of a level_index."""
        rows = self.msg_rows
        if not rows:
            rows.extend([None] * eng.st.topo.nr_cpus)
        row = rows[cpu]
        if row is None:
            row = rows[cpu] = eng.st.sd.cost_row(self.msg_ns, cpu)
        return row

    def write_row(self, eng: Engine, cpu: int) -> list[int]:
        """Extra cost of a write on `cpu` to a pipe last used on each CPU."""
        rows = self.write_rows
        if not rows:
            rows.extend([None] * eng.st.topo.nr_cpus)
        row = rows[cpu]
        if row is None:
            row = rows[cpu] = eng.st.sd.cost_row(self.write_ns_by_level, cpu)
        return row

    def setup(self, eng: Engine, hints: int) -> None:
        cpus = eng.st.cpus
        self.main = eng.spawn("hackbench", _Main(self), cpus[eng.rng.randrange(len(cpus))], hints=hints)
        self.main.wss_kb = WSS_KB

    def exited(self, eng: Engine) -> None:
        self.alive -= 1
        if self.alive == 0:
            self.t_end = eng.env.now
            eng.env.stop()

    def complete(self) -> bool:
        return self.t_end >= 0

    def metric(self, eng: Engine, duration_ns: int) -> float:
        start = self.t_start if self.t_start >= 0 else 0
        end = self.t_end if self.t_end >= 0 else eng.env.now
        return round((end - start) / 1e9, 9)
