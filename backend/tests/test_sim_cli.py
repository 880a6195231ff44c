"""`placemap sim` and `placemap calibrate` from the command line (in process)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from collector import collector_binary
from ftrace_lines import G4

from placemap.cli import main
from placemap.replay.ingest import Ingestor
from placemap.settings import REPO_ROOT
from placemap.sim.calibration import effect_pct, scenario_for
from placemap.sim.scenario import run_scenario
from placemap.sim_cli import why_section
from placemap.sim_profile import profile_from_table
from placemap.store import Store

BIN = REPO_ROOT / "bin" / "placemap"
SCENARIO = {
    "topology": "zen3-2s-nps1",
    "workload": {"kind": "schbench", "messengers": 1, "workers": 4},
    "hints": ["wake_affine"],
    "seed": 3,
    "duration_ms": 50,
}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_sim_prints_the_issue_result_shape_byte_identically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    code, first, _ = run(["sim", str(f), "--json", "--deterministic"], capsys)
    assert code == 0
    result = json.loads(first)
    assert result["metric"]["name"] == "p99_wakeup_latency_us" and result["metric"]["better"] == "lower"
    assert set(result["counters"]["migrations"]["by_cause"]) == {"wakeup", "balance", "fork"}
    assert result["sim"]["events"] > 0
    _, second, _ = run(["sim", str(f), "--json", "--deterministic"], capsys)
    assert first == second


def test_sim_names_the_bad_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({**SCENARIO, "hints": ["fork_sideways"]}))
    code, out, err = run(["sim", str(f), "--json"], capsys)
    assert code == 2 and out == ""
    assert "hints" in err and "fork_sideways" in err


def _published_rows(keep: Callable[[dict[str, str]], bool]) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows `keep` accepts of the published calibration file."""
    src = Path(__file__).resolve().parents[2].parent / "shared" / "calibration" / "userspace-hinting-rfc.csv"
    with src.open(newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [r for r in reader if keep(r)]
        return list(reader.fieldnames or []), rows


def _write_csv(path: Path, fields: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def _stream_rows() -> tuple[list[str], list[dict[str, str]]]:
    """The header and the tip and fork_spread rows of ICX Stream-Copy at 2 threads."""
    fields, rows = _published_rows(
        lambda r: r["benchmark"] == "stream-Copy" and "Intel" in r["machine"] and r["x"] == "2"
    )
    return fields, [next(r for r in rows if r["config"] == c) for c in ("tip", "fork_spread")]


def test_calibrate_reports_agreement_for_a_small_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two rows of the published Stream table on the unified-LLC Intel machine: baseline and fork_spread
    fields, picked = _stream_rows()
    f = tmp_path / "cal.csv"
    _write_csv(f, fields, picked)
    code, out, _ = run(["calibrate", "--csv", str(f), "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["runs"] == 2
    (table,) = report["tables"].values()
    (cell,) = table["cells"]
    assert cell["config"] == "fork_spread" and isinstance(cell["simulated_pct"], float)
    # the same report from one process as from the pool
    code, one, _ = run(["calibrate", "--csv", str(f), "--json", "--jobs", "1"], capsys)
    assert code == 0 and one == out
    # the turning points: Stream's judged on its one cell, the others not checked
    assert [tp["holds"] for tp in report["turning_points"]] == [None, None, cell["simulated_pct"] > 0]
    code, text, _ = run(["calibrate", "--csv", str(f), "--jobs", "1"], capsys)
    assert code == 0 and text.count("turning point not checked") == 2
    verdict = "holds" if cell["simulated_pct"] > 0 else "DOES NOT hold"
    assert f"turning point {verdict}: fork_spread helps Stream" in text
    assert f"2: {cell['simulated_pct']:+.1f}% ({cell['published_pct']:+.1f}%)" in text
    # the scale: the model's tip run against the tip row's own value
    tip = run_scenario(scenario_for(("icx-2s", "stream", 2, ()), 1), wall_clock=False)["metric"]["value"]
    (a,) = report["absolute"]
    (c,) = a["cells"]
    assert (a["benchmark"], a["metric"], c["x"]) == ("stream-Copy", "bandwidth_MBps", 2)
    assert c["published"] == float(picked[0]["value"]) and c["simulated"] == round(tip, 3)
    assert c["ratio"] == a["median_ratio"] == round(tip / float(picked[0]["value"]), 3)
    assert (
        f"stream-Copy (bandwidth_MBps, higher is better): median {c['ratio']}; by x: 2: {c['ratio']}" in text
    )


def test_calibrate_lists_each_tables_disagreeing_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Stream cell as published, and the same cell with its published sign turned (a made-up
    row, so that one of the two disagrees whatever the model gives): only the disagreeing one is
    listed under its table, and a cell within 5% never is."""
    fields, (tip, spread) = _stream_rows()
    turned = {
        **spread,
        "section": "Stream - turned",
        "pct_vs_baseline": str(-float(spread["pct_vs_baseline"])),
    }
    small = {**spread, "section": "Stream - small", "pct_vs_baseline": "-1.0"}
    f = tmp_path / "cal.csv"
    _write_csv(f, fields, [tip, spread, {**tip, "section": "Stream - turned"}, turned,
                            {**tip, "section": "Stream - small"}, small])  # fmt: skip
    code, out, _ = run(["calibrate", "--csv", str(f), "--json", "--jobs", "1"], capsys)
    assert code == 0
    tables = json.loads(out)["tables"]
    sim = next(iter(tables.values()))["cells"][0]["simulated_pct"]
    code, text, _ = run(["calibrate", "--csv", str(f), "--jobs", "1"], capsys)
    assert code == 0
    listed = [line for line in text.splitlines() if line.startswith("  disagrees: ")]
    pub = float(spread["pct_vs_baseline"])
    wrong = -pub if pub * sim > 0 else pub  # the published effect whose sign the model's is not
    assert listed == [f"  disagrees: fork_spread at 2: published {wrong:+.1f}%, simulated {sim:+.1f}%"]
    # once, under the table that disagrees, where docs/calibration.md says why
    assert text.count('  why we think it does: docs/calibration.md, "Stream, ICX"') == 1


def test_every_table_of_the_calibration_file_has_its_why_section_in_the_docs() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs/calibration.md"
    headings = [line.lstrip("#").strip() for line in doc.read_text().splitlines() if line.startswith("#")]
    _, rows = _published_rows(lambda r: True)
    tables = {f"{r['machine']} | {r['section']} | {r['benchmark']}" for r in rows}
    assert len(tables) == 22
    for table in tables:
        section = why_section(table)
        assert section is not None, table
        assert any(h.startswith(section) for h in headings), (table, section)


def test_calibrate_runs_hackbench_at_the_loops_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--hackbench-loops sets every hackbench run's -l: the report says which, and its cell is
    the effect of runs of that length (the published runs: --hackbench-loops 100000)."""
    fields, rows = _published_rows(
        lambda r: r["benchmark"] == "hackbench" and "AMD" in r["machine"] and r["x"] == "1"
        and r["section"].startswith("Hackbench Wakeup") and r["config"] in ("tip", "wake_affine")
    )  # fmt: skip
    f = tmp_path / "hb.csv"
    _write_csv(f, fields, rows)
    code, out, _ = run(
        ["calibrate", "--csv", str(f), "--json", "--jobs", "1", "--hackbench-loops", "400"], capsys
    )
    assert code == 0
    report = json.loads(out)
    assert report["hackbench_loops"] == 400 and report["runs"] == 2
    (table,) = report["tables"].values()
    (cell,) = table["cells"]

    def effect(loops: int) -> float:
        tip, hinted = (
            run_scenario(scenario_for(("zen3-2s-nps1", "hackbench", 1, h), 1, loops), wall_clock=False)
            for h in ((), ("wake_affine",))
        )
        return round(effect_pct("lower", tip["metric"]["value"], hinted["metric"]["value"]), 2)

    assert cell["simulated_pct"] == effect(400) != effect(50)
    code, default, _ = run(["calibrate", "--csv", str(f), "--json", "--jobs", "1"], capsys)
    assert json.loads(default)["hackbench_loops"] == 50
    assert json.loads(default)["tables"][next(iter(report["tables"]))]["cells"][0]["simulated_pct"] == effect(
        50
    )
    with pytest.raises(SystemExit) as e:
        run(["calibrate", "--csv", str(f), "--hackbench-loops", "0"], capsys)
    assert e.value.code == 2
    assert "--hackbench-loops: expected an integer in 1..1000000, got 0" in capsys.readouterr().err


def test_calibrate_skips_malformed_rows_by_line_and_keeps_the_good_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fields, (tip, spread) = _stream_rows()
    f = tmp_path / "cal.csv"
    with f.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows([tip, {**spread, "x": "two"}, spread, {**spread, "better": "faster"}])
        csv.writer(fh).writerow([spread[c] for c in fields[:5]])  # a line cut short
        w.writerow({**spread, "x": "99999"})  # more Stream threads than a scenario takes
    code, out, err = run(["calibrate", "--csv", str(f), "--json", "--jobs", "1"], capsys)
    assert code == 0
    report = json.loads(out)
    assert [(s["line"], s["reason"].split(" ")[0]) for s in report["skipped_rows"]] == [
        (3, "x"),
        (5, "better"),
        (6, "no"),
        (7, "no"),
    ]
    assert "line 3 skipped: x is not a number: 'two'" in err and "line 6 skipped: no " in err
    assert "line 7 skipped: no scenario for x=99999: workload.threads: expected an integer" in err
    (table,) = report["tables"].values()
    assert [c["config"] for c in table["cells"]] == ["fork_spread"], "the good rows still calibrate"


def test_calibrate_names_what_makes_a_csv_unusable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "cal.csv"
    f.write_text("machine,x,config\nAMD,1,tip\n")
    code, out, err = run(["calibrate", "--csv", str(f)], capsys)
    assert code == 2 and out == ""
    assert "no column section, benchmark, pct_vs_baseline, better in the header" in err
    f.write_bytes(b"\xff\xfe\x00")
    code, _, err = run(["calibrate", "--csv", str(f)], capsys)
    assert code == 2 and "cannot read" in err
    fields, (tip, _) = _stream_rows()
    with f.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerow({**tip, "pct_vs_baseline": "nan"})
    code, _, err = run(["calibrate", "--csv", str(f)], capsys)
    assert code == 2 and "line 2 skipped: pct_vs_baseline is not finite" in err and "no usable rows" in err


def test_sim_says_a_scenario_file_is_not_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.json"
    f.write_bytes(b"\xff\xfe{}")
    code, out, err = run(["sim", str(f), "--json"], capsys)
    assert code == 2 and out == "" and "cannot read" in err


def test_sim_replays_a_stored_recording_as_a_trace_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], g4_table: pa.Table
) -> None:
    db = tmp_path / "p.db"
    store = Store(db)
    rid = store.create_recording("g4")
    ing = Ingestor(store, rid, None)
    for batch in g4_table.to_batches(max_chunksize=10_000):
        ing.add(batch)
    ing.finish(None)
    store.close()
    f = tmp_path / "s.json"
    f.write_text(
        json.dumps({"topology": "bdw-1s-20", "workload": {"kind": "trace", "recording": rid}, "seed": 1})
    )
    code, out, err = run(["sim", str(f), "--json", "--deterministic", "--db", str(db)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["metric"]["name"] == "runtime_s" and result["sim"]["complete"]
    # the stored recording's profile is the one its events make
    profile = profile_from_table(g4_table, source=f"recording {rid}")
    direct = run_scenario(
        {"topology": "bdw-1s-20", "workload": {"kind": "trace", "profile": profile}, "seed": 1}
    )
    direct["sim"]["wall_s"] = 0.0
    assert result == direct
    f.write_text(json.dumps({"topology": "recorded", "workload": {"kind": "trace", "recording": rid}}))
    code, _, err = run(["sim", str(f), "--db", str(db)], capsys)
    assert code == 2 and "topology: recording" in err and "no host topology" in err
    f.write_text(json.dumps({"topology": "bdw-1s-20", "workload": {"kind": "trace", "recording": "nope"}}))
    code, _, err = run(["sim", str(f), "--db", str(db)], capsys)
    assert code == 2 and "workload.recording: no recording 'nope'" in err


def test_sim_replays_a_trace_file_read_by_the_importer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, g4_table: pa.Table
) -> None:
    # the real importer binary (placemap-collect), as scripts/install builds it
    monkeypatch.setenv("PLACEMAP_COLLECT", str(collector_binary(tmp_path / "collector")))
    f = tmp_path / "s.json"
    f.write_text(
        json.dumps({"topology": "bdw-1s-20", "workload": {"kind": "trace", "file": str(G4)}, "seed": 1})
    )
    code, out, err = run(["sim", str(f), "--json", "--deterministic"], capsys)
    assert code == 0, err
    profile = profile_from_table(g4_table, source=f"file {G4.name}")
    direct = run_scenario(
        {"topology": "bdw-1s-20", "workload": {"kind": "trace", "profile": profile}, "seed": 1}
    )
    direct["sim"]["wall_s"] = 0.0
    assert json.loads(out) == direct
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01 not a trace\n")
    f.write_text(json.dumps({"topology": "bdw-1s-20", "workload": {"kind": "trace", "file": str(bad)}}))
    code, _, err = run(["sim", str(f)], capsys)
    assert code == 2 and "workload.file:" in err
    f.write_text(json.dumps({"topology": "recorded", "workload": {"kind": "trace", "file": str(G4)}}))
    code, _, err = run(["sim", str(f)], capsys)
    assert code == 2 and "topology: a trace file brings no host topology" in err


def test_sim_decisions_prints_the_reasons_and_json_lists_them_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    code, text, _ = run(["sim", str(f), "--decisions"], capsys)
    assert code == 0
    # the wake_affine hint of SCENARIO is a wakeup path of its own
    assert "wakeup decisions: " in text and "wake_affine hint: the waker's LLC has an idle core" in text
    assert "fork decisions: 5" in text  # the messenger's 4 workers and the messenger itself
    _, out, _ = run(["sim", str(f), "--json", "--deterministic", "--decisions"], capsys)
    full = json.loads(out)
    _, out, _ = run(["sim", str(f), "--json", "--deterministic"], capsys)
    plain = json.loads(out)
    assert "decisions" not in plain and {k: v for k, v in full.items() if k != "decisions"} == plain
    assert sum(r["count"] for r in full["decisions"]["wakeup"]) == plain["counters"]["wakeups"]["total"]


def test_sim_baseline_runs_the_pair_and_names_what_moved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    sc = {**SCENARIO, "duration_ms": 400}  # past schbench's 100 ms warmup: p99s to compare
    f.write_text(json.dumps(sc))
    code, out, _ = run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)
    assert code == 0
    pair = json.loads(out)
    base_sc = {k: v for k, v in sc.items() if k != "hints"}
    assert pair["baseline"] == run_scenario(base_sc, wall_clock=False, decisions=True)
    assert pair["result"] == run_scenario(sc, wall_clock=False, decisions=True)
    v, b = pair["result"]["metric"]["value"], pair["baseline"]["metric"]["value"]
    assert pair["change_pct"] == pytest.approx(100 * (b - v) / b)  # p99: lower is better
    # the hint's own path exists only in the hinted run
    hint = [x for x in pair["shifts"] if x["reason"].startswith("wake_affine hint")]
    assert hint and hint[0]["baseline_share"] == 0 and hint[0]["share"] > 0
    code, text, _ = run(["sim", str(f), "--baseline"], capsys)
    assert code == 0 and "baseline (no hints, default features): p99_wakeup_latency_us = " in text
    assert "decisions that moved most" in text and "wake_affine hint" in text


def test_sim_baseline_shows_the_published_cell_it_reproduces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SCENARIO is a cell of the RFC's Zen3 schbench table (4 workers: tip 41 us, wake_affine 21 us,
    "48.78 pct" in shared/calibration): the pair prints it, and whether the run points its way."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps({**SCENARIO, "duration_ms": 400}))
    code, out, _ = run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)
    pair = json.loads(out)
    assert pair["published"]["reason"] is None
    [cell] = pair["published"]["cells"]
    assert (cell["section"], cell["x"], cell["tip_value"], cell["value"]) == (
        "schbench Wakeup Hint",
        4,
        41.0,
        21.0,
    )
    assert cell["published_pct"] == 48.78 and cell["significant"]
    assert cell["differs"] == [{"field": "duration_ms", "calibration": 30000, "yours": 400}]
    code, text, _ = run(["sim", str(f), "--baseline"], capsys)
    way = "the same way" if pair["change_pct"] > 0 else "the other way"
    assert (
        code == 0
        and "the real kernel, published:" in text
        and "published in userspace-hinting-rfc.csv" in text
    )
    assert f"4 workers, wake_affine: +48.8% better (p99_latency_us 41 -> 21): this run points {way}" in text
    assert "placemap calibrate runs it with duration_ms 30000 (here 400)" in text
    # a feature changed as well: no published cell, and why
    f.write_text(json.dumps({**SCENARIO, "duration_ms": 400, "features": {"SIS_SHORT": True}}))
    code, text, _ = run(["sim", str(f), "--baseline"], capsys)
    assert "no published measurement to compare: the published runs have the default features" in text
    # without the tables file nothing is published; an unusable one is said, and the pair still prints
    f.write_text(json.dumps({**SCENARIO, "duration_ms": 400}))
    monkeypatch.setenv("PLACEMAP_CALIBRATION_CSV", str(tmp_path / "absent.csv"))
    code, out, _ = run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)
    assert code == 0 and json.loads(out)["published"] is None
    bad = tmp_path / "bad.csv"
    bad.write_text("machine,section\n")
    monkeypatch.setenv("PLACEMAP_CALIBRATION_CSV", str(bad))
    code, text, err = run(["sim", str(f), "--baseline"], capsys)
    assert code == 0 and "baseline (no hints, default features)" in text and "the real kernel" not in text
    assert f"placemap sim: published tables {bad}: no column benchmark" in err


