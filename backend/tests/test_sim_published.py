"""placemap.sim_published: a scenario matched to the published cells of the calibration file
(../shared/calibration/userspace-hinting-rfc.csv, the RFC's own tables)."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

import pytest

from placemap.sim.calibration import BASELINE, NO_HINT, cell_key, scenario_for
from placemap.sim.published import CHECKS
from placemap.sim_published import Cell, Difference, Index, build, load, lookup, match_features, reversed_pct

CSV = Path(__file__).resolve().parents[2].parent / "shared/calibration/userspace-hinting-rfc.csv"
HEADER = "source,section,machine,benchmark,metric,better,x_name,x,config,value,pct_vs_baseline,uncertain\n"
ZEN3 = "AMD Zen3 2x64C/128T NPS1"


def index() -> Index:
    ix = load(CSV)
    assert ix is not None, f"{CSV} is missing"
    return ix


def schbench(workers: int, hints: list[str], **extra: Any) -> dict[str, Any]:
    return {"topology": "zen3-2s-nps1", "workload": {"kind": "schbench", "workers": workers}, "hints": hints,
            "seed": 1, "duration_ms": 300, **extra}  # fmt: skip


def test_a_schbench_pair_finds_its_published_cell_and_the_run_length_it_differs_in() -> None:
    cells, reason = index().match(schbench(8, ["wake_affine"]))
    assert reason is None
    [c] = cells
    # the RFC's "schbench Wakeup Hint" table, 8 workers: tip 53 us, wake_affine 31 us (+41.50 pct)
    assert (c.section, c.machine, c.x_name, c.x) == ("schbench Wakeup Hint", ZEN3, "workers", 8)
    assert (c.config, c.tip_value, c.value, c.published_pct, c.better) == (
        "wake_affine",
        53.0,
        31.0,
        41.5,
        "lower",
    )
    assert c.significant and not c.uncertain
    # calibrate runs schbench for the published 30 s; this scenario 300 ms
    assert [(d.field, d.calibration, d.yours) for d in c.differs] == [("duration_ms", 30000, 300)]
    # the run it differs from, to run instead: the calibration's own
    assert (c.model_workload, c.model_duration_ms) == (
        {"messengers": 1, "workers": 8, "cputime_us": 30000, "sleeptime_us": 30000},
        30000,
    )
    [same] = index().match(schbench(8, ["wake_affine"], duration_ms=30000))[0]
    assert same.differs == ()


def test_hints_match_in_any_order_and_other_workload_parameters_are_named() -> None:
    hints = ["wake_affine", "fork_affine"]
    sc = {"topology": "icx-2s", "workload": {"kind": "hackbench", "groups": 4}, "hints": hints}
    [c] = index().match(sc)[0]
    assert (c.section, c.config) == ("Hackbench Combination of hint Test", "fork_affine+wake_affine")
    assert (c.tip_value, c.value, c.published_pct) == (4.5, 4.16, 7.55)
    # the form's hackbench defaults (processes, sockets, 100 loops) against the calibration's run;
    # a hackbench runs to its end, so its duration is no difference
    assert [(d.field, d.calibration, d.yours) for d in c.differs] == [
        ("workload.mode", "thread", "process"),
        ("workload.ipc", "pipe", "socket"),
        ("workload.loops", 50, 100),
    ]


def test_stream_has_a_cell_per_kernel_and_table() -> None:
    stream = {"kind": "stream", "threads": 4}
    cells, _ = index().match(
        {"topology": "icx-2s", "workload": stream, "hints": ["fork_spread"], "duration_ms": 300}
    )
    tables = ("Stream - 10 runs", "Stream - 100 runs")
    kernels = ("Add", "Copy", "Scale", "Triad")
    assert sorted((c.section, c.benchmark) for c in cells) == [
        (t, f"stream-{k}") for t in tables for k in kernels
    ]
    assert all(c.significant and c.published_pct > 0 and c.tip_value and c.differs == () for c in cells)


def test_no_cell_says_why() -> None:
    ix = index()
    with_sis_short = schbench(8, ["wake_affine"], features={"SIS_SHORT": True})
    assert ix.match(with_sis_short) == ([], "the published runs have the default features")
    # a feature set to its default changes nothing
    assert ix.match(schbench(8, ["wake_affine"], features={"SIS_UTIL": True}))[0]
    no_hint = "no hint set: the published tables give the hints' effects against tip"
    assert ix.match(schbench(8, [])) == ([], no_hint)
    not_published = (
        "no published cell for schbench on zen3-2s-nps1 at workers 3 with wake_affine "
        "(published at workers 1, 2, 4, 8, 16, 32, 64, 128, 256, 512)"
    )
    assert ix.match(schbench(3, ["wake_affine"])) == ([], not_published)
    # a hint no table has: no list of workers to offer
    assert ix.match(schbench(8, ["wake_wide"])) == (
        [],
        "no published cell for schbench on zen3-2s-nps1 at workers 8 with wake_wide",
    )
    presets = "the published tables are for the presets icx-2s, zen3-2s-nps1"
    assert ix.match({**schbench(8, ["wake_affine"]), "topology": "zen3-2s-nps4"}) == ([], presets)
    assert ix.match({**schbench(8, ["wake_affine"]), "topology": {"cpus": []}}) == ([], presets)
    ctx = {"topology": "icx-2s", "workload": {"kind": "ctxswitch"}, "hints": ["wake_affine"]}
    assert ix.match(ctx) == ([], "no published table has ctxswitch")


def test_every_hint_cell_of_the_file_is_found_from_its_calibration_run_with_no_difference() -> None:
    with CSV.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ix = index()
    found: dict[tuple[str, ...], float] = {}
    for row in rows:
        key = cell_key(row)
        if key is None or row["config"] == BASELINE or row["config"] in NO_HINT:
            continue
        cells, reason = ix.match(scenario_for(key, 1))
        assert reason is None, row
        where = (row["machine"], row["section"], row["benchmark"], row["config"])
        [mine] = [c for c in cells if (c.machine, c.section, c.benchmark, c.config) == where]
        assert mine.differs == () and mine.published_pct == float(row["pct_vs_baseline"])
        found[(*where, row["x"])] = mine.published_pct
    # every hint cell of the two machines' tables, each once (228 runs: Stream's 8 tables share theirs)
    assert len(found) == sum(len(v) for v in ix.cells.values()) == 270 and len(ix.cells) == 228


def test_bad_rows_are_skipped_and_counted_and_a_missing_tip_is_none() -> None:
    text = HEADER + (
        f"s,T,{ZEN3},schbench,p99,lower,workers,8,tip,53,0,no\n"
        f"s,T,{ZEN3},schbench,p99,lower,workers,8,wake_affine,31,41.5,yes\n"
        f"s,T,{ZEN3},schbench,p99,lower,workers,16,wake_affine,2636,not-a-number,no\n"
        f"s,T,{ZEN3},schbench,p99,lower,workers,32,wake_affine,15696,-13431.03,no\n"
        f"s,T,{ZEN3},schbench,p99,lower,workers,64"  # cut short
    )
    ix = build("t.csv", io.StringIO(text))
    assert ix.skipped_rows == 2
    [c8] = ix.match(schbench(8, ["wake_affine"]))[0]
    assert c8.uncertain and c8.tip_value == 53.0
    [c32] = ix.match(schbench(32, ["wake_affine"]))[0]
    assert c32.tip_value is None and c32.published_pct == -13431.03
    assert ix.match(schbench(16, ["wake_affine"]))[0] == []


def test_load_reads_a_changed_file_again_and_none_when_absent(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    assert load(path) is None
    path.write_text(HEADER + f"s,T,{ZEN3},schbench,p99,lower,workers,8,wake_affine,31,41.5,no\n")
    first = load(path)
    assert first is not None and first.match(schbench(8, ["wake_affine"]))[0][0].published_pct == 41.5
    path.write_text(HEADER + f"s,T,{ZEN3},schbench,p99,lower,workers,8,wake_affine,30,43.0,no\n")
    os.utime(path, ns=(1, 2_000_000_000))  # a different mtime, whatever the clock's resolution
    again = load(path)
    assert again is not None and again.match(schbench(8, ["wake_affine"]))[0][0].published_pct == 43.0


def netperf(threads: int, test: str = "tcp_rr", **features: bool | int) -> dict[str, Any]:
    return {"topology": "spr-2s-224", "workload": {"kind": "netperf", "test": test, "threads": threads},
            "features": features, "duration_ms": 300}  # fmt: skip


def feature_cells(scenario: dict[str, Any]) -> list[Cell]:
    got = match_features(scenario)
    assert got is not None and got[1] is None, got
    return got[0]


def test_a_feature_pair_is_read_against_the_features_own_published_effects() -> None:
    """SIS_SHORT on the authors' 224 CPUs at 100% load (netperf TCP_RR, 224 threads): +665.4%
    (placemap.sim.published, Chen Yu's v6); UDP_RR at the same load is another benchmark."""
    [c] = feature_cells(netperf(224, SIS_SHORT=True))
    assert (c.machine, c.benchmark, c.x_name, c.x, c.config) == (
        "spr-2s-224",
        "netperf",
        "threads",
        224,
        "SIS_SHORT",
    )
    assert (c.published_pct, c.better, c.section, c.compared_by) == (
        665.4,
        "higher",
        "100% load",
        "scripts/bench simfeatures",
    )
    assert c.reference.startswith("373e6886e274f198608fa1b5f1c254e32b43845d") and c.tip_value is None
    assert [(d.field, d.calibration, d.yours) for d in c.differs] == [
        ("workload.warmup_ms", 2000, 0),
        ("duration_ms", 2300, 300),
    ]
    assert (c.model_workload, c.model_duration_ms) == (
        {"test": "tcp_rr", "threads": 224, "warmup_ms": 2000},
        2300,
    )
    [udp] = feature_cells(netperf(224, "udp_rr", SIS_SHORT=True))
    assert udp.published_pct == 135.0
    # STEAL on the 8-socket Haswell was published with the node limit lifted to 8: only that pair
    hsw = {"topology": "hsw-8s-288", "workload": {"kind": "hackbench", "groups": 16, "loops": 500}}
    [steal] = feature_cells({**hsw, "features": {"STEAL": True, "steal_node_limit": 8}})
    assert (steal.config, steal.published_pct, steal.better, steal.differs) == (
        "STEAL, steal_node_limit 8",
        -29.8,
        "lower",
        (),
    )
    assert match_features({**hsw, "features": {"STEAL": True}}) == (
        [],
        "the feature change's published effects are for hackbench on bdw-1s-20",
    )


def test_a_feature_pair_without_a_published_effect_says_where_there_are_some() -> None:
    assert match_features(netperf(1, SIS_SHORT=True)) == (
        [],
        "published at threads 168 (tcp_rr), threads 224 (tcp_rr), threads 224 (udp_rr), "
        "threads 448 (tcp_rr); here threads 1 (tcp_rr)",
    )
    assert match_features(netperf(224, NO_MC=True)) == (
        [],
        "no published effect of this feature change on its own",
    )
    # a hint with the feature: the tables' matter (they say the published runs have default features)
    assert match_features({**netperf(224, SIS_SHORT=True), "hints": ["wake_affine"]}) is None
    assert match_features(netperf(224)) is None
    assert all(c.base for c in CHECKS if c.feature.startswith(("SIS_UTIL", "NUMA")))


def test_a_check_of_the_default_kernel_against_an_older_one_is_read_in_reverse() -> None:
    """SIS_UTIL against SIS_PROP at 200% load: +197.3% (netperf TCP_RR). A pair turning SIS_UTIL
    off measures the other way round: with throughputs u and p, u = 2.973 p, so p = u / 2.973, i.e.
    -66.36%. The NUMA rework against the 25% rule on NPS4 Stream, +172%: the legacy rule -63.24%."""
    [c] = feature_cells({**netperf(448, SIS_UTIL=False), "duration_ms": 2300})
    assert (c.config, c.published_pct, c.significant, c.better) == ("no SIS_UTIL", -66.36, True, "higher")
    assert c.section == "200% load; published as SIS_UTIL against this: +197.3%, read in reverse"
    assert c.differs == (Difference("workload.warmup_ms", 2000, 0),)
    stream = {"topology": "zen3-2s-nps4", "workload": {"kind": "stream", "threads": 16}, "duration_ms": 1000}
    [numa] = feature_cells({**stream, "features": {"NUMA_IMB_LEGACY": True}})
    assert (numa.config, numa.published_pct, numa.differs) == ("NUMA_IMB_LEGACY", -63.24, ())
    # the conversion both ways: a runtime 20% shorter is the old one 25% longer
    assert reversed_pct(20.0, "lower") == -25.0 and reversed_pct(25.0, "higher") == -20.0
    assert reversed_pct(reversed_pct(13.0, "higher"), "higher") == pytest.approx(13.0)


def test_lookup_reads_the_tables_only_for_a_hints_pair(tmp_path: Path) -> None:
    absent = tmp_path / "absent.csv"
    cells, reason, index = lookup(absent, netperf(224, SIS_SHORT=True))
    assert [c.published_pct for c in cells] == [665.4] and reason is None and index is None
    assert lookup(absent, schbench(8, ["wake_affine"])) == ([], None, None)
    cells, reason, index = lookup(CSV, schbench(8, ["wake_affine"]))
    assert [c.published_pct for c in cells] == [41.5] and index is not None
