"""Sweeps (placemap.sim_sweep, `placemap sim --sweep`): validation naming the field, the turns read
from the changes, and a real wake_affine sweep of schbench whose rows are each point's own run and
whose turns are the model's and the published tables'."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from placemap.cli import main
from placemap.replay.ingest import Ingestor
from placemap.settings import DEFAULT_CALIBRATION_CSV
from placemap.sim.calibration import scenario_for
from placemap.sim.errors import ScenarioError
from placemap.sim.scenario import run_scenario
from placemap.sim_pair import change_pct
from placemap.sim_profile import profile_from_table
from placemap.sim_sweep import (
    MAX_POINTS,
    MAX_RUNS,
    Sweep,
    distinct,
    llc_spread,
    parse_arg,
    parse_sweep,
    scenarios,
    summarize,
    turns,
)
from placemap.sim_toggle import ALL_TOGGLES, toggle
from placemap.store import Store
from tests.collector import collector_binary
from tests.ftrace_lines import G4
from tests.vm2 import VM2

SCHBENCH: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 16},
    "hints": ["wake_affine"],
    "seed": 1,
    "duration_ms": 1000,
}
WORKERS = [4, 8, 16, 32]


def scenario_file(tmp_path: Path, scenario: dict[str, Any]) -> Path:
    """The scenario as the file `placemap sim` reads."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps(scenario))
    return f


def refused(spec: Any, scenario: dict[str, Any] = SCHBENCH) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        parse_sweep(scenario, spec)
    return info.value


def test_a_sweep_defaults_to_the_parameter_the_tables_vary_and_orders_its_values() -> None:
    sw = parse_sweep(SCHBENCH, {"values": [32, 4, 16, 4, 8], "baseline": True})
    assert sw == Sweep(param="workers", values=(4, 8, 16, 32), baseline=True)
    assert parse_sweep({**SCHBENCH, "workload": {"kind": "hackbench"}}, {"values": [1, 2]}).param == "groups"
    assert parse_arg(SCHBENCH, "cputime_us=100,200", baseline=False).param == "cputime_us"
    assert parse_arg(SCHBENCH, "2,1", baseline=False).values == (1, 2)
    runs = scenarios(SCHBENCH, sw)
    assert [(s["workload"]["workers"], s.get("hints")) for s in runs[:2]] == [(4, ["wake_affine"]), (4, None)]
    assert len(runs) == 8 and SCHBENCH["workload"]["workers"] == 16  # the scenario is not changed


def test_a_bad_sweep_names_its_field() -> None:
    assert refused([1, 2]).field == "sweep"
    assert refused({"values": [1, 2], "step": 2}).field == "sweep.step"
    e = refused({"param": "mode", "values": [1, 2]}, {**SCHBENCH, "workload": {"kind": "hackbench"}})
    assert e.field == "sweep.param" and "groups, loops" in e.message  # a choice is no integer parameter
    assert refused({"param": "clients", "values": [1, 2]}).field == "sweep.param"
    assert refused({"values": "1,2"}).field == "sweep.values"
    assert refused({"values": [True, 2]}).field == "sweep.values"
    assert refused({"values": [4, 4]}).field == "sweep.values"
    assert refused({"values": list(range(1, MAX_POINTS + 2))}).field == "sweep.values"
    e = refused({"values": [1, 5000]})
    assert e.field == "sweep.values" and "1..4096" in e.message and "5000" in e.message
    e = refused({"values": [1, 2], "baseline": True}, {**SCHBENCH, "hints": []})
    assert e.field == "sweep.baseline"
    e = refused({"values": [1, 2]}, {**SCHBENCH, "workload": {"kind": "trace", "recording": "r"}})
    assert e.field == "sweep.param" and "a trace replay has no workload parameter" in e.message
    e = refused({"values": [1, 2]}, {**SCHBENCH, "workload": {"kind": "nope"}})
    assert e.field == "sweep" and "'nope'" in e.message
    with pytest.raises(ScenarioError) as info:
        parse_arg(SCHBENCH, "workers=4,eight", baseline=False)
    assert info.value.field == "sweep.values"


def test_turns_are_read_between_opposite_changes_beyond_five_percent() -> None:
    assert turns([(1, 20.0), (2, 3.0), (4, None), (8, -10.0)]) == [
        {
            "between": [1, 8],
            "from": "better",
            "to": "worse",
            "from_pct": 20.0,
            "to_pct": -10.0,
            "seed_decides": None,
        }
    ]
    assert turns([(1, 20.0), (2, 6.0), (4, 4.9), (8, -4.9)]) == []  # within 5% is no way
    got = turns([(1, -30.0), (2, 10.0), (4, 12.0), (8, -7.0)])
    assert [(t["between"], t["from"], t["to"]) for t in got] == [
        ([1, 2], "worse", "better"),
        ([4, 8], "better", "worse"),
    ]


def test_llc_spread_weighs_each_llc_by_its_cpus() -> None:
    def util(*llcs: tuple[int, float]) -> dict[str, Any]:
        return {"series": [{"llc": i, "cpus": c, "mean": m, "util": [m]} for i, (c, m) in enumerate(llcs)]}

    # busy CPU time 8, 4, 0.8, 0: the first two carry 12 of 12.8 (94%)
    assert llc_spread(util((16, 0.5), (16, 0.25), (16, 0.05), (16, 0.0))) == {
        "carrying": 2, "llcs": 4, "busiest_share": 8 / 12.8
    }  # fmt: skip
    assert llc_spread(util((8, 0.5), (64, 0.4)))["busiest_share"] == 25.6 / 29.6  # type: ignore[index]
    assert llc_spread(util((16, 0.0))) is None and llc_spread(None) is None