def test_sim_seeds_shows_the_published_cell_and_the_way_each_seed_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ICX hackbench, 4 groups, wake_affine: published +8.22% (4.50 s -> 4.13 s). The way the run
    points is each seed's own, read off its change in the JSON."""
    workload = {"kind": "hackbench", "groups": 4, "mode": "thread", "ipc": "pipe", "loops": 20}
    f = tmp_path / "s.json"
    f.write_text(
        json.dumps({"topology": "icx-2s", "workload": workload, "hints": ["wake_affine"], "seed": 1})
    )
    code, out, _ = run(["sim", str(f), "--baseline", "--seeds", "3", "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    [cell] = got["published"]["cells"]
    assert (cell["section"], cell["published_pct"]) == ("Hackbench Wakeup Hint Test", 8.22)
    assert cell["differs"] == [{"field": "workload.loops", "calibration": 50, "yours": 20}]
    ways = [
        "same" if c > 0 else "opposite" if c < 0 else "unmoved"
        for c in (r["change_pct"] for r in got["runs"])
    ]
    code, text, _ = run(["sim", str(f), "--baseline", "--seeds", "3"], capsys)
    assert code == 0
    line = "4 groups, wake_affine: +8.2% better (runtime_s 4.5 -> 4.13): "
    if len(set(ways)) == 1:
        texts = {"same": "the same way", "opposite": "the other way", "unmoved": "does not move it"}
        assert (
            line
            + "this run "
            + ("points " if ways[0] != "unmoved" else "")
            + texts[ways[0]]
            + " on every seed"
            in text
        )
    else:
        counts = ", ".join(f"{w} on {ways.count(w)}" for w in sorted(set(ways)))
        assert line + f"the seed decides the way this run points ({counts})" in text


def test_sim_says_what_an_incomplete_runs_metric_is_and_compares_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCENARIO ends at 50 ms, within schbench's 100 ms warmup: its p99 of 0 is no latency. The
    text says so, and --baseline measures no change, where 0 against 0 would read "the same"."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    code, text, _ = run(["sim", str(f)], capsys)
    assert code == 0 and "p99_wakeup_latency_us = 0.0" in text
    assert "incomplete run: no wakeup after schbench's 100 ms warmup" in text
    code, out, _ = run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)
    pair = json.loads(out)
    assert pair["result"]["metric"]["value"] == pair["baseline"]["metric"]["value"] == 0.0
    assert pair["change_pct"] is None
    code, text, _ = run(["sim", str(f), "--baseline"], capsys)
    assert "0.0: n/a (a run did not complete: no change is measured)" in text
    # a hackbench cut short by duration_ms: its runtime so far, a lower bound
    cut = {
        "topology": "bdw-1s-20",
        "workload": {"kind": "hackbench", "groups": 1, "loops": 100000},
        "duration_ms": 5,
    }
    f.write_text(json.dumps(cut))
    code, out, _ = run(["sim", str(f), "--json", "--deterministic"], capsys)
    r = json.loads(out)
    assert not r["sim"]["complete"] and 0 < r["metric"]["value"] <= 0.005
    assert r["sim"]["incomplete"].endswith(
        "the runtime is the time simulated since it started, a lower bound"
    )
    f.write_text(
        json.dumps({**cut, "workload": {"kind": "hackbench", "groups": 1, "loops": 10}, "duration_ms": 1000})
    )
    code, out, _ = run(["sim", str(f), "--json", "--deterministic"], capsys)
    r = json.loads(out)
    assert r["sim"]["complete"] and r["sim"]["incomplete"] is None


def test_sim_names_a_file_it_cannot_read_as_a_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)  # valid JSON, nested past the decoder's recursion
    code, out, err = run(["sim", str(deep)], capsys)
    assert code == 2 and not out and err == f"placemap sim: cannot read {deep}: JSON nested too deeply\n"
    bad = tmp_path / "bad.json"
    bad.write_text('{"topology": ')
    code, out, err = run(["sim", str(bad)], capsys)
    assert code == 2 and not out and err.startswith(f"placemap sim: cannot read {bad}: Expecting value")


