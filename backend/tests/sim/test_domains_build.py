"""SchedDomains' build, which shares work between CPUs for speed, against a plain per-CPU build
of the same kernel rules (sd_init, the x86 levels, sched_init_numa, degeneration,
build_sched_groups' walk, imb_numa_nr) written here without any sharing: every field of every
CPU's domain chain, its groups, and the LLC facts, on every preset, a real lscpu dump, a
topology with offline CPUs and unsorted sibling lists, with and without NO_MC."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from placemap.sim.domains import (
    SD_BALANCE_EXEC,
    SD_BALANCE_FORK,
    SD_BALANCE_NEWIDLE,
    SD_NUMA,
    SD_OVERLAP,
    SD_PREFER_SIBLING,
    SD_SERIALIZE,
    SD_SHARE_CPUCAPACITY,
    SD_SHARE_LLC,
    SD_WAKE_AFFINE,
    SchedDomains,
)
from placemap.sim.topology import PRESETS, Topology, from_dict, preset
from tests.sim.test_topology import epyc_7451

KIND = {"SMT": "smt", "MC": "llc", "PKG": "pkg", "NODE": "pkg", "NUMA": "numa"}


def plain_build(topo: Topology, no_mc: bool) -> dict[str, Any]:
    """Per CPU, with no sharing: the chain each CPU's domains must have."""
    cpus = topo.cpus
    levels: list[tuple[str, int, int, dict[int, set[int]]]] = []  # name, flags, distance, span by CPU
    levels.append(("SMT", SD_SHARE_CPUCAPACITY | SD_SHARE_LLC, 0, {c: set(topo.siblings[c]) for c in cpus}))
    if not no_mc:
        levels.append(("MC", SD_SHARE_LLC, 0, {c: set(topo.llc_cpus[topo.llc_of[c]]) for c in cpus}))
    in_package = any(
        {x for x in cpus if topo.node_of[x] == topo.node_of[c]}
        != {x for x in cpus if topo.package_of[x] == topo.package_of[c]}
        for c in cpus
    )
    if not in_package:
        levels.append(("PKG", 0, 0, {c: set(topo.node_cpus[topo.node_of[c]]) for c in cpus}))
    for j, d in enumerate(sorted({d for row in topo.distances for d in row})):
        span = {c: {x for x in cpus if topo.distances[topo.node_of[c]][topo.node_of[x]] <= d} for c in cpus}
        levels.append(("NODE", 0, 0, span) if j == 0 else ("NUMA", SD_NUMA, d, span))
    if no_mc:
        name, flags, dist, span = levels[1]
        levels[1] = (name, flags | SD_SHARE_LLC, dist, span)

    def sd_init(flags: int, dist: int) -> tuple[int, int, int]:
        flags |= SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING
        if flags & SD_SHARE_CPUCAPACITY:
            return flags, 110, 0
        if flags & SD_SHARE_LLC:
            return flags, 117, 1
        if flags & SD_NUMA:
            flags = (flags & ~SD_PREFER_SIBLING) | SD_SERIALIZE | SD_OVERLAP
            if dist > topo.node_reclaim_distance:
                flags &= ~(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE)
            return flags, 117, 2
        return flags, 117, 1

    info = [sd_init(f, d) for _n, f, d, _s in levels]
    full: dict[int, list[set[int]]] = {}
    for c in cpus:
        chain: list[set[int]] = []
        for _n, _f, _d, span in levels:
            chain.append(set(span[c]) | (chain[-1] if chain else set()))
        full[c] = chain
    imb: dict[int, list[int]] = {}
    for c in cpus:
        out, cur, imb_span = [], 0, 1
        for i, s in enumerate(full[c]):
            if not info[i][0] & SD_SHARE_LLC and i > 0 and info[i - 1][0] & SD_SHARE_LLC:
                nr_llcs = len(s) // len(full[c][i - 1])
                cur = max(1, len(s) >> 3 if nr_llcs == 1 else nr_llcs)
                out.append(cur)
                tops = [j for j in range(i + 1, len(levels)) if info[j][0] & SD_NUMA]
                imb_span = len(full[c][tops[0]]) if tops else len(s)
            else:
                out.append(cur * max(1, len(s) // imb_span))
        imb[c] = out
    kept: list[int] = []
    for li in range(len(levels)):
        if any(len(full[c][li]) > 1 and (not kept or full[c][li] != full[c][kept[-1]]) for c in cpus):
            kept.append(li)
    per_cpu: dict[int, list[dict[str, Any]]] = {}
    for c in cpus:
        chain_out = []
        for k, li in enumerate(kept):
            span = sorted(full[c][li])
            walk = span[span.index(c) :] + span[: span.index(c)]
            groups: list[tuple[int, ...]] = []
            covered: set[int] = set()
            for x in walk:
                if x not in covered:
                    g = full[x][kept[k - 1]] if k else {x}
                    covered |= g
                    groups.append(tuple(sorted(g)))
            flags, pct, nice = info[li]
            chain_out.append(
                {
                    "name": levels[li][0],
                    "kind": KIND[levels[li][0]],
                    "span": tuple(span),
                    "span_set": frozenset(span),
                    "groups": tuple(groups),
                    "flags": flags,
                    "imbalance_pct": pct,
                    "cache_nice_tries": nice,
                    "imb_numa_nr": imb[c][li],
                    "min_interval_ms": len(span),
                    "max_interval_ms": 2 * len(span),
                    "busy_factor": 16,
                    "numa_distance": levels[li][2],
                }
            )
        per_cpu[c] = chain_out
    llc_index = {
        c: max((i for i, d in enumerate(per_cpu[c]) if d["flags"] & SD_SHARE_LLC), default=-1) for c in cpus
    }
    llc_spans: list[tuple[int, ...]] = []
    llc_id: dict[int, int] = {}
    for c in cpus:
        span = per_cpu[c][llc_index[c]]["span"] if llc_index[c] >= 0 else (c,)
        if span not in llc_spans:
            llc_spans.append(span)
        llc_id[c] = llc_spans.index(span)
    return {
        "level_names": tuple(levels[li][0] for li in kept),
        "per_cpu": per_cpu,
        "llc_index": llc_index,
        "llc_id": llc_id,
        "llc_spans": tuple(llc_spans),
    }


def built(topo: Topology, no_mc: bool) -> dict[str, Any]:
    sd = SchedDomains(topo, no_mc=no_mc)
    per_cpu = {}
    for c in topo.cpus:
        chain = []
        for d in sd.per_cpu[c]:
            fields = {name: getattr(d, name) for name in Domain_fields}
            assert tuple(sd.group_cpus[g] for g in d.group_ids) == d.groups, f"CPU {c} {d.name}: group_ids"
            chain.append(fields)
        per_cpu[c] = chain
    return {
        "level_names": sd.level_names,
        "per_cpu": per_cpu,
        "llc_index": {c: sd.llc_index[c] for c in topo.cpus},
        "llc_id": {c: sd.llc_id[c] for c in topo.cpus},
        "llc_spans": sd.llc_spans,
    }


Domain_fields = (
    "name",
    "kind",
    "span",
    "span_set",
    "groups",
    "flags",
    "imbalance_pct",
    "cache_nice_tries",
    "imb_numa_nr",
    "min_interval_ms",
    "max_interval_ms",
    "busy_factor",
    "numa_distance",
)


def _offline_and_unsorted() -> Topology:
    """zen3-2s-nps2 with CPUs 5, 133 (5's sibling) and 200 offline, and every sibling tuple
    highest CPU first (from_dict sorts them; a Topology made in code need not)."""
    d = preset("zen3-2s-nps2").to_dict()
    for c in d["cpus"]:
        if c["cpu"] in (5, 133, 200):
            c["online"] = False
    t = from_dict(d)
    return dataclasses.replace(t, siblings=tuple(tuple(reversed(s)) for s in t.siblings))


CASES = [(name, lambda name=name: preset(name)) for name in sorted(PRESETS)] + [
    ("epyc-7451", lambda: from_dict(epyc_7451())),
    ("nps2-offline-unsorted", _offline_and_unsorted),
]


@pytest.mark.parametrize("no_mc", [False, True])
@pytest.mark.parametrize(("name", "make"), CASES, ids=[c[0] for c in CASES])
def test_build_matches_the_plain_per_cpu_build(name: str, make: Any, no_mc: bool) -> None:
    topo = make()
    want, got = plain_build(topo, no_mc), built(topo, no_mc)
    assert got["level_names"] == want["level_names"], name
    for c in topo.cpus:
        assert len(got["per_cpu"][c]) == len(want["per_cpu"][c]), f"{name} CPU {c}"
        for g, w in zip(got["per_cpu"][c], want["per_cpu"][c], strict=True):
            for field in Domain_fields:
                assert g[field] == w[field], f"{name} CPU {c} {w['name']}: {field}"
    for key in ("llc_index", "llc_id", "llc_spans"):
        assert got[key] == want[key], f"{name}: {key}"


def test_cpus_sharing_a_domain_object_have_equal_domains() -> None:
    """Equal domains may be one object (nothing changes a Domain once built); the sharing must
    never join two CPUs whose domains differ, e.g. in group order."""
    topo = preset("zen3-2s-nps4")
    sd = SchedDomains(topo)
    want = plain_build(topo, False)["per_cpu"]
    owner: dict[int, int] = {}
    for c in topo.cpus:
        for i, d in enumerate(sd.per_cpu[c]):
            first = owner.setdefault(id(d), c)
            assert want[first][i]["groups"] == want[c][i]["groups"], f"CPUs {first} and {c} level {i}"
