"""Sched domains as build_sched_domains() would build them (levels, flags, imbalance_pct,
groups, imb_numa_nr), on the presets and on a real lscpu dump."""

from __future__ import annotations

from bisect import bisect_right

from placemap.sim.domains import (
    SD_BALANCE_FORK,
    SD_NUMA,
    SD_SHARE_CPUCAPACITY,
    SD_SHARE_LLC,
    SD_WAKE_AFFINE,
    SchedDomains,
    index_after,
    sorted_contains,
)
from placemap.sim.topology import PRESETS, from_dict, preset
from tests.sim.test_topology import epyc_7451


def chain(name: str, cpu: int = 0, no_mc: bool = False) -> list[tuple[str, int, int]]:
    sd = SchedDomains(preset(name), no_mc=no_mc)
    return [(d.name, d.weight, len(d.groups)) for d in sd.per_cpu[cpu]]


def test_zen3_nps1_has_pkg_above_split_llc() -> None:
    assert chain("zen3-2s-nps1") == [("SMT", 2, 2), ("MC", 16, 8), ("PKG", 128, 8), ("NUMA", 256, 2)]


def test_nps4_drops_pkg_and_adds_numa_levels_by_distance() -> None:
    # x86_has_numa_in_package: no PKG level; NODE (32 CPUs), then distance 12 (socket), 32.
    assert chain("zen3-2s-nps4") == [
        ("SMT", 2, 2),
        ("MC", 16, 8),
        ("NODE", 32, 2),
        ("NUMA", 128, 4),
        ("NUMA", 256, 2),
    ]


def test_unified_llc_degenerates_pkg() -> None:
    assert chain("icx-2s") == [("SMT", 2, 2), ("MC", 64, 32), ("NUMA", 128, 2)]
    assert chain("bdw-1s-20") == [("SMT", 2, 2), ("MC", 20, 10)]


def test_groups_start_with_the_local_group() -> None:
    sd = SchedDomains(preset("zen3-2s-nps1"))
    pkg = sd.per_cpu[17][2]
    assert 17 in pkg.groups[0] and pkg.groups[0] == sd.llc_span(17)
    assert sorted(x for g in pkg.groups for x in g) == list(pkg.span)


def test_flags_and_imbalance_pct_follow_sd_init() -> None:
    smt, mc, pkg, numa = SchedDomains(preset("zen3-2s-nps1")).per_cpu[0]
    assert smt.flags & SD_SHARE_CPUCAPACITY and smt.flags & SD_SHARE_LLC and smt.imbalance_pct == 110
    assert mc.flags & SD_SHARE_LLC and not mc.flags & SD_SHARE_CPUCAPACITY and mc.imbalance_pct == 117
    assert not pkg.flags & SD_SHARE_LLC and pkg.imbalance_pct == 117
    assert numa.flags & SD_NUMA and numa.cache_nice_tries == 2
    # AMD raises node_reclaim_distance to 32: the cross-socket level (distance 32) keeps fork balancing
    assert numa.flags & SD_BALANCE_FORK and numa.flags & SD_WAKE_AFFINE


def test_far_numa_level_loses_fork_balance_beyond_reclaim_distance() -> None:
    doms = SchedDomains(preset("hsw-8s-288")).per_cpu[0]
    assert [d.numa_distance for d in doms if d.flags & SD_NUMA] == [21, 31]
    assert doms[-2].flags & SD_BALANCE_FORK, "distance 21 <= 30 keeps SD_BALANCE_FORK"
    assert not doms[-1].flags & (SD_BALANCE_FORK | SD_WAKE_AFFINE), "distance 31 > 30 drops them"
    # overlapping groups: the far level's groups are the 3 (overlapping) 1-hop neighbourhoods
    assert len(doms[-1].groups) == 3 and sum(len(g) for g in doms[-1].groups) > 288


def test_imb_numa_nr_is_llcs_per_node_or_an_eighth_of_the_node() -> None:
    assert SchedDomains(preset("zen3-2s-nps1")).per_cpu[0][-1].imb_numa_nr == 8  # 8 LLCs per node
    assert SchedDomains(preset("zen4-9654-2s")).per_cpu[0][-1].imb_numa_nr == 12
    assert SchedDomains(preset("icx-2s")).per_cpu[0][-1].imb_numa_nr == 8  # 64 CPUs / 8
    nps4 = SchedDomains(preset("zen3-2s-nps4")).per_cpu[0]
    assert [d.imb_numa_nr for d in nps4[2:]] == [2, 2, 4]  # scaled by span / first NUMA span


