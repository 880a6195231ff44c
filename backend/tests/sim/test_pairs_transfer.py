"""tbench, ctxswitch and netperf sides read their peer's message: when the peer wrote it on
another LLC, its lines (data, 64 bytes each, plus the lines that queued it) come from there
(cost.data_transfer_ns), as hackbench's messages do (cost.msg_transfer_ns)."""

from __future__ import annotations

from placemap.sim import cost
from placemap.sim.engine import Engine
from placemap.sim.state import Task
from placemap.sim.topology import preset
from placemap.sim.workloads.pairs import Pairs, _Side


def _server_burst(kind: str, writer_cpu: int) -> int:
    """The work of a server on CPU 0 woken by its client's message written on writer_cpu."""
    eng = Engine(preset("zen3-2s-nps1"), seed=1)
    w = Pairs(kind, 1)
    client, server = _Side(w, False), _Side(w, True)
    client.peer_side, server.peer_side = server, client
    p = Task(1, "srv")
    p.cpu = 0
    server.phase = 3  # waiting for a request
    server.from_cpu = writer_cpu
    ns = server.step(eng, p)
    assert server.from_cpu == -1, "the message was read"
    return ns


def test_a_request_written_on_another_llc_costs_its_lines() -> None:
    # CPU 0's CCX is CPUs 0-7 and 128-135; 8 is another CCX, 64 the other socket
    base = Pairs("tbench", 1).server_ns
    assert _server_burst("tbench", 1) == _server_burst("tbench", 128) == base
    half = Pairs("tbench", 1).bytes // 2
    assert _server_burst("tbench", 8) == base + cost.data_transfer_ns("pkg", half)
    assert _server_burst("tbench", 64) == base + cost.data_transfer_ns("numa", half)
    assert cost.data_transfer_ns("pkg", half) == (cost.MSG_QUEUE_LINES + 64) * cost.MSG_LINE_CROSS_LLC_NS


def test_a_one_byte_message_costs_only_its_queueing_lines() -> None:
    assert cost.data_transfer_ns("pkg", 0) == cost.MSG_QUEUE_LINES * cost.MSG_LINE_CROSS_LLC_NS
    assert cost.data_transfer_ns("llc", 4096) == 0, "within the LLC: no transfer"
    # hackbench's 100-byte message is the same rule
    assert cost.data_transfer_ns("pkg", 100) == cost.msg_transfer_ns("pkg")
