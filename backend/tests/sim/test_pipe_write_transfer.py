"""A pipe write pays for the pipe's lines (mutex, head/tail, the buffer slot and the page it
appends to) when the pipe was last used on another LLC (cost.pipe_write_transfer_ns): the
writer's half of the cross-LLC pipe traffic, the reader's being cost.msg_transfer_ns."""

from __future__ import annotations

from placemap.sim import cost
from placemap.sim.engine import Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset
from placemap.sim.workloads.hackbench import FDS, WRITE_NS, Hackbench, _Receiver, _Sender


def test_write_transfer_costs_by_level() -> None:
    assert [cost.pipe_write_transfer_ns(lv) for lv in ("", "smt", "llc")] == [0, 0, 0]
    assert cost.pipe_write_transfer_ns("pkg") == cost.PIPE_WRITE_LINES * cost.MSG_LINE_CROSS_LLC_NS > 0
    assert cost.pipe_write_transfer_ns("numa") > cost.pipe_write_transfer_ns("pkg")


def _write_burst(hb: Hackbench, eng: Engine, cpu: int) -> int:
    """Sender 0 of the group, on `cpu`, writes its first pass (one message to each of the 20
    receivers); returns the burst's length."""
    tx = _Sender(hb, 0, 0)
    tx.started = True
    p = Task(100 + cpu, "sender")
    p.cpu = cpu
    return tx.step(eng, p)


def test_a_write_pays_for_the_pipe_lines_another_llc_used_last() -> None:
    # zen3: CPU 0's LLC is CPUs 0-7 and 128-135; CPU 8 is another CCX of the socket
    eng = Engine(preset("zen3-2s-nps1"), seed=1)
    hb = Hackbench(groups=1, loops=10, ipc="pipe")
    write = WRITE_NS["pipe"]
    assert _write_burst(hb, eng, 0) == FDS * write, "fresh pipes: nobody used them yet"
    assert _write_burst(hb, eng, 1) == FDS * write, "last used by a writer of the same LLC"
    assert _write_burst(hb, eng, 8) == FDS * (write + cost.pipe_write_transfer_ns("pkg"))
    # receiver 3 reads on CPU 64 (the other socket): the next write to its pipe pays that
    rx = _Receiver(hb, 0, 3)
    rx.started = True
    r = Task(200, "receiver")
    r.cpu = 64
    hb.pipes[3].put(8)
    rx.step(eng, r)
    ns = _write_burst(hb, eng, 8)
    assert ns == FDS * write + cost.pipe_write_transfer_ns("numa"), "only the pipe the reader used"