def test_sim_baseline_needs_something_to_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({k: v for k, v in SCENARIO.items() if k != "hints"}))
    code, out, err = run(["sim", str(f), "--baseline"], capsys)
    assert code == 2 and not out and "nothing to compare" in err


def test_sim_seeds_runs_the_pair_on_each_seed_and_says_whether_the_sign_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each seed's row is that seed's own pair (run here one by one, in process), and the verdict
    follows from the rows. ICX hackbench at 4 groups under wake_affine moves within +-2% by the
    seed (calibration.md); schbench at 8 workers gains on every seed."""
    f = tmp_path / "s.json"
    hb = {
        "topology": "icx-2s",
        "workload": {"kind": "hackbench", "groups": 4, "loops": 50, "mode": "thread", "ipc": "pipe"},
        "hints": ["wake_affine"],
        "seed": 2,
    }
    f.write_text(json.dumps(hb))
    code, out, _ = run(["sim", str(f), "--baseline", "--seeds", "4", "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    assert [r["seed"] for r in got["runs"]] == [2, 3, 4, 5]
    changes = []
    for row in got["runs"]:
        r = run_scenario({**hb, "seed": row["seed"]}, wall_clock=False)
        b = run_scenario(
            {k: v for k, v in hb.items() if k != "hints"} | {"seed": row["seed"]}, wall_clock=False
        )
        assert (row["value"], row["baseline"]) == (r["metric"]["value"], b["metric"]["value"])
        changes.append(effect_pct("lower", b["metric"]["value"], r["metric"]["value"]))
    assert [r["change_pct"] for r in got["runs"]] == pytest.approx(changes)
    signs = {(c > 0) - (c < 0) for c in changes}
    assert got["summary"]["stable"] == (len(signs) == 1)
    if len(signs) > 1:
        assert got["summary"]["verdict"].startswith("the seed decides: ")
    else:
        assert got["summary"]["verdict"].endswith("on every seed")
    code, text, _ = run(["sim", str(f), "--baseline", "--seeds", "4"], capsys)
    assert code == 0 and "runtime_s on 4 seeds (2..5), each beside its baseline" in text
    assert f"seed 3: {got['runs'][1]['value']} against {got['runs'][1]['baseline']}: " in text
    assert got["summary"]["verdict"] in text

    sb = {**SCENARIO, "workload": {"kind": "schbench", "workers": 8}, "duration_ms": 300}
    f.write_text(json.dumps(sb))
    code, out, _ = run(["sim", str(f), "--baseline", "--seeds", "3", "--json"], capsys)
    s = json.loads(out)["summary"]
    assert s["verdict"] == "better on every seed" and s["measured"] == 3 and s["min_pct"] > 0
    # schbench on a symmetric preset: the start CPU and the sleep jitter move nothing
    assert s["identical"] and s["min_pct"] == s["max_pct"]
    code, text, _ = run(["sim", str(f), "--baseline", "--seeds", "3"], capsys)
    assert "every seed gave the same change: a seed picks only the CPU" in text
    f.write_text(json.dumps(hb))
    code, text, _ = run(["sim", str(f), "--baseline", "--seeds", "4"], capsys)
    assert ("every seed gave the same change" in text) == got["summary"]["identical"]
    assert got["summary"]["identical"] == (len({round(c, 9) for c in changes}) == 1)


def test_sim_seeds_says_which_seeds_measured_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCENARIO ends inside schbench's warmup on every seed: no seed is compared, and none reads
    as "the same"."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    code, text, _ = run(["sim", str(f), "--baseline", "--seeds", "2"], capsys)
    assert code == 0
    assert "seed 3: 0.0 against 0.0: incomplete run: no wakeup after schbench's 100 ms warmup" in text
    assert "no seed measured a change (every seed has a run that did not complete" in text


def test_sim_seeds_needs_a_pair_and_a_count_in_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    for extra in ([], ["--baseline", "--save"], ["--baseline", "--decisions"]):
        code, out, err = run(["sim", str(f), "--seeds", "3", *extra], capsys)
        assert code == 2 and not out and "--seeds runs the pair of --baseline" in err
    # a replay draws nothing from the seed (tests/sim/test_replay.py): no spread to show
    f.write_text(json.dumps({**SCENARIO, "workload": {"kind": "trace", "file": str(G4)}}))
    code, out, err = run(["sim", str(f), "--baseline", "--seeds", "3"], capsys)
    assert code == 2 and not out and "a trace replay draws nothing from the seed" in err
    # a bad field is named as without --seeds, before any run
    f.write_text(json.dumps({**SCENARIO, "workload": {"kind": "schbench", "workers": 0}}))
    code, out, err = run(["sim", str(f), "--baseline", "--seeds", "3"], capsys)
    assert code == 2 and not out and "bad scenario: workload.workers: expected an integer" in err
    for bad in ("0", "65", "two"):
        with pytest.raises(SystemExit):
            main(["sim", str(f), "--baseline", "--seeds", bad])
        assert "argument --seeds" in capsys.readouterr().err


def test_sim_prints_the_latency_distribution_and_says_when_the_p99_has_few_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({**SCENARIO, "duration_ms": 200}))
    code, out, _ = run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)
    assert code == 0
    pair = json.loads(out)
    lat, base = pair["result"]["latency_us"], pair["baseline"]["latency_us"]
    assert lat["note"] and base["note"]  # 4 workers for 100 ms after the warmup: few wakeups
    code, text, _ = run(["sim", str(f), "--baseline"], capsys)
    assert code == 0
    line = (
        f"wakeup latency over {lat['samples']} wakeups (us): p50 {lat['p50']}, p90 {lat['p90']}, "
        f"p99 {lat['p99']}, p99.9 {lat['p99_9']}, max {lat['max']}"
    )
    assert line in text.splitlines()
    assert lat["note"] in text.splitlines()
    assert f"baseline: {base['note']}" in text.splitlines()
    # every task's run-queue delay after its wakeups (ns in the JSON, us to three digits printed)
    d = pair["result"]["wakeup_latency"]
    us = ", ".join(f"{k} {d[k + '_ns'] / 1000:.3g}" for k in ("p50", "p90", "p99", "max"))
    assert (
        f"run-queue delay (wakeup -> run, every task) over {d['samples']} wakeups (us): {us}"
        in text.splitlines()
    )
    f.write_text(json.dumps({**SCENARIO, "duration_ms": 2000}))
    code, text, _ = run(["sim", str(f)], capsys)
    assert code == 0 and "wakeup latency over " in text and "few samples" not in text


def test_sim_runs_on_a_host_topology_file_or_a_preset_given_by_flag(
    tmp_path: Path, epyc_7451_topology: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--topology: a real machine as `placemap-collect topology --json` reads its sysfs (the EPYC 7451
    dump of ../shared/topologies: 96 CPUs, 16 LLCs of 6, 8 nodes, as its lscpu says) runs as if inline
    in the scenario."""
    host = json.loads(epyc_7451_topology.read_text())
    (tmp_path / "host.json").write_text(epyc_7451_topology.read_text())
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))  # on zen3-2s-nps1
    inline = tmp_path / "inline.json"
    inline.write_text(json.dumps({**SCENARIO, "topology": host}))
    code, by_flag, err = run(
        ["sim", str(f), "--topology", str(tmp_path / "host.json"), "--json", "--deterministic"], capsys
    )
    assert code == 0, err
    assert run(["sim", str(inline), "--json", "--deterministic"], capsys)[1] == by_flag
    # saved, the run is on that machine: its name and its CPUs
    db = tmp_path / "p.db"
    code, _, err = run(
        ["sim", str(f), "--topology", str(tmp_path / "host.json"), "--save", "--db", str(db)], capsys
    )
    assert code == 0, err
    store = Store(db)
    (rec,) = store.list_recordings()
    assert rec.topology_id is not None
    saved = store.get_topology(rec.topology_id)
    assert saved is not None and saved["machine"] == host["machine"]
    assert len(saved["cpus"]) == len(host["cpus"]) == 96
    assert len(saved["llcs"]) == 16 and len(saved["numa_nodes"]) == 8
    assert rec.name.startswith(f"sim {host['machine']} schbench")
    # a preset by name, as if the scenario said it
    icx = tmp_path / "icx.json"
    icx.write_text(json.dumps({**SCENARIO, "topology": "icx-2s"}))
    by_name = run(["sim", str(f), "--topology", "icx-2s", "--json", "--deterministic"], capsys)[1]
    assert by_name == run(["sim", str(icx), "--json", "--deterministic"], capsys)[1]
    assert by_name != run(["sim", str(f), "--json", "--deterministic"], capsys)[1]