def fake(value: float, complete: bool = True) -> dict[str, Any]:
    """A run's result as summarize reads it (the unit tests of the seeds' bookkeeping)."""
    return {
        "metric": {"name": "runtime_s", "value": value, "better": "lower"},
        "sim": {"complete": complete, "events": 10},
        "counters": {"cpu_utilization": 0.5, "migrations": {"total": 3}},
    }


def test_a_sweep_on_seeds_runs_each_pair_on_each_seed_and_reads_the_median() -> None:
    hb = {
        "topology": "icx-2s",
        "workload": {"kind": "hackbench", "groups": 1},
        "hints": ["wake_hold"],
        "seed": 5,
    }
    assert refused({"values": [1, 2], "seeds": 2}, hb).field == "sweep.seeds"  # seeds compare changes
    assert refused({"values": [1, 2], "baseline": True, "seeds": 9}, hb).field == "sweep.seeds"
    sw = parse_sweep(hb, {"values": [2, 1], "baseline": True, "seeds": 3})
    runs = scenarios(hb, sw)
    assert [(s["workload"]["groups"], s["seed"], "hints" in s) for s in runs[:6]] == [
        (1, 5, True), (1, 5, False), (1, 6, True), (1, 6, False), (1, 7, True), (1, 7, False)
    ]  # fmt: skip
    assert len(runs) == 12
    # x=1: better by 50%, 20% and worse by 10% on the three seeds; x=2: worse by 100% on each, an
    # incomplete baseline on the third
    results = [fake(1), fake(2), fake(4), fake(5), fake(11), fake(10)]
    results += [fake(2), fake(1), fake(2), fake(1), fake(2), fake(1, complete=False)]
    out = summarize(hb, sw, results, None)
    one, two = out["rows"]
    assert (
        one["changes"] == [50.0, 20.0, -10.0] and one["change_pct"] == 20.0 and one["direction"] == "better"
    )
    assert one["seeds"]["verdict"].startswith("the seed decides") and not one["seeds"]["stable"]
    assert two["changes"] == [-100.0, -100.0, None] and two["change_pct"] == -100.0 and two["seeds"]["stable"]
    assert (one["value"], one["baseline"]) == (1, 2)  # the first seed's
    assert out["seeds"] == 3
    assert [(t["between"], t["seed_decides"]) for t in out["turns"]] == [([1, 2], True)]
    with pytest.raises(ValueError, match="12 results"):
        summarize(hb, parse_sweep(hb, {"values": [1, 2], "baseline": True, "seeds": 4}), results, None)


def _direct() -> list[dict[str, Any]]:
    sw = parse_sweep(SCHBENCH, {"values": WORKERS, "baseline": True})
    return [run_scenario(s, wall_clock=False) for s in scenarios(SCHBENCH, sw)]


@pytest.fixture(scope="module")
def direct() -> list[dict[str, Any]]:
    """Every point's run and baseline, run one by one: what the sweep must report."""
    return _direct()


def test_a_wake_affine_sweep_turns_where_the_model_collapses_and_the_tables_turn_earlier(
    direct: list[dict[str, Any]],
) -> None:
    sw = parse_sweep(SCHBENCH, {"values": WORKERS, "baseline": True})
    out = summarize(SCHBENCH, sw, direct, DEFAULT_CALIBRATION_CSV)
    assert [r["x"] for r in out["rows"]] == WORKERS
    for i, r in enumerate(out["rows"]):
        run, base = direct[2 * i], direct[2 * i + 1]
        assert r["value"] == run["metric"]["value"] and r["baseline"] == base["metric"]["value"]
        assert r["change_pct"] == change_pct("lower", base["metric"]["value"], run["metric"]["value"])
        assert r["cpu_utilization"] == run["counters"]["cpu_utilization"]
    # the model: the herd fits the messenger's LLC through 16 workers and collapses at 32
    # (docs/calibration.md, schbench Zen3); the published collapse comes one step earlier
    assert [r["direction"] for r in out["rows"]] == ["better", "better", "better", "worse"]
    assert [t["between"] for t in out["turns"]] == [[16, 32]]
    assert [t["between"] for t in out["published_turns"]] == [[8, 16]]
    pub = {r["x"]: r["published"][0]["published_pct"] for r in out["rows"]}
    assert pub[16] < -3000 and pub[8] > 5  # the tables' -3511% and +41.5%
    assert out["published_error"] is None
    assert out["events"] == sum(r["sim"]["events"] for r in direct)
    # why it turns: wake_affine holds the 16 workers' work on the messenger's LLC, and 32 spill over
    # half the machine; tip spreads them over the LLCs from the start
    carrying = {
        r["x"]: (r["llc_spread"]["carrying"], r["baseline_llc_spread"]["carrying"]) for r in out["rows"]
    }
    assert carrying[16][0] == 1 and carrying[16][1] > 8 and carrying[32][0] > 4
    assert out["rows"][2]["llc_spread"] == llc_spread(direct[4]["llc_util"])
    # where the hint starts to matter: at once, in the model and the tables
    assert out["onset"] == {"x": 4, "direction": "better", "pct": out["rows"][0]["change_pct"]}
    assert out["published_onset"] is not None and out["published_onset"]["x"] == 4


