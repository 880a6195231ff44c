"""The sched domains the simulator builds for a machine, as text the way the kernel prints its own
at boot with `sched_verbose` (sched_domain_debug(): "CPU0 attaching sched-domain(s):", one
"domain-N: span=... level=..." line and one "groups:" line per level), so that the model's domains
can be put beside a real machine's dmesg line for line; then each domain's parameters as the
kernel's debugfs shows them (/sys/kernel/debug/sched/domains/cpuN/domainM: flags, imbalance_pct,
intervals) and the NUMA imbalance allowance.

Owns only the printing, for `placemap domains` (domains_cli) and GET /api/recordings/{id}/domains:
SchedDomains (placemap.sim.domains) builds the domains."""

from __future__ import annotations

from typing import Any

from placemap.sim.domains import Domain, SchedDomains, flag_names

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


def domain_params(d: Domain) -> dict[str, Any]:
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
        p = domain_params(d)
        numa = f" numa_distance {p['numa_distance']}" if p["numa_distance"] else ""
        lines.append(
            f"cpu{cpu}/domain{level} {p['name']}: flags {' '.join(p['flags'])}; imbalance_pct "
            f"{p['imbalance_pct']} cache_nice_tries {p['cache_nice_tries']} min_interval "
            f"{p['min_interval_ms']} max_interval {p['max_interval_ms']} busy_factor "
            f"{p['busy_factor']} imb_numa_nr {p['imb_numa_nr']}{numa}"
        )
    return "\n".join(lines) + "\n"