def test_sim_topology_flag_errors_name_the_file_or_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    code, out, err = run(["sim", str(f), "--topology", str(tmp_path / "nowhere.json")], capsys)
    assert code == 2 and out == "" and "--topology: cannot read" in err and "nowhere.json" in err
    (tmp_path / "t.json").write_text("{not json")
    code, out, err = run(["sim", str(f), "--topology", str(tmp_path / "t.json")], capsys)
    assert code == 2 and "--topology: cannot read" in err
    (tmp_path / "t.json").write_text(json.dumps({"machine": "half a topology"}))
    code, out, err = run(["sim", str(f), "--topology", str(tmp_path / "t.json"), "--json"], capsys)
    assert code == 2 and out == "" and "topology" in err


def test_sim_prints_each_llc_s_busy_share_for_the_run_and_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    sc = {**SCENARIO, "workload": {"kind": "schbench", "workers": 24}, "duration_ms": 300}
    f.write_text(json.dumps(sc))
    code, out, _ = run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)
    assert code == 0
    pair = json.loads(out)
    code, text, _ = run(["sim", str(f), "--baseline"], capsys)
    assert code == 0
    rows = text.splitlines()
    head = "busy % per LLC over the run, LLC 0-15: "
    lines = {
        "result": next(x for x in rows if x.startswith(head)),
        "baseline": next(x for x in rows if x.startswith(f"baseline: {head}")),
    }
    for key, line in lines.items():
        shown = [int(v) for v in line.split(": ")[-1].split()]
        means = [s["mean"] for s in pair[key]["llc_util"]["series"]]
        assert shown == [round(100 * m) for m in means], key
    t = pair["result"]["cpu_time"]
    assert f"tasks ran {t['run_ms']:,.3f} ms on a CPU and waited {t['wait_ms']:,.3f} ms runnable" in text
    # wake_affine piles the 24 workers onto the messenger's LLC; tip leaves them spread
    busiest = {k: max(s["mean"] for s in pair[k]["llc_util"]["series"]) for k in lines}
    assert busiest["result"] > 2 * busiest["baseline"]


