"""The cost model's parameters: named, documented, and shaped as the model says."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import placemap.sim
from placemap.sim import cost
from placemap.sim.domains import LEVEL_NAMES


def test_every_parameter_is_documented_by_a_comment_above_it_or_its_group() -> None:
    # the source next to the package's __init__ (cost.__file__ is a .so in the compiled build)
    lines = (Path(placemap.sim.__file__).parent / "cost.py").read_text().splitlines()
    assert len(cost.params()) >= 20
    for name in cost.params():
        i = next(n for n, line in enumerate(lines) if re.match(rf"{name}(: Final)? = ", line))
        while i > 0 and re.match(r"[A-Z_]+(: Final)? = ", lines[i - 1]):
            i -= 1  # a group of related parameters shares one comment
        assert lines[i - 1].startswith("# "), f"{name} has no source or reasoning"


def test_memory_bandwidth_share_falls_with_sharers_and_never_exceeds_one() -> None:
    speeds = [cost.mem_speed(n, n, 8, 1) for n in range(1, 17)]
    assert 0 < speeds[-1] < speeds[0] <= 1.0
    assert all(a >= b for a, b in pairwise(speeds))
    # a split 8-core LLC binds before a socket does
    assert cost.mem_speed(4, 4, 8, 1) < cost.mem_speed(4, 4, 32, 1)
    # an NPS4 node has a quarter of the socket's channels
    assert cost.mem_speed(8, 8, 32, 4) < cost.mem_speed(8, 8, 32, 1)


def test_distance_costs_grow_with_distance() -> None:
    for f in (cost.wake_transfer_ns, cost.wake_ipi_ns, lambda lvl: cost.cold_cache_ns(lvl, 256)):
        vals = [f(lvl) for lvl in ("", "llc", "pkg", "numa")]
        assert vals == sorted(vals) and vals[0] == 0


def test_cold_cache_grows_with_the_working_set_up_to_the_cache_size() -> None:
    assert cost.cold_cache_ns("pkg", 64) < cost.cold_cache_ns("pkg", 1024)
    assert cost.cold_cache_ns("pkg", 10**7) == cost.cold_cache_ns("pkg", cost.COLD_MAX_KB)
    assert cost.cold_cache_ns("llc", 10**7) == cost.cold_cache_ns("llc", cost.L2_KB)
    assert cost.cold_cache_ns("smt", 10**7) == 0


def test_streams_on_one_node_slow_each_other_long_before_the_ceiling() -> None:
    # loaded latency: two streams on a node each get less than one alone, and one stream per
    # node beats two on one node (why fork_spread helps Stream at 2 threads)
    one = cost.mem_speed(1, 1, 32, 1, 32)
    two = cost.mem_speed(2, 2, 32, 1, 32)
    assert two < one <= 1.0
    assert 2 * one > 1.05 * 2 * two


def test_a_unified_llc_has_no_link_ceiling_of_its_own() -> None:
    # the same 8-core LLC: as a whole node only the channels bind; as part of a bigger node
    # (a split LLC) its link binds too
    assert cost.mem_speed(8, 8, 8, 1, 8) > cost.mem_speed(8, 8, 8, 1, 32)


def test_cold_cache_ns_at_is_cold_cache_ns_by_level_index() -> None:
    """The engine's cost of a migration by level index is cold_cache_ns of the level's name."""
    for i, level in enumerate(LEVEL_NAMES):
        for wss in (0, 64, 256, cost.L2_KB, cost.COLD_MAX_KB, 10**7):
            assert cost.cold_cache_ns_at(i, wss) == cost.cold_cache_ns(level, wss), (level, wss)
