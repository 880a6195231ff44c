"""Random scenarios (hypothesis, derandomized: the same examples on every run): synthetic
machines of shapes the topology schema allows and the presets never have (1-3 packages, 1-2
nodes each, 1-3 LLCs per node of 1-5 cores, SMT 1, 2 or 4, sometimes a CPU offline), any
parametric workload within its bounds, any hints and features, 1-60 simulated ms. Every run
ends with a result whose counters add up, and the same scenario gives the same bytes. This is
how the SMT-4 offline-thread refusal was found (test_topology.py)."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from placemap.sim.features import FEATURE_NAMES
from placemap.sim.scenario import run_scenario

HINT_SETS = (
    [],
    ["fork_affine"],
    ["fork_spread"],
    ["wake_affine"],
    ["wake_hold"],
    ["wake_wide"],
    ["fork_spread", "wake_hold", "wake_wide"],
    ["fork_affine", "wake_affine"],
)


def machine(
    *, packages: int, nodes_per: int, llcs_per: int, cores: list[int], smt: int, offline: int, far: int
) -> dict[str, Any]:
    """A topology dict: packages x nodes_per nodes, each of llcs_per LLCs whose core counts come
    from `cores` in turn, SMT threads numbered together; CPU `offline` (mod the count) offline
    when >= 0 (its siblings still name it)."""
    cpus: list[dict[str, Any]] = []
    llcs: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    cpu = core = 0
    for p in range(packages):
        for _n in range(nodes_per):
            nid = len(nodes)
            in_node: list[int] = []
            for _l in range(llcs_per):
                in_llc: list[int] = []
                for _c in range(cores[len(llcs) % len(cores)]):
                    sib = list(range(cpu, cpu + smt))
                    cpus += [
                        {
                            "cpu": s,
                            "online": True,
                            "core": core,
                            "llc": len(llcs),
                            "numa_node": nid,
                            "package": p,
                            "smt_siblings": sib,
                        }
                        for s in sib
                    ]
                    in_llc += sib
                    cpu += smt
                    core += 1
                llcs.append({"id": len(llcs), "cpus": in_llc, "numa_nodes": [nid]})
                in_node += in_llc
            nodes.append({"id": nid, "cpus": in_node})
    if offline >= 0 and len(cpus) > 1:
        cpus[offline % len(cpus)]["online"] = False
    pkg = [i // nodes_per for i in range(len(nodes))]
    dist = [
        [10 if a == b else 12 if pkg[a] == pkg[b] else far for b in range(len(nodes))]
        for a in range(len(nodes))
    ]
    return {"machine": "random", "cpus": cpus, "llcs": llcs, "numa_nodes": nodes, "node_distances": dist}


machines = st.builds(
    machine,
    packages=st.integers(1, 3),
    nodes_per=st.integers(1, 2),
    llcs_per=st.integers(1, 3),
    cores=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    smt=st.sampled_from([1, 2, 4]),
    offline=st.integers(-3, 200),
    far=st.sampled_from([20, 21, 32, 40]),
)
workloads = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.just("hackbench"),
            "groups": st.integers(1, 4),
            "mode": st.sampled_from(["process", "thread"]),
            "ipc": st.sampled_from(["pipe", "socket"]),
            "loops": st.integers(1, 30),
        }
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("schbench"),
            "messengers": st.integers(1, 3),
            "workers": st.integers(1, 40),
            "cputime_us": st.integers(1, 5000),
            "sleeptime_us": st.integers(1, 5000),
        }
    ),
    st.fixed_dictionaries(
        {"kind": st.just("tbench"), "clients": st.integers(1, 40), "warmup_ms": st.sampled_from([0, 5])}
    ),
    st.fixed_dictionaries({"kind": st.just("stream"), "threads": st.integers(1, 40)}),
    st.fixed_dictionaries(
        {"kind": st.just("ctxswitch"), "pairs": st.integers(1, 20), "warmup_ms": st.sampled_from([0, 3])}
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("netperf"),
            "test": st.sampled_from(["tcp_rr", "udp_rr"]),
            "threads": st.integers(1, 20),
        }
    ),
)
SWITCHES = sorted(n for n in FEATURE_NAMES if n != "steal_node_limit")
features = st.builds(
    lambda switches, limit: {**switches, **({"steal_node_limit": limit} if limit else {})},
    st.dictionaries(st.sampled_from(SWITCHES), st.booleans(), max_size=4),
    st.sampled_from([0, 1, 8]),
)
SMT4_OFFLINE = machine(
    packages=1, nodes_per=1, llcs_per=2, cores=[2], smt=4, offline=2, far=20
)  # CPU 2 offline: CPUs 0, 1, 3 still name it


@settings(
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    topology=st.one_of(machines, st.sampled_from(["bdw-1s-20", "icx-2s", "zen3-2s-nps4", "hsw-8s-288"])),
    workload=workloads,
    hints=st.sampled_from(HINT_SETS),
    feats=features,
    seed=st.integers(0, 99),
    duration_ms=st.sampled_from([1, 5, 20, 60]),
)
@example(SMT4_OFFLINE, {"kind": "hackbench", "groups": 1, "loops": 5}, ["wake_hold"], {}, 1, 20)
def test_any_scenario_runs_deterministically_and_its_counters_add_up(  # noqa: PLR0917 - hypothesis' arguments
    topology: Any,
    workload: dict[str, Any],
    hints: list[str],
    feats: dict[str, bool],
    seed: int,
    duration_ms: int,
) -> None:
    sc = {
        "topology": topology,
        "workload": workload,
        "hints": hints,
        "features": feats,
        "seed": seed,
        "duration_ms": duration_ms,
    }
    r = run_scenario(sc, wall_clock=False)
    assert json.dumps(run_scenario(sc, wall_clock=False), sort_keys=True) == json.dumps(r, sort_keys=True)
    v = r["metric"]["value"]
    assert math.isfinite(v) and v >= 0
    c = r["counters"]
    mig, wake = c["migrations"], c["wakeups"]
    assert sum(mig["by_level"].values()) == mig["total"] == sum(mig["by_cause"].values())
    assert sum(wake["by_level"].values()) <= wake["total"] and 0 <= wake["affine"] <= wake["total"]
    bw = wake["by_waker"]
    assert bw["shared_llc"] + bw["cross_llc"] == wake["total"] and min(bw.values()) >= 0
    assert bw["to_waker_llc"] + bw["to_prev_llc"] + bw["elsewhere"] == bw["cross_llc"]
    # a wakeup on the waker's own CPU is one the waker's CPU and the chosen one share (level 0)
    assert bw["on_waker_cpu"] == wake["total"] - sum(wake["by_level"].values())
    assert 0.0 <= c["cpu_utilization"] <= 1.0 and c["avg_wait_us"] >= 0 and c["context_switches"] >= 0
    assert r["sim"]["simulated_ms"] <= duration_ms
    assert (r["sim"]["incomplete"] is None) == r["sim"]["complete"]
