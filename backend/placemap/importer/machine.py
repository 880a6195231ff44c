"""The machine a trace was recorded on, when the person importing it names one: a simulator preset
by name, or a topology file (`placemap-collect topology --json` of the host), as a topology body in
the project's schema; the check that its LLCs are numbered as the schema has them (figures by LLC
index by a CPU's llc); and the check that the machine has every CPU the trace names (a CPU it lacks
would sit in no LLC and no node, and every figure by LLC would be wrong)."""

from __future__ import annotations

from typing import Any

from placemap.domains_text import cpulist
from placemap.schema.models.topology_schema import Topology
from placemap.sim.topology import PRESETS, preset


def preset_topology(name: str) -> dict[str, Any]:
    """The preset `name`'s topology, validated, in the schema's JSON form (source "preset");
    KeyError for a name that is no preset."""
    if name not in PRESETS:
        raise KeyError(name)
    return Topology.model_validate(preset(name).to_dict()).model_dump(mode="json", exclude_none=True)


def llc_index_problem(topology: Topology) -> str | None:
    """Why `topology`'s LLCs are not numbered as the schema has them (each LLC's id its index in
    llcs, each CPU's llc one of those), named; None when they are. Busy time by LLC and the wakeups
    by LLC pair count at a CPU's llc as an index: an id outside them would be dropped unseen."""
    n = len(topology.llcs)
    ids = [llc.id for llc in topology.llcs]
    if ids != list(range(n)):
        shown = ", ".join(str(i) for i in ids[:8]) + (", ..." if n > 8 else "")
        return f"llcs: their ids must be 0..{n - 1} in order (each LLC's index), not {shown}"
    for c in topology.cpus:
        if c.llc is not None and not 0 <= c.llc < n:
            listed = (
                f"one of the {n} LLCs listed (ids 0..{n - 1})" if n else "an LLC: the topology lists none"
            )
            return f"cpus: CPU {c.cpu}'s llc {c.llc} is not {listed}"
    return None


def machine_mismatch(cpus: set[int], topology: Topology) -> str | None:
    """Why the trace whose events name `cpus` cannot be read on `topology` (the CPUs the machine
    does not have online, named), or None when it has them all."""
    online = {c.cpu for c in topology.cpus if c.online}
    missing = sorted(cpus - online)
    if not missing:
        return None
    shown = ", ".join(str(c) for c in missing[:8]) + (
        f" and {len(missing) - 8} more" if len(missing) > 8 else ""
    )
    ranges = cpulist(sorted(online)).split(",") if online else []
    listed = ",".join(ranges[:8]) + (f",... ({len(ranges) - 8} more ranges)" if len(ranges) > 8 else "")
    has = f"CPUs {listed}" if online else "no CPU"
    return (
        f"the trace names CPU {shown}, which the machine {topology.machine} given for it does not have "
        f"online (it has {has} online): import it with the machine it was recorded on, or with none "
        "(its topology then inferred from the trace)"
    )
