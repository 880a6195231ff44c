"""Every parametric workload's parameters, declared once: name, default, bounds or choices, and
what it means. The workloads read their scenario objects through `read` (errors name the field,
e.g. `workload.groups`), and GET /api/sim/options hands the same table to the dashboard's
simulate form, so a form and the simulator cannot disagree on a default or a bound."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from placemap.sim.workloads.params import check_keys, choice_param, int_param


@dataclass(frozen=True)
class IntParam:
    """An integer parameter within [lo, hi]."""

    name: str
    default: int
    lo: int
    hi: int
    help: str


@dataclass(frozen=True)
class ChoiceParam:
    """One of a fixed set of strings."""

    name: str
    default: str
    choices: tuple[str, ...]
    help: str


Param = IntParam | ChoiceParam

# the pair workloads count from when every pair runs, or from warmup_ms if later: a run's steady
# state, after the SIS_UTIL budget has followed the load (the LLC domain's busy balance interval,
# 16 x its weight in ms: 1.8 s for a 112-CPU LLC)
_WARMUP: Final = IntParam("warmup_ms", 0, 0, 60_000, "simulated ms before the metric starts counting")

# hackbench's defaults are rt-tests hackbench.c's and perf bench sched messaging's (10 groups,
# processes, unix sockets, 100 loops); schbench's are the 2022 schbench's (-m 1 as the RFC runs it).
CATALOG: Final[dict[str, tuple[Param, ...]]] = {
    "hackbench": (
        IntParam("groups", 10, 1, 64, "groups of 20 senders and 20 receivers (-g)"),
        ChoiceParam("mode", "process", ("process", "thread"), "tasks as processes or threads (-T)"),
        ChoiceParam("ipc", "socket", ("pipe", "socket"), "unix sockets or pipes (-p)"),
        IntParam("loops", 100, 1, 1_000_000, "messages each sender writes to each receiver (-l)"),
    ),
    "schbench": (
        IntParam("messengers", 1, 1, 64, "message threads (-m)"),
        IntParam("workers", 16, 1, 4096, "workers per messenger (-t)"),
        IntParam("cputime_us", 30000, 1, 10_000_000, "each worker's spin per round, us (-c)"),
        IntParam("sleeptime_us", 30000, 1, 10_000_000, "the messenger's sleep per round, us (-s)"),
    ),
    "tbench": (IntParam("clients", 8, 1, 4096, "client/server pairs over loopback"), _WARMUP),
    "ctxswitch": (IntParam("pairs", 1, 1, 4096, "task pairs passing a token (context_switch1)"), _WARMUP),
    "netperf": (
        ChoiceParam("test", "tcp_rr", ("tcp_rr", "udp_rr"), "request/response over TCP or UDP"),
        IntParam("threads", 1, 1, 4096, "netperf/netserver pairs"),
        _WARMUP,
    ),
    "stream": (IntParam("threads", 4, 1, 4096, "OpenMP threads, main among them"),),
}


class Reader:
    """A workload's scenario object checked against its catalog entry: unknown keys refused at
    once, each value read (default when absent) and bounded on demand."""

    def __init__(self, spec: Mapping[str, Any], kind: str, field: str) -> None:
        self.spec = spec
        self.field = field
        self.params = {p.name: p for p in CATALOG[kind]}
        check_keys(spec, tuple(self.params), field)

    def int(self, name: str) -> int:
        p = self.params[name]
        assert isinstance(p, IntParam)
        return int_param(self.spec, name, p.default, p.lo, p.hi, field=self.field)

    def choice(self, name: str) -> str:
        p = self.params[name]
        assert isinstance(p, ChoiceParam)
        return choice_param(self.spec, name, p.default, p.choices, self.field)


def read(spec: Mapping[str, Any], kind: str, field: str) -> Reader:
    """The reader of `spec` as a `kind` workload's parameters."""
    return Reader(spec, kind, field)