def test_several_tables_read_by_their_median_and_the_onset_is_the_first_past_five_percent() -> None:
    """icx-2s Stream: eight tables (the kernels and runs) publish each thread count; fork_spread's
    gain passes 5% from 2 threads on, in the tables and in the model."""
    st = {
        "topology": "icx-2s",
        "workload": {"kind": "stream"},
        "hints": ["fork_spread"],
        "seed": 1,
        "duration_ms": 300,
    }
    sw = parse_sweep(st, {"values": [1, 2, 4], "baseline": True})
    out = summarize(
        st, sw, [run_scenario(s, wall_clock=False) for s in scenarios(st, sw)], DEFAULT_CALIBRATION_CSV
    )
    for r in out["rows"]:
        pcts = sorted(c["published_pct"] for c in r["published"])
        assert len(pcts) == 8
        assert r["published_pct"] == (pcts[3] + pcts[4]) / 2
    assert out["rows"][0]["published_pct"] < 0 < out["rows"][1]["published_pct"]  # -1.9%, then +11.3%
    assert out["published_onset"] == {"x": 2, "direction": "better", "pct": out["rows"][1]["published_pct"]}
    assert out["onset"] is not None and out["onset"]["x"] == 2 and out["onset"]["direction"] == "better"
    assert out["published_turns"] == []  # -1.9% is within 5%: no turn


def test_a_sweep_without_tables_still_reports_its_runs(direct: list[dict[str, Any]], tmp_path: Path) -> None:
    sw = parse_sweep(SCHBENCH, {"values": WORKERS, "baseline": True})
    bad = tmp_path / "t.csv"
    bad.write_bytes(b"\xff\xfe not a table")
    out = summarize(SCHBENCH, sw, direct, bad)
    assert out["published_error"] is not None and str(bad) in out["published_error"]
    assert [t["between"] for t in out["turns"]] == [[16, 32]]
    assert all(r["published"] == [] for r in out["rows"]) and out["published_turns"] == []
    assert summarize(SCHBENCH, sw, direct, None)["published_error"] is None


