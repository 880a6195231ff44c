"""Request/response pairs: tbench, context-switch pairs (will-it-scale context_switch1) and
netperf TCP_RR / UDP_RR. A client does its side of a transaction, wakes its server (a sync
wakeup: pipes, loopback sockets) and sleeps; the server answers the same way.

tbench (placement-model.md section 5): every client connects, then waits for the start; the
main task wakes all clients at once (the thundering herd), so clients that slept right after
their first wakeup are placed where few tasks *looked* busy. Servers are forked by the server
daemon (started on its own CPU) when their client connects, as tbench_srv and netserver do.

netperf and context_switch1 have no such start: each pair runs from the moment it exists, so
the pairs already running are what the fork balance sees when it places the next ones. A
netperf instance (started one after another, as a script starts them in the background)
connects, the netserver daemon forks its server, and the connect's completion wakes the
client, which sends its first request at once; a context_switch1 task forks its partner
itself (will-it-scale's new_task) and starts passing the token. Both metrics count from the
moment the last pair started, as a run's steady state, or from `warmup_ms` if later.

Per-transaction CPU costs are parameters below (loopback round trips of 10-30 us per side on
the preset machines; a pipe ping-pong is ~2 us per side); throughput figures scale with the
bytes a transaction moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from placemap.sim import cost
from placemap.sim.domains import LEVEL_NAMES
from placemap.sim.engine import SLEEP, Engine
from placemap.sim.state import Task
from placemap.sim.workloads.catalog import read

FORK_NS: Final = 60_000
# A fork (with the child's connect() and the daemon's accept()) does not take the same time
# twice: the mm copied, the page faults after it and whatever else the CPU runs vary. Each fork
# takes FORK_NS - FORK_SPREAD_NS / 2 + uniform[0, FORK_SPREAD_NS), 30-90 us. With a fixed
# duration main's and the daemon's forks interleave with one period and the utilization round
# robin of find_idlest_group aliases with it: every client on every other LLC of the node, every
# server on the others (docs/calibration.md, mechanism 18). The calibration's signs are the same
# for spreads of 10% to 100% of FORK_NS (three seeds each).
FORK_SPREAD_NS: Final = FORK_NS
# working sets: dbench's file buffers for tbench; a few pages for a pipe or a netperf socket
WSS_KB: Final = {"tbench": 512, "ctxswitch": 16, "tcp_rr": 64, "udp_rr": 64}
START_WAKE_NS: Final = 500

# kind -> (client work ns, server work ns, bytes per transaction)
PROFILES: Final[dict[str, tuple[int, int, int]]] = {
    "tbench": (15_000, 25_000, 8_192),  # dbench NetBench ops over loopback TCP
    "ctxswitch": (1_200, 1_200, 0),  # read/write of one byte on a pipe pair
    "tcp_rr": (6_000, 6_000, 2),  # netperf default 1-byte request/response
    "udp_rr": (5_000, 5_000, 2),
}


def fork_ns(eng: Engine) -> int:
    """How long one fork takes (FORK_SPREAD_NS)."""
    return FORK_NS - FORK_SPREAD_NS // 2 + eng.rng.randrange(FORK_SPREAD_NS)


class _Side:
    def __init__(self, w: Pairs, server: bool) -> None:
        self.w = w
        self.server = server
        self.phase = 0  # 0 setup, 1 waiting for the start, 2 working, 3 woke the peer
        self.peer: Task | None = None
        self.peer_side: _Side | None = None
        self.from_cpu = -1  # the CPU the peer wrote its last message on (-1: none pending)

    def step(self, eng: Engine, p: Task) -> int:
        w = self.w
        if self.phase == 0:
            if w.herd:
                w.ready += 1
                if w.ready == 2 * w.n and w.main is not None:
                    eng.wake(w.main, p, sync=True)
            if self.server:
                self.phase = 3  # a server waits for its first request
                if self.from_cpu < 0:
                    return SLEEP
                # (no herd) the client's first request came before this server first ran
            elif w.kind == "ctxswitch":
                # context_switch1: the task forks its partner itself, then passes the token
                self.phase = 1
                partner = _Side(w, True)
                w.link(self, p, partner, eng.fork(p, w.kind, partner))
                return fork_ns(eng)
            else:
                self.phase = 1
                w.accept_queue.append((p, self))  # connect(): the daemon accepts and forks
                if w.daemon is not None:
                    eng.wake(w.daemon, p, sync=True)
                return SLEEP  # wait for the start (tbench) or for the connection (netperf)
        if self.phase in (1, 3):
            if self.phase == 1 and not w.herd:
                w.pair_started(eng)
            self.phase = 2
            work = w.server_ns if self.server else w.client_ns
            if self.from_cpu >= 0:
                # the peer's message: its lines come from the LLC it was written on
                work += w.msg_ns[eng.st.sd.level_index(self.from_cpu, p.cpu)]
                self.from_cpu = -1
            return work
        # work done: pass the turn to the peer, then sleep
        self.phase = 3
        if not self.server:
            w.transactions += 1
            if w.warmup_ns and w.t_start >= 0 and eng.env.now >= w.warmup_ns:
                w.warmup_ns = 0  # the warmup is over: count from here
                w.t_start = eng.env.now
                w.transactions_at_start = w.transactions
        if self.peer is not None:
            if self.peer_side is not None:
                self.peer_side.from_cpu = p.cpu
            eng.wake(self.peer, p, sync=w.sync)
        return SLEEP


class _Daemon:
    """The server daemon (tbench_srv, netserver): forks a server per accepted connection."""

    def __init__(self, w: Pairs) -> None:
        self.w = w

    def step(self, eng: Engine, p: Task) -> int:
        w = self.w
        if not w.accept_queue:
            return SLEEP
        ct, cs = w.accept_queue.pop(0)
        side = _Side(w, True)
        w.link(cs, ct, side, eng.fork(p, w.kind + "_srv", side))
        if not w.herd:
            eng.wake(ct, p, sync=False)  # the connection is up: the client starts at once
        return fork_ns(eng)


class _Main:
    """The client launcher: forks the clients, then (tbench) starts them all at once."""

    def __init__(self, w: Pairs) -> None:
        self.w = w
        self.forked = 0
        self.started = False

    def step(self, eng: Engine, p: Task) -> int:
        w = self.w
        if self.forked < w.n:
            self.forked += 1
            side = _Side(w, False)
            w.clients.append((eng.fork(p, w.kind, side), side))
            return fork_ns(eng)
        if w.herd and not self.started and w.ready >= 2 * w.n:
            self.started = True
            w.t_start = eng.env.now
            for t, _ in w.clients:
                eng.wake(t, p, sync=False)
            return START_WAKE_NS * w.n
        return SLEEP


class Pairs:
    """tbench / ctxswitch / netperf, by `kind`."""

    better = "higher"

    def __init__(self, kind: str, n: int, sync: bool = True, warmup_ms: int = 0) -> None:
        self.kind = kind
        self.n = n
        # the count starts at the first transaction at or after warmup_ns (once every pair
        # runs); 0 once it has started
        self.warmup_ns = warmup_ms * 1_000_000
        self.sync = sync
        self.herd = kind == "tbench"  # every client waits for one start (else each pair runs at once)
        self.client_ns, self.server_ns, self.bytes = PROFILES[kind]
        # extra cost of reading the peer's message by level_index of writer and reader: each
        # direction carries half the transaction's bytes
        self.msg_ns = [cost.data_transfer_ns(lv, self.bytes // 2) for lv in LEVEL_NAMES]
        self.metric_name = {
            "tbench": "throughput_mb_s",
            "ctxswitch": "switches_per_s",
        }.get(kind, "transactions_per_s")
        self.clients: list[tuple[Task, _Side]] = []
        self.servers: list[tuple[Task, _Side]] = []
        self.main: Task | None = None
        self.daemon: Task | None = None
        self.accept_queue: list[tuple[Task, _Side]] = []
        self.ready = 0
        self.transactions = 0
        self.t_start = -1
        self.started = 0  # (no herd) pairs whose client has begun its first transaction
        self.transactions_at_start = 0

    def link(self, cs: _Side, client: Task, side: _Side, server: Task) -> None:
        """Make a client and its just forked server (running `side`) each other's peer."""
        cs.peer, side.peer = server, client
        cs.peer_side, side.peer_side = side, cs
        self.servers.append((server, side))

    def pair_started(self, eng: Engine) -> None:
        """(no herd) A client begins its first transaction; the last one starts the count."""
        self.started += 1
        if self.started == self.n:
            self.t_start = eng.env.now
            self.transactions_at_start = self.transactions

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], field: str) -> Pairs:
        kind = spec["kind"]
        if kind == "tbench":
            r = read(spec, "tbench", field)
            return cls("tbench", r.int("clients"), warmup_ms=r.int("warmup_ms"))
        if kind == "ctxswitch":
            r = read(spec, "ctxswitch", field)
            return cls("ctxswitch", r.int("pairs"), warmup_ms=r.int("warmup_ms"))
        r = read(spec, "netperf", field)
        return cls(r.choice("test"), r.int("threads"), warmup_ms=r.int("warmup_ms"))

    def setup(self, eng: Engine, hints: int) -> None:
        cpus = eng.st.cpus
        self.main = eng.spawn(self.kind, _Main(self), cpus[eng.rng.randrange(len(cpus))], hints=hints)
        self.main.wss_kb = WSS_KB[self.kind]
        if self.kind == "ctxswitch":
            return  # each task forks its own partner: no server daemon
        self.daemon = eng.spawn(
            self.kind + "_srv", _Daemon(self), cpus[eng.rng.randrange(len(cpus))], hints=hints
        )
        self.daemon.wss_kb = WSS_KB[self.kind]

    def complete(self) -> bool:
        return self.t_start >= 0 and not self.warmup_ns

    def metric(self, eng: Engine, duration_ns: int) -> float:
        if not self.complete():
            return 0.0
        secs = (eng.env.now - self.t_start) / 1e9
        if secs <= 0:
            return 0.0
        done = self.transactions - self.transactions_at_start
        if self.kind == "tbench":
            return round(done * self.bytes / secs / 1e6, 3)
        if self.kind == "ctxswitch":
            return round(2 * done / secs, 3)
        return round(done / secs, 3)
