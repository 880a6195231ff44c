"""Errors of the simulator. A ScenarioError names the scenario field at fault."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A bad scenario: unknown preset, hint or feature, or an impossible parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