def test_no_mc_scans_the_socket() -> None:
    sd = SchedDomains(preset("zen3-2s-nps1"), no_mc=True)
    assert [d.name for d in sd.per_cpu[0]] == ["SMT", "PKG", "NUMA"]
    assert len(sd.llc_span(0)) == 128 and sd.share_cache(0, 63)
    assert not SchedDomains(preset("zen3-2s-nps1")).share_cache(0, 63)


def test_real_naples_dump_builds_nps4_like_domains() -> None:
    sd = SchedDomains(from_dict(epyc_7451()))
    assert [(d.name, d.weight) for d in sd.per_cpu[0]] == [
        ("SMT", 2),
        ("MC", 6),
        ("NODE", 12),
        ("NUMA", 48),
        ("NUMA", 96),
    ]
    assert sd.per_cpu[0][2].imb_numa_nr == 2


def test_level_between() -> None:
    sd = SchedDomains(preset("zen3-2s-nps1"))
    assert sd.level_between(0, 128) == "smt"
    assert sd.level_between(0, 1) == "llc"
    assert sd.level_between(0, 8) == "pkg"
    assert sd.level_between(0, 64) == "numa"


def test_cost_row_is_a_cost_by_level_index_against_every_cpu() -> None:
    sd = SchedDomains(preset("zen3-2s-nps4"))
    n = sd.topo.nr_cpus
    costs = (0, 10, 20, 30, 40)
    for cpu in (0, 9, 70, 200):
        row = sd.cost_row(costs, cpu)
        assert row == [costs[sd.level_index(c, cpu)] for c in range(n)]
        assert sd.cost_row(costs, cpu) is row, "built once per costs and CPU"
    row0 = sd.cost_row(costs, 0)
    assert (row0[0], row0[128], row0[1], row0[8], row0[64]) == (0, 10, 20, 30, 40)
    assert sd.cost_row((5, 5, 5, 5, 5), 0) == [5] * n
    # equal costs within an LLC: the CPUs of the LLC share one row, still right for each
    flat = (0, 0, 0, 30, 40)
    assert sd.cost_row(flat, 1) is sd.cost_row(flat, 0)
    assert sd.cost_row(flat, 8) is not sd.cost_row(flat, 0)
    for cpu in (0, 1, 128, 8, 64):
        assert sd.cost_row(flat, cpu) == [flat[sd.level_index(c, cpu)] for c in range(n)]


def test_cost_row_matches_level_index_on_every_preset_and_cpu() -> None:
    # cost_row builds a row from one shared by the CPUs of an LLC and node, then patches the
    # core and the CPU itself: the same costs as level_index's tests, whatever the topology
    for name in PRESETS:
        sd = SchedDomains(preset(name))
        n = sd.topo.nr_cpus
        # distinct costs (a row patched per CPU), and hackbench's (0 within the LLC: shared rows)
        for costs in ((1, 10, 100, 1000, 10000), (0, 0, 0, 1000, 10000)):
            for cpu in range(n):
                want = [costs[sd.level_index(c, cpu)] for c in range(n)]
                assert sd.cost_row(costs, cpu) == want, (name, cpu)


def test_index_after_and_sorted_contains_match_bisect_and_in() -> None:
    """The native searches select_idle_cpu and find_idlest_group use on spans and groups give
    bisect_right's index and `in`'s answer, for every probe around every item."""
    for t in [
        (),
        (5,),
        (0, 2),
        (1, 3, 4, 8, 9, 13),
        tuple(range(0, 64, 3)),
        *preset("zen3-2s-nps1").llc_cpus[:2],
    ]:
        for x in range(-1, (t[-1] if t else 0) + 2):
            assert index_after(t, x) == bisect_right(t, x), (t, x)
            assert sorted_contains(t, x) == (x in t), (t, x)


def test_groups_are_the_kernel_walk_for_every_cpu_and_level() -> None:
    """Every CPU's groups at every level are build_sched_groups()'s walk of the span from the
    CPU (wrapping), adding each not yet covered CPU's child span: the build reuses one group
    order (and one Domain) for consecutive CPUs of one group, and must match it everywhere."""
    for name in ("zen3-2s-nps1", "zen3-2s-nps4", "icx-2s"):
        sd = SchedDomains(preset(name))
        for c, doms in enumerate(sd.per_cpu):
            for k, d in enumerate(doms):
                i = d.span.index(c)
                walk: list[tuple[int, ...]] = []
                covered: set[int] = set()
                for x in d.span[i:] + d.span[:i]:
                    if x in covered:
                        continue
                    g = tuple(sorted(sd.per_cpu[x][k - 1].span_set)) if k else (x,)
                    covered.update(g)
                    walk.append(g)
                assert d.groups == tuple(walk), (name, c, d.name)
                assert [sd.group_cpus[gid] for gid in d.group_ids] == list(d.groups)