def test_sim_and_domains_read_the_scenario_or_the_host_topology_from_stdin(
    tmp_path: Path,
    epyc_7451_topology: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`-` reads standard input: `placemap-collect topology --json | placemap sim s.json --topology -`
    runs on that host as `--topology FILE` does, and a scenario piped in runs as its file does."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    host = epyc_7451_topology.read_text()

    def stdin(text: str) -> None:
        monkeypatch.setattr("sys.stdin", io.StringIO(text))

    by_file = run(["sim", str(f), "--json", "--deterministic"], capsys)[1]
    stdin(json.dumps(SCENARIO))
    assert run(["sim", "-", "--json", "--deterministic"], capsys)[1] == by_file
    on_host = run(["sim", str(f), "--topology", str(epyc_7451_topology), "--json", "--deterministic"], capsys)
    assert on_host[0] == 0 and on_host[1] != by_file
    stdin(host)
    assert run(["sim", str(f), "--topology", "-", "--json", "--deterministic"], capsys)[1] == on_host[1]
    stdin(host)
    assert run(["domains", "-"], capsys)[1] == run(["domains", str(epyc_7451_topology)], capsys)[1]
    # one stdin, two readers: refused before either reads
    stdin(json.dumps(SCENARIO))
    code, out, err = run(["sim", "-", "--topology", "-"], capsys)
    assert code == 2 and out == "" and "cannot both be read from stdin" in err
    stdin("{not json")
    code, out, err = run(["sim", "-"], capsys)
    assert code == 2 and out == "" and "cannot read -" in err


def test_this_hosts_topology_piped_from_the_real_collector(tmp_path: Path) -> None:
    """The pipeline the help names, in a shell: this VM's sysfs read by the real collector, its
    topology simulated; the run's output names the host's CPUs."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps({**SCENARIO, "workload": {"kind": "schbench", "workers": 2}}))
    collector = collector_binary(tmp_path)
    here = tmp_path / "here.json"
    here.write_bytes(
        subprocess.run(
            [str(collector), "topology", "--json", "--quiet"], capture_output=True, check=True
        ).stdout
    )
    online = sum(1 for c in json.loads(here.read_text())["cpus"] if c["online"])

    def piped(command: str) -> Any:
        """`placemap-collect topology --json | COMMAND` in bash, its JSON output."""
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", f'"{collector}" topology --json --quiet | {command}'],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    domains = piped(f'"{BIN}" domains - --json')
    assert domains == json.loads(
        subprocess.run([str(BIN), "domains", str(here), "--json"], capture_output=True, check=True).stdout
    )
    out = piped(f'"{BIN}" sim "{f}" --topology - --json')
    assert out["metric"]["name"] == "p99_wakeup_latency_us"
    assert sum(s["cpus"] for s in out["llc_util"]["series"]) == online


def test_output_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path) -> None:
    """`placemap openapi | head -c 100` (159 KB of output, more than a pipe's 64 KiB buffer holds): the
    command ends as a C tool ends on SIGPIPE (status 141 to the shell), with no BrokenPipeError
    traceback; every command goes through the same entry point."""
    env = {**os.environ, "PLACEMAP_DB": str(tmp_path / "p.db")}
    proc = subprocess.Popen([str(BIN), "openapi"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(100)
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert head.startswith(b"{") and "Traceback" not in err and "BrokenPipeError" not in err


def test_sim_prints_every_counter_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text output names each count the JSON's `counters` hold, with the same figures."""
    f = tmp_path / "s.json"
    f.write_text(json.dumps({**SCENARIO, "workload": {"kind": "tbench", "clients": 8}}))
    c = json.loads(run(["sim", str(f), "--json", "--deterministic"], capsys)[1])["counters"]
    lines = run(["sim", str(f), "--deterministic"], capsys)[1].splitlines()
    mig, wk = c["migrations"], c["wakeups"]
    assert mig["total"] > 0 and wk["total"] > 0 and wk["affine"] > 0
    # in the kernel's order, smallest level first (the JSON sorts its keys)
    order = ("smt", "llc", "pkg", "numa")
    levels = ", ".join(f"{k} {mig['by_level'][k]:,}" for k in order)
    causes = ", ".join(f"{k} {mig['by_cause'][k]:,}" for k in ("wakeup", "balance", "fork"))
    assert f"migrations {mig['total']:,}: by level {levels}; by cause {causes}" in lines
    same = wk["total"] - sum(wk["by_level"].values())
    wlevels = ", ".join(f"{k} {wk['by_level'][k]:,}" for k in order)
    assert (
        f"wakeups {wk['total']:,}, {wk['affine']:,} affine; by level from the waker's CPU: "
        f"same CPU {same:,}, {wlevels}"
    ) in lines
    bw = wk["by_waker"]
    assert bw["cross_llc"] > 0 and bw["to_waker_llc"] > 0
    pct = {k: f"{100 * bw[k] / bw['cross_llc']:.1f}%" for k in ("to_waker_llc", "to_prev_llc")}
    assert (
        f"wakeups whose waker ran in another LLC than the task's prev CPU {bw['cross_llc']:,}: woke in the "
        f"waker's LLC {bw['to_waker_llc']:,} ({pct['to_waker_llc']}), in prev's {bw['to_prev_llc']:,} "
        f"({pct['to_prev_llc']}), in neither {bw['elsewhere']:,}; waker in prev's LLC {bw['shared_llc']:,}; "
        f"on the waker's CPU {bw['on_waker_cpu']:,}"
    ) in lines
    assert (
        f"context switches {c['context_switches']:,}; CPU utilization {100 * c['cpu_utilization']:.1f}%; "
        f"mean wait {c['avg_wait_us']} us"
    ) in lines
    assert not any("{" in line for line in lines)  # no Python dicts printed as they are
    # beside a baseline, the baseline's counters too, each line as the run's with "baseline: " before it
    f.write_text(
        json.dumps({**SCENARIO, "workload": {"kind": "tbench", "clients": 8}, "hints": ["fork_affine"]})
    )
    pair = json.loads(run(["sim", str(f), "--json", "--deterministic", "--baseline"], capsys)[1])
    text = run(["sim", str(f), "--deterministic", "--baseline"], capsys)[1].splitlines()
    b = pair["baseline"]["counters"]
    assert b != pair["result"]["counters"]
    assert (
        f"baseline: migrations {b['migrations']['total']:,}: by level "
        + ", ".join(f"{k} {b['migrations']['by_level'][k]:,}" for k in order)
        + "; by cause "
        + ", ".join(f"{k} {b['migrations']['by_cause'][k]:,}" for k in ("wakeup", "balance", "fork"))
        in text
    )
    assert any(x.startswith(f"baseline: wakeups {b['wakeups']['total']:,}, ") for x in text)
    assert any(x.startswith(f"baseline: context switches {b['context_switches']:,}; ") for x in text)


def test_ftrace_writes_the_run_as_the_saved_recording_exports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from placemap.replay.ftrace_text import recording_text  # noqa: PLC0415

    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    code, plain, _ = run(["sim", str(f), "--json", "--deterministic"], capsys)
    assert code == 0
    # unsaved: the file, and the same result as without it (writing the events changes no decision)
    code, with_file, err = run(
        ["sim", str(f), "--json", "--deterministic", "--ftrace", str(tmp_path / "a.txt")], capsys
    )
    assert code == 0, err
    assert json.loads(with_file) == json.loads(plain)
    lines = (tmp_path / "a.txt").read_bytes().splitlines()
    assert lines[0] == b"# tracer: nop"
    # deterministic, as the result is: the same scenario and seed write the same file
    code, _, err = run(
        ["sim", str(f), "--json", "--deterministic", "--ftrace", str(tmp_path / "a2.txt")], capsys
    )
    assert code == 0, err
    assert (tmp_path / "a2.txt").read_bytes() == (tmp_path / "a.txt").read_bytes()
    events = [ln for ln in lines if not ln.startswith(b"#")]
    # every scheduler event the run counts (wakeups, switches, migrations) is a line, beside its
    # forks, new tasks and sched_waking lines
    counted = sum(1 for ln in events if re.search(rb": sched_(wakeup|switch|migrate_task): ", ln))
    assert counted == json.loads(plain)["sim"]["events"] > 0
    # saved with --baseline too: the file is the run's (not the baseline's), line for line as its
    # stored recording exports
    db = tmp_path / "p.db"
    code, out, err = run(
        [
            "sim",
            str(f),
            "--json",
            "--deterministic",
            "--baseline",
            "--save",
            "--db",
            str(db),
            "--ftrace",
            str(tmp_path / "b.txt"),
        ],
        capsys,
    )
    assert code == 0, err
    rid = json.loads(out)["result"]["recording_id"]
    store = Store(db)
    rec = store.get_recording(rid)
    assert rec is not None
    exported = b"".join(recording_text(store, rec)).splitlines()
    store.close()
    saved = (tmp_path / "b.txt").read_bytes().splitlines()
    assert [ln for ln in saved if not ln.startswith(b"#")] == [
        ln for ln in exported if not ln.startswith(b"#")
    ]
    assert [ln for ln in saved if not ln.startswith(b"#")] == events


def test_ftrace_is_refused_where_it_cannot_be_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    out = tmp_path / "x.txt"
    code, _, err = run(["sim", str(f), "--baseline", "--seeds", "3", "--ftrace", str(out)], capsys)
    assert code == 2 and "--ftrace" in err
    code, _, err = run(["sim", str(f), "--sweep", "workers=2,4", "--ftrace", str(out)], capsys)
    assert code == 2 and "--ftrace" in err
    code, _, err = run(["sim", str(f), "--ftrace", str(tmp_path / "no" / "x.txt")], capsys)
    assert code == 2 and "cannot write" in err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**SCENARIO, "hints": ["nope"]}))
    code, _, err = run(["sim", str(bad), "--ftrace", str(out)], capsys)
    assert code == 2 and "hints" in err
    assert not out.exists(), "a bad scenario makes no file"


def test_ftrace_leaves_no_file_when_the_run_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SCENARIO))
    out = tmp_path / "x.txt"
    monkeypatch.setenv("PLACEMAP_SIM_MAX_SAVED_EVENTS", "10")  # the saved run stops at its 11th event
    code, _, err = run(
        ["sim", str(f), "--save", "--db", str(tmp_path / "p.db"), "--ftrace", str(out)], capsys
    )
    assert code == 2 and "duration_ms" in err
    assert not out.exists(), "no file that looks whole and is not"
