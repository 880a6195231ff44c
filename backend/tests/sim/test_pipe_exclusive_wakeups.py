"""Writers blocked on a full pipe wait exclusively (fs/pipe.c since v5.5, 0ddad21d3e99 "pipe:
use exclusive waits when reading or writing"): a read that found the pipe full wakes one of
them, the first to have waited, and each woken writer wakes the next once its own write
leaves the pipe not full (pipe_write()'s wake_next_writer). The reader does not wake them
all."""

from __future__ import annotations

from placemap.sim.engine import Engine
from placemap.sim.state import TASK_SLEEPING, Task
from placemap.sim.topology import preset
from placemap.sim.workloads.hackbench import Hackbench, _Receiver, _Sender


def _sleeper(pid: int, cpu: int) -> Task:
    t = Task(pid, "sender")
    t.cpu = cpu
    t.state = TASK_SLEEPING
    return t


def test_a_read_of_a_full_pipe_wakes_one_writer_and_that_writer_wakes_the_next() -> None:
    eng = Engine(preset("icx-2s"), seed=1)
    hb = Hackbench(groups=1, loops=100, ipc="pipe")
    for _ in range(hb.capacity):
        hb.pipes[0].put(4)  # receiver 0's pipe is full
    w1, w2, w3 = _sleeper(11, 4), _sleeper(12, 5), _sleeper(13, 6)
    hb.pipes[0].waiters.extend([w1, w2, w3])
    rx = _Receiver(hb, 0, 0)
    rx.started = True
    reader = Task(1, "receiver")
    reader.cpu = 0
    rx.step(eng, reader)
    woken = [t.pid for t in (w1, w2, w3) if t.state != TASK_SLEEPING]
    assert woken == [11], "one writer, the first to wait"
    assert hb.pipes[0].waiters == [w2, w3]
    # w1 resumes: its first write is to the pipe it waited on, which now has room
    tx = _Sender(hb, 0, 0)
    tx.started = True
    tx.waited = 0
    tx.step(eng, w1)
    woken = [t.pid for t in (w2, w3) if t.state != TASK_SLEEPING]
    assert woken == [12], "the woken writer passes the wakeup on to the next"
    assert hb.pipes[0].waiters == [w3]


def test_a_writer_that_did_not_wait_wakes_nobody() -> None:
    eng = Engine(preset("icx-2s"), seed=1)
    hb = Hackbench(groups=1, loops=100, ipc="pipe")
    w2 = _sleeper(12, 5)
    hb.pipes[0].waiters.append(w2)
    tx = _Sender(hb, 0, 0)
    tx.started = True
    p = Task(11, "sender")
    p.cpu = 4
    tx.step(eng, p)
    assert w2.state == TASK_SLEEPING and hb.pipes[0].waiters == [w2]


def test_a_unix_socket_read_wakes_every_waiting_writer() -> None:
    """sock_wait_for_wmem() waits non-exclusively: the reader's write_space wakes them all."""
    eng = Engine(preset("icx-2s"), seed=1)
    hb = Hackbench(groups=1, loops=100, ipc="socket")
    for _ in range(hb.capacity):
        hb.pipes[0].put(4)
    ws = [_sleeper(11, 4), _sleeper(12, 5)]
    hb.pipes[0].waiters.extend(ws)
    rx = _Receiver(hb, 0, 0)
    rx.started = True
    reader = Task(1, "receiver")
    reader.cpu = 0
    rx.step(eng, reader)
    assert all(t.state != TASK_SLEEPING for t in ws) and not hb.pipes[0].waiters
