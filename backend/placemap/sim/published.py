"""Published effects of the scheduler features (placement-model.md section 3) outside the
calibration file: what each feature's authors measured, on the preset closest to their machine,
as checks of the model's direction. Nothing is tuned against them (the calibration file is the
only one the cost model is fitted to); `bench/sim_features.py` runs them and prints the model's
effect beside the published one.

Each check compares two runs of one scenario that differ only in their features: `base` is the
kernel the authors compared against, `test` the one with their change. Effects are signed so
that positive is better (as the calibration report signs them). A published effect beyond
NEUTRAL_PCT is a direction the model must share, by more than DIRECTION_MIN_PCT (a change the
model makes within rounding is no direction); within it, the model's effect must be within it
too.

Sources are LKML messages (by Message-ID, on lore.kernel.org/r/) or kernel commits. Loads are
given as the authors' share of the machine's CPUs, scaled to the preset's CPU count where the
machines differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

NEUTRAL_PCT: Final = 5.0
DIRECTION_MIN_PCT: Final = 1.0


@dataclass(frozen=True)
class Check:
    feature: str  # what the authors changed, in the model's feature names
    topology: str
    workload: Mapping[str, Any]
    published_pct: float  # the authors' figure, positive = better with `test`
    source: str
    base: Mapping[str, Any] = field(default_factory=dict)  # features of the baseline run
    test: Mapping[str, Any] = field(default_factory=dict)  # features of the changed run
    duration_ms: int = 200
    note: str = ""

    def scenarios(self, seed: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
        """The baseline's and the change's scenario."""

        def one(features: Mapping[str, Any]) -> dict[str, Any]:
            return {
                "topology": self.topology,
                "workload": dict(self.workload),
                "features": dict(features),
                "seed": seed,
                "duration_ms": self.duration_ms,
            }

        return one(self.base), one(self.test)


def agrees(published_pct: float, simulated_pct: float) -> bool:
    """Same direction beyond NEUTRAL_PCT; a neutral published effect wants a neutral model."""
    if abs(published_pct) <= NEUTRAL_PCT:
        return abs(simulated_pct) <= NEUTRAL_PCT
    return abs(simulated_pct) > DIRECTION_MIN_PCT and simulated_pct * published_pct > 0


_SIS_UTIL: Final = "70fb5ccf2ebb (v4: 20220612163428.849378-1-yu.c.chen@intel.com); 112 CPUs, one LLC"
_SIS_SHORT: Final = "373e6886e274f198608fa1b5f1c254e32b43845d.1677069490.git.yu.c.chen@intel.com (v6)"
_NUMA: Final = "e496132ebedd, Zen3 STREAM by K Prateek Nayak in its review (10 runs, the lowest gain)"
_UFC: Final = "20231019160523.1582101-1-mathieu.desnoyers@efficios.com (EPYC 9654, -l 480000)"
_STEAL: Final = "Sistare's v4 series on 4.20-rc1 (cover letter; sched_wakeup_granularity_ns 15 ms)"
_HB32: Final = {"kind": "hackbench", "groups": 32, "mode": "thread", "ipc": "pipe", "loops": 1000}


# The authors' runs last 100 s; the SIS_UTIL budget follows a busy LLC only when the LLC domain
# is balanced, every 16 x 112 ms (its busy interval) on spr-2s-224, so the first ~1.8 s after the
# load starts scan with the budget of the idle machine. The runs count the 300 ms after that.
_SPR_WARMUP_MS: Final = 2_000
_SPR_MS: Final = 2_300


def _spr(workload: Mapping[str, Any]) -> dict[str, Any]:
    return {**workload, "warmup_ms": _SPR_WARMUP_MS}


def _sis_util(workload: Mapping[str, Any], pct: float, note: str) -> Check:
    base = {"SIS_UTIL": False}
    return Check(
        "SIS_UTIL", "spr-2s-224", _spr(workload), pct, _SIS_UTIL, base, duration_ms=_SPR_MS, note=note
    )


def _sis_short(workload: Mapping[str, Any], pct: float, note: str) -> Check:
    test = {"SIS_SHORT": True}
    return Check(
        "SIS_SHORT", "spr-2s-224", _spr(workload), pct, _SIS_SHORT, test=test, duration_ms=_SPR_MS, note=note
    )


def _numa(topology: str, pct: float, note: str) -> Check:
    stream = {"kind": "stream", "threads": 16}
    legacy = {"NUMA_IMB_LEGACY": True}
    return Check(
        "NUMA_IMB_LEGACY off", topology, stream, pct, _NUMA, base=legacy, duration_ms=1000, note=note
    )


def _ufc(features: Mapping[str, Any], pct: float, note: str) -> Check:
    name = "+".join(features)
    return Check(name, "zen4-9654-2s", _HB32, pct, _UFC, test=features, duration_ms=5000, note=note)


def _steal(
    topology: str, workload: Mapping[str, Any], pct: float, test: Mapping[str, Any], note: str
) -> Check:
    return Check("STEAL", topology, workload, pct, _STEAL, test=test, duration_ms=5000, note=note)


def _netperf(test: str, threads: int) -> dict[str, Any]:
    return {"kind": "netperf", "test": test, "threads": threads}


CHECKS: Final[tuple[Check, ...]] = (
    # SIS_UTIL against SIS_PROP: the authors' 112-CPU LLC loaded 25-200%; spr-2s-224 has two
    # such LLCs, so twice the netperf threads for the same load
    _sis_util(_netperf("tcp_rr", 112), -0.4, "50% load (published -0.02..-0.69% at 25-150%)"),
    _sis_util(_netperf("tcp_rr", 448), 197.3, "200% load"),
    _sis_util(_netperf("udp_rr", 448), 196.8, "200% load"),
    _sis_util(
        {"kind": "tbench", "clients": 224}, 1.7, "100% load (published within -1.67..+1.67% at 25-200%)"
    ),
    # SIS_SHORT on the authors' 2x56C/112T (224 CPUs, 112 per LLC), SIS_UTIL on in both
    _sis_short(_netperf("tcp_rr", 168), 5.5, "75% load"),
    _sis_short(_netperf("tcp_rr", 224), 665.4, "100% load"),
    _sis_short(_netperf("udp_rr", 224), 135.0, "100% load"),
    _sis_short(_netperf("tcp_rr", 448), 0.0, "200% load (published about 0 at 150-200%)"),
    _sis_short({"kind": "tbench", "clients": 224}, 24.1, "100% load"),
    _sis_short({"kind": "ctxswitch", "pairs": 224}, 946.7, "will-it-scale context_switch1, 224 groups"),
    # the NUMA imbalance rework against the 25% rule before it: STREAM, 16 threads (one per LLC)
    _numa("zen3-2s-nps1", 33.0, "NPS1 (published +33..+70%)"),
    _numa("zen3-2s-nps2", 168.0, "NPS2 (published +168..+246%)"),
    _numa("zen3-2s-nps4", 172.0, "NPS4 (published +172..+434%)"),
    # Desnoyers' migration reduction: hackbench -g 32 --threads --pipe (runs of 1000 loops here)
    _ufc({"UTIL_FITS_CAPACITY": True}, 18.0, "49 s -> 39-40 s"),
    _ufc({"SELECT_BIAS_PREV": True}, 0.0, "48-50 s, no change on its own"),
    _ufc({"UTIL_FITS_CAPACITY": True, "SELECT_BIAS_PREV": True}, 40.0, "49 s -> 29-30 s"),
    # STEAL (4.20 base): a 1-socket 10-core Broadwell, and the 8-socket Haswell with the node limit lifted
    _steal(
        "bdw-1s-20",
        {"kind": "hackbench", "groups": 1, "loops": 2000},
        35.6,
        {"STEAL": True},
        "hackbench 1 process 100000",
    ),
    _steal(
        "bdw-1s-20",
        {"kind": "hackbench", "groups": 4, "loops": 2000},
        11.8,
        {"STEAL": True},
        "hackbench 4 process 100000",
    ),
    _steal(
        "hsw-8s-288",
        {"kind": "hackbench", "groups": 16, "loops": 500},
        -29.8,
        {"STEAL": True, "steal_node_limit": 8},
        "hackbench 16 processes 50000, STEAL forced on 8 nodes",
    ),
)
