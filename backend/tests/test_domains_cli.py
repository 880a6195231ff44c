"""`placemap domains`: the simulator's sched domains printed as the kernel's sched_domain_debug()
prints its own (dmesg with sched_verbose), for a preset laid out as the kernel numbers Zen3 and for
a real machine (the EPYC 7451 sysfs dump of ../shared/topologies read by the real collector), whose
spans the test takes from that machine's own `lscpu -p` output, not from the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from collector import TOPOLOGIES

from placemap.cli import main
from placemap.domains_text import cpulist


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cpulist_is_the_kernels_range_list() -> None:
    assert cpulist((0, 1, 2, 48, 49, 50)) == "0-2,48-50"
    assert cpulist([5]) == "5"
    assert cpulist((0, 128)) == "0,128"
    assert cpulist((3, 1, 2, 7)) == "1-3,7"


def _cores(first: int) -> list[tuple[int, int]]:
    """Zen3 2x64C/128T as Linux numbers it: core c's threads are c and c + 128."""
    return [(c, c + 128) for c in range(first, first + 8)]


def test_a_zen3_preset_prints_as_the_kernel_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["domains", "zen3-2s-nps1"], capsys)
    assert code == 0
    lines = out.splitlines()
    mc = ", ".join(f"{a}:{{ span={a},{b} cap=2048 }}" for a, b in _cores(0))
    pkg = ", ".join(
        f"{8 * k}:{{ span={8 * k}-{8 * k + 7},{8 * k + 128}-{8 * k + 135} cap=16384 }}" for k in range(8)
    )
    assert lines[:9] == [
        "CPU0 attaching sched-domain(s):",
        " domain-0: span=0,128 level=SMT",
        "  groups: 0:{ span=0 }, 128:{ span=128 }",
        "  domain-1: span=0-7,128-135 level=MC",
        f"   groups: {mc}",
        "   domain-2: span=0-63,128-191 level=PKG",
        f"    groups: {pkg}",
        "    domain-3: span=0-255 level=NUMA",
        "     groups: 0:{ span=0-63,128-191 cap=131072 }, 64:{ span=64-127,192-255 cap=131072 }",
    ]
    # then each domain's parameters, as debugfs has them: intervals of the span's weight (and twice
    # it), SMT's imbalance_pct 110, the NUMA level's flags
    assert lines[9].startswith("cpu0/domain0 SMT: flags SD_BALANCE_NEWIDLE")
    assert "imbalance_pct 110 cache_nice_tries 0 min_interval 2 max_interval 4" in lines[9]
    assert "min_interval 16 max_interval 32" in lines[10]
    assert "SD_NUMA" in lines[12] and "SD_OVERLAP" in lines[12] and "numa_distance 32" in lines[12]


def test_groups_start_at_the_cpus_own_and_wrap(capsys: pytest.CaptureFixture[str]) -> None:
    """build_sched_groups() walks the span from the CPU on, wrapping (for_each_cpu_wrap): CPU 9's MC
    groups are 9..15, then 8; CPU 200 (core 72's second thread) lists itself first at SMT."""
    _, out, _ = run(["domains", "zen3-2s-nps1", "--cpu", "9"], capsys)
    groups = out.splitlines()[4].split("groups: ")[1]
    assert [g.split(":")[0] for g in groups.split(", ")] == ["9", "10", "11", "12", "13", "14", "15", "8"]
    _, out, _ = run(["domains", "zen3-2s-nps1", "--cpu", "200"], capsys)
    assert out.splitlines()[1:3] == [
        " domain-0: span=72,200 level=SMT",
        "  groups: 200:{ span=200 }, 72:{ span=72 }",
    ]


def _lscpu(name: str) -> dict[int, dict[str, int]]:
    """`lscpu -p` of the real machine: CPU -> core, socket, node, L3 (its parse table)."""
    text = (TOPOLOGIES / "util-linux-lscpu" / f"lscpu-{name}.expected").read_text()
    out: dict[int, dict[str, int]] = {}
    for line in text.split("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3")[1].splitlines():
        f = line.split(",")
        if len(f) == 9 and f[0].isdigit():
            out[int(f[0])] = {"core": int(f[1]), "socket": int(f[2]), "node": int(f[3]), "l3": int(f[8])}
    return out


def test_a_real_epyc_7451_gets_the_domains_its_lscpu_describes(
    epyc_7451_topology: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cpus = _lscpu("x86_64-epyc_7451")
    assert len(cpus) == 96

    def same(cpu: int, key: str) -> list[int]:
        return sorted(c for c, v in cpus.items() if v[key] == cpus[cpu][key])

    for cpu in (0, 50):
        code, out, err = run(["domains", str(epyc_7451_topology), "--cpu", str(cpu)], capsys)
        assert code == 0, err
        doms = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("domain-")]
        # the dump has no node distances (every remote node at the kernel's default 20): one NUMA level
        assert doms == [
            f"domain-0: span={cpulist(same(cpu, 'core'))} level=SMT",
            f"domain-1: span={cpulist(same(cpu, 'l3'))} level=MC",
            f"domain-2: span={cpulist(same(cpu, 'node'))} level=NODE",
            "domain-3: span=0-95 level=NUMA",
        ]
        # the NUMA level's groups are the 8 nodes, its own first
        top = out.splitlines()[8].split("groups: ")[1].split(", ")
        nodes = sorted({v["node"] for v in cpus.values()})
        want = {cpulist(sorted(c for c, v in cpus.items() if v["node"] == n)) for n in nodes}
        assert {g.split("span=")[1].split(" ")[0] for g in top} == want and len(top) == 8
        assert top[0].startswith(f"{same(cpu, 'node')[0]}:")
    code, out, _ = run(["domains", str(epyc_7451_topology), "--json"], capsys)
    assert [d["name"] for d in json.loads(out)["domains"]] == ["SMT", "MC", "NODE", "NUMA"]


def test_errors_name_the_cpu_the_file_or_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["domains", "zen3-2s-nps1", "--cpu", "256"], capsys)
    assert code == 2 and out == "" and "--cpu 256: not an online CPU of zen3-2s-nps1" in err
    code, out, err = run(["domains", str(tmp_path / "nowhere.json")], capsys)
    assert code == 2 and "cannot read" in err and "nowhere.json" in err
    (tmp_path / "half.json").write_text(json.dumps({"machine": "half", "cpus": []}))
    code, out, err = run(["domains", str(tmp_path / "half.json")], capsys)
    assert code == 2 and out == "" and "topology.llcs" in err
