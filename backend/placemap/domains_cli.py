"""`placemap domains PRESET|FILE [--cpu N] [--no-mc] [--json]`: the sched domains the simulator
builds for a machine, printed as the kernel prints its own at boot with `sched_verbose`
(sched_domain_debug(): "CPU0 attaching sched-domain(s):", one "domain-N: span=... level=..." line
and one "groups:" line per level), so that the model's domains can be put beside a real machine's
dmesg line for line; then each domain's parameters as the kernel's debugfs shows them
(/sys/kernel/debug/sched/domains/cpuN/domainM: flags, imbalance_pct, intervals) and the NUMA
imbalance allowance.

Owns only the printing: SchedDomains (placemap.sim.domains) builds the domains."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from placemap.sim.domains import Domain, SchedDomains, flag_names
from placemap.sim.errors import ScenarioError
from placemap.sim.topology import PRESETS, Topology, load

CAPACITY_SCALE = 1024  # SCHED_CAPACITY_SCALE: every CPU's capacity in the model


def cpulist(cpus: tuple[int, ...] | list[int]) -> str:
    """The kernel's %*pbl: ascending CPUs as ranges, "0-2,48-50"."""
    out: list[str] = []
    run: list[int] = []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [c]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _group(g: tuple[int, ...]) -> str:
    """One group as sched_domain_debug_one() prints it: its first CPU as the id, its span, and its
    capacity when it is not one CPU's."""
    cap = CAPACITY_SCALE * len(g)
    return f"{g[0]}:{{ span={cpulist(g)}{'' if cap == CAPACITY_SCALE else f' cap={cap}'} }}"


def dmesg_text(sd: SchedDomains, cpu: int) -> str:
    """sched_domain_debug() for one CPU: what dmesg shows with sched_verbose."""
    doms = sd.per_cpu[cpu]
    if not doms:
        return f"CPU{cpu} attaching NULL sched-domain.\n"
    lines = [f"CPU{cpu} attaching sched-domain(s):"]
    for level, d in enumerate(doms):
        lines.append(f"{' ' * level} domain-{level}: span={cpulist(d.span)} level={d.name}")
        lines.append(f"{' ' * (level + 1)} groups: " + ", ".join(_group(g) for g in d.groups))
    return "\n".join(lines) + "\n"


def _params(d: Domain) -> dict[str, Any]:
    return {
        "name": d.name,
        "span": list(d.span),
        "groups": [list(g) for g in d.groups],
        "flags": flag_names(d.flags),
        "imbalance_pct": d.imbalance_pct,
        "cache_nice_tries": d.cache_nice_tries,
        "min_interval_ms": d.min_interval_ms,
        "max_interval_ms": d.max_interval_ms,
        "busy_factor": d.busy_factor,
        "imb_numa_nr": d.imb_numa_nr,
        "numa_distance": d.numa_distance,
    }


def params_text(sd: SchedDomains, cpu: int) -> str:
    """Each domain's parameters, one line per /sys/kernel/debug/sched/domains/cpuN/domainM."""
    lines = []
    for level, d in enumerate(sd.per_cpu[cpu]):
        p = _params(d)
        numa = f" numa_distance {p['numa_distance']}" if p["numa_distance"] else ""
        lines.append(
            f"cpu{cpu}/domain{level} {p['name']}: flags {' '.join(p['flags'])}; imbalance_pct "
            f"{p['imbalance_pct']} cache_nice_tries {p['cache_nice_tries']} min_interval "
            f"{p['min_interval_ms']} max_interval {p['max_interval_ms']} busy_factor "
            f"{p['busy_factor']} imb_numa_nr {p['imb_numa_nr']}{numa}"
        )
    return "\n".join(lines) + "\n"


def read_topology(arg: str) -> Topology:
    """A preset by name, or a Topology JSON file (`placemap-collect topology --json`)."""
    if arg in PRESETS:
        return load(arg)
    return load(json.loads(Path(arg).read_text()))


def _domains(args: argparse.Namespace) -> int:
    try:
        topo = read_topology(args.topology)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        print(f"placemap domains: cannot read {args.topology}: {exc}", file=sys.stderr)
        return 2
    except ScenarioError as exc:
        print(f"placemap domains: {args.topology}: {exc}", file=sys.stderr)
        return 2
    cpu = args.cpu
    if not 0 <= cpu < topo.nr_cpus or not topo.online[cpu]:
        print(f"placemap domains: --cpu {cpu}: not an online CPU of {topo.name}", file=sys.stderr)
        return 2
    sd = SchedDomains(topo, no_mc=args.no_mc)
    if args.json:
        doms = [_params(d) for d in sd.per_cpu[cpu]]
        print(json.dumps({"machine": topo.name, "cpu": cpu, "domains": doms}))
        return 0
    sys.stdout.write(dmesg_text(sd, cpu))
    sys.stdout.write(params_text(sd, cpu))
    return 0


def register(sub: Any) -> None:
    """Add the `domains` subcommand to the main parser's subparsers."""
    p = sub.add_parser(
        "domains",
        help="print the sched domains the simulator builds for a machine, as the kernel's dmesg "
        "(sched_verbose) shows its own",
    )
    p.add_argument("topology", metavar="PRESET|FILE", help="a preset name or a Topology JSON file")
    p.add_argument("--cpu", type=int, default=0, help="the CPU whose domains to print (default 0)")
    p.add_argument("--no-mc", action="store_true", help="without the MC domain (the NO_MC feature)")
    p.add_argument("--json", action="store_true", help="the domains and their parameters as JSON")
    p.set_defaults(func=_domains)
