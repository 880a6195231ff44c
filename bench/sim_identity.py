"""Proof that a speed change to the simulator changes no result: run a fixed set of scenarios
and the full calibration, save what they print, and compare byte for byte with a saved run.

    backend/.venv/bin/python bench/sim_identity.py save DIR      # before the change
    backend/.venv/bin/python bench/sim_identity.py compare DIR   # after it: exit 1 on any difference

Per scenario (every workload kind; several presets; the hints and the feature switches that
change decisions), three outputs: the result JSON (as `placemap sim --json --deterministic`
prints it), the sha256 of the run's full event log (every column of every fork, wakeup,
migration, switch and exit) and the sha256 of the final per-CPU and per-task PELT averages and
vruntimes (repr: every bit of every float). Plus `placemap calibrate --jobs 2 --json`'s output.
Whichever build is active runs (the compiled one when fresh, see placemap.sim._native); the
header line says which, and is not compared. A full run takes about a minute compiled.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

from placemap.sim import _native  # noqa: E402
from placemap.sim.scenario import parse_scenario, simulate, summarize  # noqa: E402
from placemap.sim.trace import EventLog  # noqa: E402

Z1, Z2, Z4, ICX = "zen3-2s-nps1", "zen3-2s-nps2", "zen3-2s-nps4", "icx-2s"
SCENARIOS: dict[str, dict[str, Any]] = {
    "ref-hackbench": {
        "topology": Z1,
        "workload": {"kind": "hackbench", "groups": 8, "loops": 200, "ipc": "pipe"},
        "seed": 1,
    },
    "hb-icx-socket-thread-wake_affine": {
        "topology": ICX,
        "workload": {
            "kind": "hackbench",
            "groups": 2,
            "mode": "thread",
            "ipc": "socket",
            "loops": 60,
        },
        "hints": ["wake_affine"],
        "seed": 2,
    },
    "hb-nps4-numa_imb_legacy": {
        "topology": Z4,
        "workload": {"kind": "hackbench", "groups": 4, "loops": 50, "ipc": "pipe"},
        "features": {"NUMA_IMB_LEGACY": True},
        "seed": 3,
    },
    "schbench-nps1-sis_short": {
        "topology": Z1,
        "workload": {"kind": "schbench", "workers": 32},
        "features": {"SIS_SHORT": True},
        "seed": 4,
        "duration_ms": 300,
    },
    "schbench-icx-util_fits": {
        "topology": ICX,
        "workload": {
            "kind": "schbench",
            "messengers": 2,
            "workers": 16,
            "cputime_us": 5000,
            "sleeptime_us": 3000,
        },
        "features": {"UTIL_FITS_CAPACITY": True},
        "seed": 5,
        "duration_ms": 200,
    },
    "tbench-nps4": {
        "topology": Z4,
        "workload": {"kind": "tbench", "clients": 32},
        "seed": 6,
        "duration_ms": 40,
    },
    "tbench-icx-steal": {
        "topology": ICX,
        "workload": {"kind": "tbench", "clients": 64},
        "features": {"STEAL": True},
        "seed": 7,
        "duration_ms": 40,
    },
    "ctxswitch-nps1-no_sis_util": {
        "topology": Z1,
        "workload": {"kind": "ctxswitch", "pairs": 4},
        "features": {"SIS_UTIL": False},
        "seed": 8,
        "duration_ms": 40,
    },
    "netperf-nps2-wake_hold": {
        "topology": Z2,
        "workload": {"kind": "netperf", "test": "udp_rr", "threads": 8},
        "hints": ["wake_hold"],
        "seed": 9,
        "duration_ms": 40,
    },
    "stream-icx": {
        "topology": ICX,
        "workload": {"kind": "stream", "threads": 16},
        "seed": 10,
        "duration_ms": 60,
    },
    "stream-nps4-mm_footprint": {
        "topology": Z4,
        "workload": {"kind": "stream", "threads": 64},
        "features": {"MM_FOOTPRINT": True},
        "seed": 11,
        "duration_ms": 60,
    },
    "hb-nps1-no_mc": {
        "topology": Z1,
        "workload": {"kind": "hackbench", "groups": 4, "loops": 50, "ipc": "pipe"},
        "features": {"NO_MC": True},
        "seed": 12,
    },
    "schbench-zen4-wake_wide": {
        "topology": "zen4-9654-2s",
        "workload": {
            "kind": "schbench",
            "workers": 64,
            "cputime_us": 2000,
            "sleeptime_us": 2000,
        },
        "hints": ["wake_wide"],
        "seed": 13,
        "duration_ms": 100,
    },
    "hb-bdw-select_bias_prev": {
        "topology": "bdw-1s-20",
        "workload": {"kind": "hackbench", "groups": 2, "loops": 50, "ipc": "pipe"},
        "features": {"SELECT_BIAS_PREV": True},
        "seed": 14,
    },
    "tbench-hsw8s-steal": {
        "topology": "hsw-8s-288",
        "workload": {"kind": "tbench", "clients": 32},
        "features": {"STEAL": True, "steal_node_limit": 8},
        "seed": 15,
        "duration_ms": 30,
    },
    "schbench-spr-fork_spread": {
        "topology": "spr-2s-224",
        "workload": {"kind": "schbench", "workers": 48},
        "hints": ["fork_spread"],
        "seed": 16,
        "duration_ms": 200,
    },
    "stream-nps1-fork_affine-mm": {
        "topology": Z1,
        "workload": {"kind": "stream", "threads": 32},
        "hints": ["fork_affine", "wake_hold"],
        "features": {"MM_FOOTPRINT": True},
        "seed": 17,
        "duration_ms": 60,
    },
    "hb-nps2-socket-mix": {
        "topology": Z2,
        "workload": {"kind": "hackbench", "groups": 3, "ipc": "socket", "loops": 40},
        "features": {"SIS_UTIL": False, "UTIL_FITS_CAPACITY": True, "SIS_SHORT": True},
        "hints": ["wake_wide"],
        "seed": 18,
    },
    "hb-icx-g16-hold-steal": {
        "topology": ICX,
        "workload": {"kind": "hackbench", "groups": 16, "loops": 30, "ipc": "pipe"},
        "hints": ["wake_hold", "wake_wide"],
        "features": {"STEAL": True},
        "seed": 19,
    },
}


def outputs() -> dict[str, str]:
    """Every output, by file name."""
    out: dict[str, str] = {}
    for name, spec in SCENARIOS.items():
        sc = parse_scenario({"duration_ms": 5000, **spec})
        log = EventLog()
        eng, wl = simulate(sc, log)
        out[f"{name}.json"] = json.dumps(summarize(eng, wl, 0.0), indent=1, sort_keys=True) + "\n"
        trace = hashlib.sha256(repr(log.cols).encode()).hexdigest()
        st = eng.st
        pelt = repr(
            (
                [(rq.util, rq.load, rq.nr_running, rq.min_vruntime, rq.pelt_ts) for rq in st.rqs],
                [(t.util, t.load, t.vruntime, t.cpu, t.pelt_ts) for t in st.tasks],
            )
        )
        out[f"{name}.digest"] = (
            f"events {len(log)} log {trace}\nstate {hashlib.sha256(pelt.encode()).hexdigest()}\n"
        )
    cal = subprocess.run(
        [str(ROOT / "bin" / "placemap"), "calibrate", "--jobs", "2", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    out["calibrate.json"] = cal.stdout
    return out


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    what, d = sys.argv[1], Path(sys.argv[2])
    print(f"simulator build: {_native.status}", flush=True)
    got = outputs()
    if what == "save":
        d.mkdir(parents=True, exist_ok=True)
        for name, text in got.items():
            (d / name).write_text(text)
        print(f"saved {len(got)} outputs to {d}")
        return 0
    bad = [n for n, text in got.items() if not (d / n).exists() or (d / n).read_text() != text]
    missing = sorted({p.name for p in d.iterdir()} - set(got))
    for n in bad:
        print(f"DIFFERENT: {n}")
    for n in missing:
        print(f"not produced any more: {n}")
    print(f"{len(got) - len(bad)}/{len(got)} outputs byte-identical to {d}")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
