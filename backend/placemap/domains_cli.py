"""`placemap domains PRESET|FILE [--cpu N] [--no-mc] [--json]`: the sched domains the simulator
builds for a machine (a preset, or a host's `placemap-collect topology --json` file), printed by
domains_text as the kernel prints its own at boot with `sched_verbose`, then their parameters."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from placemap.domains_text import dmesg_text, domain_params, params_text
from placemap.sim.domains import SchedDomains
from placemap.sim.errors import ScenarioError
from placemap.sim.topology import load
from placemap.sim_cli import topology_spec


def _domains(args: argparse.Namespace) -> int:
    try:
        topo = load(topology_spec(args.topology))
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
        doms = [domain_params(d) for d in sd.per_cpu[cpu]]
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
    p.add_argument(
        "topology",
        metavar="PRESET|FILE",
        help="a preset name or a Topology JSON file (-: read it from stdin)",
    )
    p.add_argument("--cpu", type=int, default=0, help="the CPU whose domains to print (default 0)")
    p.add_argument("--no-mc", action="store_true", help="without the MC domain (the NO_MC feature)")
    p.add_argument("--json", action="store_true", help="the domains and their parameters as JSON")
    p.set_defaults(func=_domains)
