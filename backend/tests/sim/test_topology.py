"""Topology presets (placement-model.md section 1) and the schema loader."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from placemap.sim.errors import ScenarioError
from placemap.sim.topology import PRESETS, from_dict, load, preset

SHARED = Path(__file__).resolve().parents[3].parent / "shared"

# preset -> (CPUs, LLCs, CPUs per LLC, nodes), the table of section 1
EXPECTED = {
    "zen3-2s-nps1": (256, 16, 16, 2),
    "zen3-2s-nps2": (256, 16, 16, 4),
    "zen3-2s-nps4": (256, 16, 16, 8),
    "zen4-9654-2s": (384, 24, 16, 2),
    "icx-2s": (128, 2, 64, 2),
    "bdw-1s-20": (20, 1, 20, 1),
    "hsw-8s-288": (288, 8, 36, 8),
    "spr-2s-224": (224, 2, 112, 2),
}


def test_every_preset_of_the_model_is_shipped() -> None:
    assert set(EXPECTED) <= set(PRESETS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_preset_matches_the_table(name: str) -> None:
    t = preset(name)
    cpus, llcs, per_llc, nodes = EXPECTED[name]
    assert (t.nr_cpus, t.nr_llcs, t.nr_nodes) == (cpus, llcs, nodes)
    assert {len(cs) for cs in t.llc_cpus} == {per_llc}
    assert all(len(t.siblings[c]) == 2 for c in t.cpus), "all presets are SMT-2"
    # every LLC sits in one node and one package
    for cs in t.llc_cpus:
        assert len({t.node_of[c] for c in cs}) == 1
        assert len({t.package_of[c] for c in cs}) == 1


def test_zen3_nps_node_ranges() -> None:
    nps1 = preset("zen3-2s-nps1")
    assert nps1.node_cpus[0] == tuple(range(64)) + tuple(range(128, 192))
    assert nps1.siblings[17] == (17, 145)
    assert nps1.llc_cpus[1] == tuple(range(8, 16)) + tuple(range(136, 144))
    nps2 = preset("zen3-2s-nps2")
    assert nps2.node_cpus[1] == tuple(range(32, 64)) + tuple(range(160, 192))
    nps4 = preset("zen3-2s-nps4")
    assert nps4.node_cpus[7] == tuple(range(112, 128)) + tuple(range(240, 256))
    assert nps4.distances[0][1] == 12 and nps4.distances[0][4] == 32


def test_to_dict_round_trips() -> None:
    for name in PRESETS:
        t = preset(name)
        assert from_dict(t.to_dict()) == t.__class__(
            **{**_fields(t), "name": t.name, "node_reclaim_distance": 30}
        )


def _fields(t: Any) -> dict[str, Any]:
    return {f.name: getattr(t, f.name) for f in dataclasses.fields(t)}  # no __slots__ when compiled


def test_unknown_preset_names_the_field() -> None:
    with pytest.raises(ScenarioError) as e:
        load("zen5-9s")
    assert e.value.field == "topology"


def test_bad_llc_names_the_cpu_field() -> None:
    d = preset("bdw-1s-20").to_dict()
    d["cpus"][3]["llc"] = 7
    with pytest.raises(ScenarioError) as e:
        from_dict(d)
    assert e.value.field == "topology.cpus[3].llc"


def test_a_cpu_number_beyond_nr_cpus_is_refused_before_anything_is_sized_by_it() -> None:
    """The per-CPU tables are sized by the largest CPU number: 10**15 would be petabytes. The
    largest number a kernel can have, 8191, loads (a sparse machine of two CPUs)."""
    d = preset("bdw-1s-20").to_dict()
    d["cpus"][5]["cpu"] = 10**15
    with pytest.raises(ScenarioError) as e:
        from_dict(d)
    assert e.value.field == "topology.cpus[5].cpu"
    assert e.value.message == "CPU 1000000000000000 is beyond the kernel's largest NR_CPUS (8192)"
    d = preset("bdw-1s-20").to_dict()
    d["cpus"] = [c for c in d["cpus"] if c["cpu"] == 0]
    d["cpus"].append({**d["cpus"][0], "cpu": 8191, "core": 1, "smt_siblings": [8191]})
    t = from_dict(d)
    assert t.cpus == (0, 8191)


def test_a_negative_smt_sibling_is_named_not_read_from_the_end() -> None:
    """A sibling -1 would have read the last CPU's online flag (a list indexed from its end), and
    -2**63 raised an IndexError no field named."""
    for bad in (-1, -(2**63)):
        d = preset("bdw-1s-20").to_dict()
        d["cpus"][5]["smt_siblings"] = [5, bad]
        with pytest.raises(ScenarioError) as e:
            from_dict(d)
        assert (e.value.field, e.value.message) == (
            "topology.cpus[5].smt_siblings",
            f"{bad} is no CPU number",
        )


def test_sparse_node_ids_and_offline_cpu() -> None:
    d = preset("bdw-1s-20").to_dict()
    d["numa_nodes"][0]["id"] = 4
    for c in d["cpus"]:
        c["numa_node"] = 4
    d["cpus"][19]["online"] = False
    t = from_dict(d)
    assert t.node_ids == (4,)
    assert 19 not in t.cpus and 19 not in t.llc_cpus[0]
    assert t.siblings[9] == (9,), "the offline sibling drops out of the core"


def test_smt4_cores_with_threads_offline() -> None:
    """POWER's `ppc64_cpu --smt=2` offlines threads 2 and 3 of every SMT-4 core. A topology that
    still names all four as siblings (written by hand, or from the core's shape before) loads with
    the online two as each other's only siblings; it was refused while CPU 4's list, filtered,
    was compared with CPU 5's, not yet filtered."""
    cpus = [
        {"cpu": c, "online": c % 4 < 2, "core": c // 4, "llc": 0, "numa_node": 0, "package": 0,
         "smt_siblings": [c // 4 * 4 + k for k in range(4)]}
        for c in range(16)
    ]  # fmt: skip
    t = from_dict(
        {
            "cpus": cpus,
            "llcs": [{"id": 0, "cpus": list(range(16))}],
            "numa_nodes": [{"id": 0}],
            "node_distances": [[10]],
        }
    )
    assert t.cpus == (0, 1, 4, 5, 8, 9, 12, 13)
    assert t.siblings[4] == t.siblings[5] == (4, 5)
    cpus[5]["smt_siblings"] = [5, 6, 7]  # CPU 4 names 5 a sibling, 5 does not name 4
    with pytest.raises(ScenarioError, match="CPUs 4 and 5 disagree on smt_siblings"):
        from_dict({"cpus": cpus, "llcs": [{"id": 0}], "numa_nodes": [{"id": 0}], "node_distances": [[10]]})


def epyc_7451() -> dict[str, Any]:
    """A topology dict from util-linux's real lscpu dump of a 2x EPYC 7451 (Zen1 Naples).

    The dump has no distance files; Naples firmware reports 10 / 16 (same socket) / 32."""
    text = (SHARED / "topologies/util-linux-lscpu/lscpu-x86_64-epyc_7451.expected").read_text()
    table = text.split("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n")[1]
    rows = [r.split(",") for r in table.splitlines() if r[:1].isdigit()]
    cpus = [(int(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[8])) for r in rows]
    by_core: dict[int, list[int]] = {}
    for cpu, core, _s, _n, _l in cpus:
        by_core.setdefault(core, []).append(cpu)
    nodes = sorted({n for *_x, n, _l in cpus})
    socket = {n: next(s for _c, _k, s, nn, _l in cpus if nn == n) for n in nodes}
    return {
        "machine": "epyc-7451",
        "source": "sysfs",
        "cpus": [
            {
                "cpu": c,
                "online": True,
                "core": k,
                "llc": llc,
                "numa_node": n,
                "package": s,
                "smt_siblings": sorted(by_core[k]),
            }
            for c, k, s, n, llc in cpus
        ],
        "llcs": [
            {"id": i, "cpus": sorted(c for c, *_r, llc in cpus if llc == i), "numa_nodes": []}
            for i in range(max(r[4] for r in cpus) + 1)
        ],
        "numa_nodes": [{"id": n, "cpus": [c for c, _k, _s, nn, _l in cpus if nn == n]} for n in nodes],
        "node_distances": [
            [10 if a == b else 16 if socket[a] == socket[b] else 32 for b in nodes] for a in nodes
        ],
    }


def test_real_lscpu_dump_loads() -> None:
    t = from_dict(epyc_7451())
    assert (t.nr_cpus, t.nr_llcs, t.nr_nodes) == (96, 16, 8)
    assert t.llc_cpus[0] == (0, 1, 2, 48, 49, 50)
    assert t.siblings[0] == (0, 48)
