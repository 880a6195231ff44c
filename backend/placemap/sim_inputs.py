"""What a scenario reads from outside the simulator: a trace workload's recording (from the store) or
trace file (through the importer). Only the test, light enough for the command line to make before it
imports any of the machinery that reads them (placemap.sim_profile resolves them into a profile)."""

from __future__ import annotations

from typing import Any


def trace_input(scenario: Any) -> str | None:
    """How the scenario's trace workload names its recording: "recording", "file", or None (not a
    trace, or one given as a profile)."""
    wl = scenario.get("workload") if isinstance(scenario, dict) else None
    if not isinstance(wl, dict) or wl.get("kind") != "trace":
        return None
    return next((k for k in ("recording", "file") if k in wl), None)