def test_the_command_line_sweep_prints_the_runs_and_the_turns(
    direct: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = scenario_file(tmp_path, SCHBENCH)
    assert main(["sim", str(f), "--sweep", "workers=4,8,16,32", "--baseline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["value"], r["baseline"]) for r in out["rows"]] == [
        (direct[i]["metric"]["value"], direct[i + 1]["metric"]["value"]) for i in range(0, 8, 2)
    ]
    assert main(["sim", str(f), "--sweep", "4,8,16,32", "--baseline"]) == 0
    text = capsys.readouterr().out
    assert "the change turns between 16 and 32 workers: better" in text
    assert "published: it turns between 8 and 16 workers" in text
    assert "the change first passes 5% at 4 workers: better" in text
    assert "LLCs 90%" in text.splitlines()[1] and "1 vs " in text.splitlines()[4]  # 16 workers
    assert main(["sim", str(f), "--sweep", "4,8", "--baseline", "--seeds", "2", "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert two["seeds"] == 2 and [len(r["changes"]) for r in two["rows"]] == [2, 2]
    assert two["rows"][0]["changes"][0] == out["rows"][0]["change_pct"]  # seed 1 is the one-seed sweep
    assert main(["sim", str(f), "--sweep", "4,8"]) == 0  # the curve alone
    text = capsys.readouterr().out
    assert "baseline" not in text.splitlines()[1] and "turns" not in text


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--sweep", "4,5000", "--baseline"], "sweep.values"),
        (["--sweep", "4,8", "--decisions"], "--sweep does not take --decisions"),
        (["--sweep", "4,8", "--seeds", "3"], "--seeds runs the pair of --baseline"),
        (["--sweep", "threads=4,8"], "sweep.param"),
    ],
)
def test_a_bad_command_line_sweep_is_refused_before_it_runs(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = scenario_file(tmp_path, SCHBENCH)
    assert main(["sim", str(f), *argv]) == 2
    out = capsys.readouterr()
    assert out.out == "" and needle in out.err


TBENCH: dict[str, Any] = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "tbench", "clients": 32},
    "hints": ["fork_affine"],
    "seed": 1,
    "duration_ms": 150,
}


def test_a_machine_sweep_keeps_the_order_given_and_names_bad_presets() -> None:
    sw = parse_sweep(SCHBENCH, {"param": "topology", "values": ["icx-2s", "zen3-2s-nps4", "icx-2s"]})
    assert sw.values == ("icx-2s", "zen3-2s-nps4") and not sw.ordered
    assert parse_arg(SCHBENCH, "topology=zen3-2s-nps4, icx-2s", baseline=True).values == (
        "zen3-2s-nps4",
        "icx-2s",
    )
    runs = scenarios(
        SCHBENCH,
        parse_sweep(SCHBENCH, {"param": "topology", "values": ["icx-2s", "bdw-1s-20"], "baseline": True}),
    )
    assert [(s["topology"], s.get("hints"), s["workload"]["workers"]) for s in runs] == [
        ("icx-2s", ["wake_affine"], 16),
        ("icx-2s", None, 16),
        ("bdw-1s-20", ["wake_affine"], 16),
        ("bdw-1s-20", None, 16),
    ]
    e = refused({"param": "topology", "values": ["icx-2s", "zen5"]})
    assert e.field == "sweep.values" and "'zen5'" in e.message and "zen3-2s-nps4" in e.message
    assert refused({"param": "topology", "values": ["icx-2s", 4]}).field == "sweep.values"
    assert refused({"param": "topology", "values": ["icx-2s", "icx-2s"]}).field == "sweep.values"
    assert "or topology" in refused({"param": "machines", "values": [1, 2]}).message


def test_a_machine_sweep_reads_where_the_hint_helps_and_hurts_beside_the_tables() -> None:
    """fork_affine at 32 tbench clients: it crowds the clients into one LLC of zen3's sixteen and
    loses there, as published (-14.7%); icx-2s's two 32-core LLCs hold them either way, and both
    the model and the table see no change."""
    sw = parse_arg(TBENCH, "topology=zen3-2s-nps1,icx-2s", baseline=True)
    runs = [run_scenario(s, wall_clock=False) for s in scenarios(TBENCH, sw)]
    out = summarize(TBENCH, sw, runs, DEFAULT_CALIBRATION_CSV)
    assert out["ordered"] is False and out["values"] == ["zen3-2s-nps1", "icx-2s"]
    for i, r in enumerate(out["rows"]):
        assert r["x"] == sw.values[i]
        assert (
            r["value"] == runs[2 * i]["metric"]["value"]
            and r["baseline"] == runs[2 * i + 1]["metric"]["value"]
        )
        assert r["llc_spread"]["llcs"] == (16 if i == 0 else 2)  # each row is its own machine's run
    assert out["ways"] == {"better": [], "worse": ["zen3-2s-nps1"], "same": ["icx-2s"]}
    assert out["published_ways"] == out["ways"]
    assert out["rows"][0]["published_pct"] < -5 < out["rows"][1]["published_pct"] < 5
    # machines run along no scale: nothing turns between them
    assert out["turns"] == out["published_turns"] == [] and out["onset"] is None is out["published_onset"]


def test_the_command_line_machine_sweep_prints_the_ways(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = scenario_file(tmp_path, TBENCH)
    assert main(["sim", str(f), "--sweep", "topology=zen3-2s-nps1,icx-2s", "--baseline"]) == 0
    text = capsys.readouterr().out
    assert "the change, beyond 5%: worse on zen3-2s-nps1; same on icx-2s" in text
    assert "published: worse on zen3-2s-nps1; same on icx-2s" in text
    assert "turns" not in text and "first passes" not in text
    assert main(["sim", str(f), "--sweep", "topology=zen3-2s-nps1,zen9", "--baseline"]) == 2
    assert "sweep.values" in capsys.readouterr().err


def test_a_toggle_is_hints_and_feature_changes_away_from_the_default() -> None:
    assert toggle("fork_affine+wake_affine") == (["fork_affine", "wake_affine"], {})
    assert toggle("NO_SIS_UTIL") == ([], {"SIS_UTIL": False})  # on by default: NO_ turns it off
    assert toggle("NO_MC") == ([], {"NO_MC": True})  # a feature whose own name starts NO_
    assert toggle("STEAL + steal_node_limit=8") == ([], {"STEAL": True, "steal_node_limit": 8})
    for bad, why in [
        ("SIS_UTIL", "is the default"),
        ("steal_node_limit=2", "is the default"),
        ("fork_affine+fork_spread", "only one fork hint"),
        ("wake_wide=1", "is no toggle"),
        ("sis_short", "is no toggle"),
    ]:
        with pytest.raises(ScenarioError) as info:
            toggle(bad)
        assert info.value.field == "sweep.values" and why in info.value.message, bad
    # `all`: every hint and every feature switched away from its default, each on its own
    assert len(ALL_TOGGLES) == 13 and "NO_SIS_UTIL" in ALL_TOGGLES and "SIS_UTIL" not in ALL_TOGGLES
    assert parse_sweep(SCHBENCH, {"param": "toggle", "values": ["all"]}).values == ALL_TOGGLES
    for t in ALL_TOGGLES:
        hints, features = toggle(t)
        assert len(hints) + len(features) == 1, t
    assert refused({"param": "toggle", "values": ["wake_hold"]}).field == "sweep.values"  # one is no sweep


def test_a_toggle_sweep_replaces_the_scenarios_toggles_and_runs_the_shared_baseline_once() -> None:
    sc = {**SCHBENCH, "features": {"SIS_SHORT": True}}
    sw = parse_arg(sc, "toggle=wake_hold,STEAL+steal_node_limit=8", baseline=False, seeds=1)
    assert sw.baseline and not sw.ordered  # a toggle's effect is against the baseline, always
    runs = scenarios(sc, sw)
    assert [(r.get("hints"), r.get("features")) for r in runs] == [
        (["wake_hold"], None),
        (None, None),
        (None, {"STEAL": True, "steal_node_limit": 8}),
        (None, None),
    ]
    todo, at = distinct(runs)
    assert len(todo) == 3 and at == [0, 1, 2, 1]


def test_a_toggle_sweep_reads_each_features_published_effect() -> None:
    """zen4-9654-2s hackbench, 32 thread groups over pipes: Desnoyers' RFC publishes
    UTIL_FITS_CAPACITY +18%, SELECT_BIAS_PREV 0% and the two together +40%; the model helps
    with the first and the pair beyond 5%, and leaves SELECT_BIAS_PREV alone within it."""
    sc = {
        "topology": "zen4-9654-2s",
        "workload": {"kind": "hackbench", "groups": 32, "mode": "thread", "ipc": "pipe", "loops": 1000},
        "seed": 1,
        "duration_ms": 20000,
    }
    sw = parse_arg(sc, "toggle=UTIL_FITS_CAPACITY,SELECT_BIAS_PREV,UTIL_FITS_CAPACITY+SELECT_BIAS_PREV", True)
    todo, at = distinct(scenarios(sc, sw))
    ran = [run_scenario(s, wall_clock=False) for s in todo]
    out = summarize(sc, sw, [ran[i] for i in at], DEFAULT_CALIBRATION_CSV)
    base = ran[1]["metric"]["value"]
    for r, run in zip(out["rows"], (ran[0], ran[2], ran[3]), strict=True):
        assert r["value"] == run["metric"]["value"] and r["baseline"] == base
    assert [r["published_pct"] for r in out["rows"]] == [18.0, 0.0, 40.0]
    assert (
        out["ways"]
        == out["published_ways"]
        == {
            "better": ["UTIL_FITS_CAPACITY", "UTIL_FITS_CAPACITY+SELECT_BIAS_PREV"],
            "worse": [],
            "same": ["SELECT_BIAS_PREV"],
        }
    )
    assert out["events"] == sum(r["sim"]["events"] for r in ran)  # the baseline counted once
    assert out["turns"] == [] and out["onset"] is None


def test_the_command_line_toggle_sweep_compares_without_being_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = scenario_file(tmp_path, SCHBENCH)
    assert main(["sim", str(f), "--sweep", "toggle=wake_hold,NO_SIS_UTIL", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tip = run_scenario({k: v for k, v in SCHBENCH.items() if k != "hints"}, wall_clock=False)
    assert [r["baseline"] for r in out["rows"]] == [tip["metric"]["value"]] * 2
    assert main(["sim", str(f), "--sweep", "toggle=wake_hold,NO_SIS_UTIL"]) == 0
    text = capsys.readouterr().out
    assert "each beside its baseline" in text.splitlines()[0] and "the change, beyond 5%:" in text
    assert main(["sim", str(f), "--sweep", "toggle=wake_hold,SIS_UTIL"]) == 2
    assert "'SIS_UTIL' is the default" in capsys.readouterr().err


def test_a_saved_command_line_sweep_is_stored_with_its_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = scenario_file(tmp_path, TBENCH)
    db = tmp_path / "p.db"
    argv = ["sim", str(f), "--sweep", "topology=zen3-2s-nps1,icx-2s", "--baseline", "--save", "--db", str(db)]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    sid = out.pop("sweep_id")
    store = Store(db)
    try:
        got = store.get_sweep(sid)
    finally:
        store.close()
    assert got is not None and got["result"] == out and got["scenario"] == TBENCH
    assert got["sweep"] == {
        "param": "topology",
        "values": ["zen3-2s-nps1", "icx-2s"],
        "baseline": True,
        "seeds": 1,
        "calibrated": False,
    }
    assert main([*argv, "--dashboard", "http://h:9/"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("saved as sweep ") and "http://h:9/?sweep=" in last
    new = last.rsplit("=", 1)[1]
    assert new != sid
    # seeds too: the sweep's result is what is stored, not its runs
    assert (
        main(
            [
                "sim",
                str(f),
                "--sweep",
                "topology=zen3-2s-nps1,icx-2s",
                "--baseline",
                "--seeds",
                "2",
                "--save",
                "--db",
                str(db),
            ]
        )
        == 0
    )
    assert "saved as sweep " in capsys.readouterr().out


def test_a_calibrated_sweep_runs_each_point_as_calibrate_runs_its_cell() -> None:
    """tbench's calibrate run grows with its clients (the forks, then a window); a calibrated sweep
    runs each point so, and then no published cell differs from the model's own run of it."""
    tb = {**TBENCH, "workload": {"kind": "tbench", "clients": 8}}
    sw = parse_sweep(tb, {"values": [4, 256], "baseline": True, "calibrated": True})
    runs = scenarios(tb, sw)
    for x, run, base in zip([4, 256], runs[0::2], runs[1::2], strict=True):
        ref = scenario_for(("zen3-2s-nps1", "tbench", x, ("fork_affine",)), 1)
        assert {k: run[k] for k in ("workload", "duration_ms", "hints", "seed")} == {
            k: ref[k] for k in ("workload", "duration_ms", "hints", "seed")
        }
        assert base["duration_ms"] == ref["duration_ms"] and "hints" not in base
    assert runs[0]["duration_ms"] < runs[2]["duration_ms"]  # 256 clients fork longer than 4
    out = summarize(tb, sw, [run_scenario(s, wall_clock=False) for s in runs], DEFAULT_CALIBRATION_CSV)
    assert out["calibrated"] is True
    assert (
        all(c["differs"] == [] for r in out["rows"] for c in r["published"]) and out["rows"][1]["published"]
    )
    # the same sweep at the scenario's own 150 ms differs from calibrate's run in its length
    plain = parse_sweep(tb, {"values": [4, 256], "baseline": True})
    cells = summarize(
        tb, plain, [run_scenario(s, wall_clock=False) for s in scenarios(tb, plain)], DEFAULT_CALIBRATION_CSV
    )
    assert "duration_ms" in cells["rows"][1]["published"][0]["differs"]
    # only along the parameter calibrate varies, of a benchmark it runs
    assert refused({"param": "cputime_us", "values": [1, 2], "calibrated": True}).field == "sweep.calibrated"
    e = refused({"param": "topology", "values": ["icx-2s", "zen3-2s-nps1"], "calibrated": True})
    assert e.field == "sweep.calibrated" and "schbench workers" in e.message
    assert refused({"values": [1, 2], "calibrated": 1}).field == "sweep.calibrated"


def test_a_sweep_across_machines_runs_the_whole_sweep_on_each_in_order() -> None:
    sw = parse_arg(SCHBENCH, "workers=8,4", baseline=True, across="icx-2s, zen3-2s-nps4,icx-2s")
    assert sw.across == ("icx-2s", "zen3-2s-nps4") and sw.values == (4, 8) and sw.ordered
    runs = scenarios(SCHBENCH, sw)
    assert [(s["topology"], s["workload"]["workers"], s.get("hints")) for s in runs] == [
        ("icx-2s", 4, ["wake_affine"]),
        ("icx-2s", 4, None),
        ("icx-2s", 8, ["wake_affine"]),
        ("icx-2s", 8, None),
        ("zen3-2s-nps4", 4, ["wake_affine"]),
        ("zen3-2s-nps4", 4, None),
        ("zen3-2s-nps4", 8, ["wake_affine"]),
        ("zen3-2s-nps4", 8, None),
    ]
    # calibrated: each machine's point as calibrate runs that machine's cell
    tb = {**TBENCH, "workload": {"kind": "tbench", "clients": 8}}
    cal = parse_sweep(tb, {"values": [4, 64], "calibrated": True, "across": ["icx-2s", "zen3-2s-nps1"]})
    for run, (m, x) in zip(
        scenarios(tb, cal),
        [("icx-2s", 4), ("icx-2s", 64), ("zen3-2s-nps1", 4), ("zen3-2s-nps1", 64)],
        strict=True,
    ):
        ref = scenario_for((m, "tbench", x, ("fork_affine",)), 1)
        assert (
            run["topology"] == m
            and run["workload"] == ref["workload"]
            and run["duration_ms"] == ref["duration_ms"]
        )
    # refusals name sweep.across
    for spec, why in [
        ({"values": [4, 8], "across": ["icx-2s", "zen5"]}, "'zen5'"),
        ({"values": [4, 8], "across": ["icx-2s"]}, "2 to"),
        ({"values": [4, 8], "across": "icx-2s,bdw-1s-20"}, "machine names"),
        (
            {"param": "topology", "values": ["icx-2s", "bdw-1s-20"], "across": ["icx-2s", "bdw-1s-20"]},
            "already",
        ),
    ]:
        e = refused(spec)
        assert e.field == "sweep.across" and why in e.message, (spec, e)
    many = {
        "values": [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
        "baseline": True,
        "seeds": 8,
        "across": ["icx-2s", "bdw-1s-20", "zen3-2s-nps1"],
    }
    e = refused(many)
    assert e.field == "sweep.across" and "480 runs" in e.message and str(MAX_RUNS) in e.message
    assert (
        parse_sweep(SCHBENCH, {**many, "seeds": 6, "across": ["icx-2s", "bdw-1s-20"]}).seeds == 6
    )  # 240 runs


def test_a_feature_table_across_machines_is_each_machines_own_toggle_sweep() -> None:
    """fork_affine and fork_spread on tbench at 32 clients, on zen3-2s-nps1 and icx-2s: each panel is
    the toggle sweep run on that machine alone, its published effects that machine's tables'."""
    sw = parse_arg(TBENCH, "toggle=fork_affine,fork_spread", baseline=False, across="zen3-2s-nps1,icx-2s")
    todo, at = distinct(scenarios(TBENCH, sw))
    assert len(todo) == 6  # a baseline per machine, once each
    ran = [run_scenario(s, wall_clock=False) for s in todo]
    out = summarize(TBENCH, sw, [ran[i] for i in at], DEFAULT_CALIBRATION_CSV)
    assert out["across"] == ["zen3-2s-nps1", "icx-2s"] and out["rows"] == [] and out["turns"] == []
    for p, m in zip(out["panels"], out["across"], strict=True):
        on = {**TBENCH, "topology": m}
        single = parse_arg(on, "toggle=fork_affine,fork_spread", baseline=False)
        alone = [run_scenario(s, wall_clock=False) for s in scenarios(on, single)]
        assert p == {**summarize(on, single, alone, DEFAULT_CALIBRATION_CSV), "topology": m}
    zen3, icx = ({r["x"]: r for r in p["rows"]} for p in out["panels"])
    # published: -14.7% on zen3's sixteen LLCs, within 5% on icx's two
    assert zen3["fork_affine"]["published_pct"] == pytest.approx(-14.7, abs=0.05)
    assert -5 < icx["fork_affine"]["published_pct"] < 5 and zen3["fork_affine"]["direction"] == "worse"
    assert out["events"] == sum(r["sim"]["events"] for r in ran)


def test_the_command_line_sweep_across_machines_prints_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = scenario_file(tmp_path, TBENCH)
    argv = ["sim", str(f), "--sweep", "toggle=fork_affine,fork_spread", "--across", "zen3-2s-nps1,icx-2s"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "on zen3-2s-nps1:" in text and "on icx-2s:" in text
    table = text.split("at each toggle on each machine (published in brackets):\n")[1].splitlines()
    assert table[0].split() == ["toggle", "zen3-2s-nps1", "icx-2s"]
    for line, i in zip(table[1:], range(2), strict=True):
        zen3, icx = (p["rows"][i] for p in out["panels"])
        assert line.split()[0] == zen3["x"]
        assert f"{zen3['change_pct']:+.1f}% ({zen3['published_pct']:+.1f}%)" in line
        assert f"{icx['change_pct']:+.1f}%" in line
    db = tmp_path / "p.db"
    assert main([*argv, "--save", "--db", str(db), "--json"]) == 0
    sid = json.loads(capsys.readouterr().out)["sweep_id"]
    store = Store(db)
    try:
        got = store.get_sweep(sid)
    finally:
        store.close()
    assert got is not None and got["sweep"]["across"] == ["zen3-2s-nps1", "icx-2s"]
    assert main(["sim", str(f), "--across", "zen3-2s-nps1,icx-2s"]) == 2
    assert "--across is for --sweep" in capsys.readouterr().err
    assert main([*argv[:-1], "zen3-2s-nps1"]) == 2
    assert "sweep.across" in capsys.readouterr().err


def test_a_trace_replay_sweeps_toggles_and_machines(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    g4_table: Any,
) -> None:
    """A real 2-CPU VM's hackbench (vm2-hackbench-g4) replayed under each toggle and on each
    machine: each row is the replay of the recording's profile so changed, and the stored sweep
    keeps the scenario as given (the file), not the profile."""
    monkeypatch.setenv("PLACEMAP_COLLECT", str(collector_binary(tmp_path / "collector")))
    sc = {"topology": "bdw-1s-20", "workload": {"kind": "trace", "file": str(G4)}, "seed": 1}
    f = scenario_file(tmp_path, sc)
    db = tmp_path / "p.db"
    argv = ["sim", str(f), "--sweep", "toggle=fork_spread,UTIL_FITS_CAPACITY", "--across", "bdw-1s-20,icx-2s"]
    assert main([*argv, "--json", "--save", "--db", str(db)]) == 0
    out = json.loads(capsys.readouterr().out)
    profile = profile_from_table(g4_table, source=f"file {G4.name}", name=G4.name)
    replay = {**sc, "workload": {"kind": "trace", "profile": profile}}
    for p in out["panels"]:
        on = {**replay, "topology": p["topology"]}
        base = run_scenario(on, wall_clock=False)["metric"]["value"]
        assert [(r["x"], r["value"], r["baseline"]) for r in p["rows"]] == [
            (
                "fork_spread",
                run_scenario({**on, "hints": ["fork_spread"]}, wall_clock=False)["metric"]["value"],
                base,
            ),
            (
                "UTIL_FITS_CAPACITY",
                run_scenario({**on, "features": {"UTIL_FITS_CAPACITY": True}}, wall_clock=False)["metric"][
                    "value"
                ],
                base,
            ),
        ]
    store = Store(db)
    try:
        saved = store.get_sweep(out["sweep_id"])
    finally:
        store.close()
    assert saved is not None and saved["scenario"] == sc
    assert main(["sim", str(f), "--sweep", "topology=bdw-1s-20,zen3-2s-nps1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["llc_spread"]["llcs"] for r in rows] == [1, 16]
    assert (
        rows[1]["value"]
        == run_scenario({**replay, "topology": "zen3-2s-nps1"}, wall_clock=False)["metric"]["value"]
    )
    # a trace file brings no host: "recorded" is a machine only for a stored recording's replay
    assert main(["sim", str(f), "--sweep", "toggle=all", "--across", "recorded,icx-2s"]) == 2
    assert "sweep.across: unknown machine 'recorded'" in capsys.readouterr().err
    # a stored recording with its host's topology: its own host beside a preset, read from --db
    store = Store(db)
    try:
        rid = store.create_recording("g4", topology_id=store.put_topology(VM2))
        ing = Ingestor(store, rid, None)
        for batch in g4_table.to_batches(max_chunksize=10_000):
            ing.add(batch)
        ing.finish(None)
    finally:
        store.close()
    stored = scenario_file(tmp_path, {**sc, "workload": {"kind": "trace", "recording": rid}})
    argv = ["sim", str(stored), "--sweep", "topology=recorded,bdw-1s-20", "--db", str(db), "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    on_host = {
        **replay,
        "topology": VM2,
        "workload": {
            "kind": "trace",
            "profile": profile_from_table(g4_table, source=f"recording {rid}", name="g4"),
        },
    }
    assert [r["x"] for r in rows] == ["recorded", "bdw-1s-20"]
    assert rows[0]["value"] == run_scenario(on_host, wall_clock=False)["metric"]["value"]
    assert rows[0]["llc_spread"]["llcs"] == len(VM2["llcs"])
    # no parameter to vary, nothing drawn from the seed
    assert main(["sim", str(f), "--sweep", "groups=1,2"]) == 2
    assert "sweep.param: a trace replay" in capsys.readouterr().err
    assert main(["sim", str(f), "--sweep", "toggle=all", "--baseline", "--seeds", "2"]) == 2
    assert "sweep.seeds" in capsys.readouterr().err


def _run_all(scenario: dict[str, Any], sw: Sweep) -> dict[str, Any]:
    todo, at = distinct(scenarios(scenario, sw))
    ran = [run_scenario(s, wall_clock=False) for s in todo]
    return summarize(scenario, sw, [ran[i] for i in at], DEFAULT_CALIBRATION_CSV)


def test_a_sweep_runs_across_recorded_hosts_beside_presets(epyc_7451_topology: Path) -> None:
    """A real EPYC 7451's topology (read from its sysfs dump by the collector) as a host of a feature
    table across machines: its panel is the toggle sweep run with that topology inline, alone; the
    spec round-trips through Sweep.spec (what a stored sweep keeps)."""
    epyc = json.loads(epyc_7451_topology.read_text())
    spec = {
        "param": "toggle",
        "values": ["fork_affine", "fork_spread"],
        "across": ["epyc-7451", "zen3-2s-nps1"],
    }
    sw = parse_sweep(TBENCH, {**spec, "hosts": {"epyc-7451": epyc}})
    assert sw.across == ("epyc-7451", "zen3-2s-nps1") and sw.hosts == {"epyc-7451": epyc}
    assert parse_sweep(TBENCH, sw.spec()) == sw and parse_sweep(TBENCH, sw.spec()).hosts == sw.hosts
    out = _run_all(TBENCH, sw)
    assert [p["topology"] for p in out["panels"]] == ["epyc-7451", "zen3-2s-nps1"]
    on = {**TBENCH, "topology": epyc}
    single = parse_sweep(on, {"param": "toggle", "values": ["fork_affine", "fork_spread"]})
    alone = _run_all(on, single)
    assert out["panels"][0] == {**alone, "topology": "epyc-7451"}
    # the EPYC's 16 LLCs of 6 CPUs (not a preset's): where the runs' work sat
    assert out["panels"][0]["rows"][0]["llc_spread"]["llcs"] == len(epyc["llcs"]) == 16
    assert out["panels"][1] == {
        **_run_all({**TBENCH, "topology": "zen3-2s-nps1"}, single),
        "topology": "zen3-2s-nps1",
    }
    # a host in a machine sweep, too
    ms = parse_sweep(
        TBENCH, {"param": "topology", "values": ["bdw-1s-20", "epyc-7451"], "hosts": {"epyc-7451": epyc}}
    )
    assert [s["topology"] for s in scenarios(TBENCH, ms)] == ["bdw-1s-20", epyc]


def test_a_bad_host_names_its_field(epyc_7451_topology: Path) -> None:
    epyc = json.loads(epyc_7451_topology.read_text())
    across = {"param": "toggle", "values": ["fork_affine", "fork_spread"], "across": ["e", "icx-2s"]}
    broken = {**epyc, "cpus": [{**epyc["cpus"][0], "llc": 99}, *epyc["cpus"][1:]]}
    for hosts, field, why in (
        ({"e": epyc, "f": epyc}, "sweep.hosts.f", "no machine of the sweep is 'f'"),
        ({"e": epyc, "icx-2s": epyc}, "sweep.hosts.icx-2s", "names a preset"),
        ({"e": epyc, "recorded": epyc}, "sweep.hosts.recorded", "names a preset"),
        ({"e": "zen3-2s-nps1"}, "sweep.hosts.e", "topology object"),
        ({"e": broken}, "sweep.hosts.e.cpus[0].llc", ""),
        ({"e,f": epyc}, "sweep.hosts.e,f", "without commas"),
        ({"e\nf": epyc}, "sweep.hosts.e\nf", "printable"),
        ({"e" * 65: epyc}, "sweep.hosts." + "e" * 65, "1 to 64"),
        ([epyc], "sweep.hosts", "expected an object"),
        ({}, "sweep.across", "unknown machine 'e'"),
    ):
        e = refused({**across, "hosts": hosts}, TBENCH)
        assert e.field == field and why in e.message, (field, e)


def test_the_command_line_reads_a_topology_file_as_a_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], epyc_7451_topology: Path
) -> None:
    """`--across zen3-2s-nps1,epyc-7451.json`: the collector's dump of a real EPYC as a machine named
    by the file's stem, its topology stored with the sweep."""
    f = scenario_file(tmp_path, TBENCH)
    db = tmp_path / "p.db"
    argv = [
        "sim",
        str(f),
        "--sweep",
        "toggle=fork_affine,fork_spread",
        "--across",
        f"zen3-2s-nps1,{epyc_7451_topology}",
    ]
    assert main([*argv, "--json", "--save", "--db", str(db)]) == 0
    out = json.loads(capsys.readouterr().out)
    epyc = json.loads(epyc_7451_topology.read_text())
    assert out["across"] == ["zen3-2s-nps1", "epyc-7451"]
    sw = parse_sweep(
        TBENCH,
        {
            "param": "toggle",
            "values": ["fork_affine", "fork_spread"],
            "across": ["zen3-2s-nps1", "epyc-7451"],
            "hosts": {"epyc-7451": epyc},
        },
    )
    assert {k: v for k, v in out.items() if k != "sweep_id"} == _run_all(TBENCH, sw)
    store = Store(db)
    try:
        saved = store.get_sweep(out["sweep_id"])
    finally:
        store.close()
    assert saved is not None and saved["sweep"]["hosts"] == {"epyc-7451": epyc}
    assert parse_sweep(TBENCH, saved["sweep"]) == sw
    assert main(argv) == 0
    text = capsys.readouterr().out
    # what the host is, as its name does not say: the EPYC's 96 CPUs in 16 LLCs of 6 and 8 nodes
    assert text.splitlines()[0] == f"epyc-7451: {epyc['machine']}, 96 CPUs online, 16 LLCs, 8 NUMA nodes"
    table = text.split("(published in brackets):\n")[1].splitlines()
    assert table[0].split() == ["toggle", "zen3-2s-nps1", "epyc-7451"]
    # a machine sweep takes files too; a missing or bad file is refused, naming the list
    assert main(["sim", str(f), "--sweep", f"topology=icx-2s,{epyc_7451_topology}", "--json"]) == 0
    assert [r["x"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["icx-2s", "epyc-7451"]
    assert main([*argv[:-1], f"zen3-2s-nps1,{tmp_path / 'gone.json'}"]) == 2
    assert (
        "sweep.across: " in (err := capsys.readouterr().err)
        and "gone.json: not a readable topology file" in err
    )
    (tmp_path / "bad.json").write_text('{"cpus": []}')
    assert main([*argv[:-1], f"zen3-2s-nps1,{tmp_path / 'bad.json'}"]) == 2
    assert "sweep.hosts.bad" in capsys.readouterr().err


def test_distinct_tells_runs_by_their_topologys_content_not_its_object() -> None:
    """Two hosts of one topology (two copies) run the same scenarios: each distinct run once; a host
    of another topology runs its own."""
    other = {**VM2, "cpus": [{**c, "online": c["cpu"] == 0} for c in VM2["cpus"]]}  # one CPU offline
    hosts = {"a": json.loads(json.dumps(VM2)), "b": json.loads(json.dumps(VM2)), "c": other}
    sw = parse_sweep(
        TBENCH,
        {
            "param": "toggle",
            "values": ["fork_affine", "wake_hold"],
            "across": ["a", "b", "c"],
            "hosts": hosts,
        },
    )
    runs = scenarios(TBENCH, sw)
    todo, at = distinct(runs)
    # on each machine each toggle beside the one baseline: 4 runs, 3 distinct; a and b share theirs
    assert len(runs) == 12 and len(todo) == 6
    assert at[:4] == at[4:8] and set(at[8:]).isdisjoint(at[:4])
    assert [todo[i] for i in at] == runs
