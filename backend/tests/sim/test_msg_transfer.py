"""A pipe message read on another LLC than the one it was written on costs its lines'
transfer (cost.msg_transfer_ns): the hardware fetches its data and the lines its writer
dirtied from the writer's cache (placement-model.md section 4: a wakee "pays the cross-LLC
cache-line transfer cost for the data it receives"), per message, not per wakeup."""

from __future__ import annotations

from placemap.sim import cost
from placemap.sim.engine import Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset
from placemap.sim.workloads.hackbench import READ_NS, Hackbench, _Receiver


def test_message_transfer_costs_by_level() -> None:
    assert [cost.msg_transfer_ns(lv) for lv in ("", "smt", "llc")] == [0, 0, 0]
    assert cost.msg_transfer_ns("pkg") == cost.MSG_LINES * cost.MSG_LINE_CROSS_LLC_NS > 0
    assert cost.msg_transfer_ns("numa") > cost.msg_transfer_ns("pkg")


def _read_burst(writer_cpus: dict[int, int]) -> int:
    """The burst of receiver 0 of a zen3 hackbench group, on CPU 0, reading the messages
    `writer_cpus` (CPU -> count) wrote."""
    eng = Engine(preset("zen3-2s-nps1"), seed=1)
    hb = Hackbench(groups=1, loops=10, ipc="pipe")
    rx = _Receiver(hb, 0, 0)
    rx.started = True
    p = Task(1, "receiver")
    p.cpu = 0
    for c, n in writer_cpus.items():
        for _ in range(n):
            hb.pipes[0].put(c)
    ns = rx.step(eng, p)
    assert hb.pipes[0].n == 0, "the burst consumed the pending messages"
    return ns


def test_a_receiver_pays_per_message_for_what_another_llc_wrote() -> None:
    # CPU 0's LLC is CPUs 0-7 and 128-135 (zen3: 16 CPUs per CCX); CPU 8 is another CCX of
    # the same socket, CPU 64 the other socket
    read = READ_NS["pipe"]
    assert _read_burst({1: 3, 128: 2}) == 5 * read, "written in the reader's own LLC"
    assert _read_burst({8: 3}) == 3 * (read + cost.msg_transfer_ns("pkg"))
    assert _read_burst({1: 1, 64: 2}) == 3 * read + 2 * cost.msg_transfer_ns("numa")
