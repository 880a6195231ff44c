"""Errors of the simulator. A ScenarioError names the scenario field at fault."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A bad scenario: unknown preset, hint or feature, or an impossible parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[str, str]]:
        """Pickled by its two fields, so that a worker process's error (runner.run_many) reaches
        the parent as itself, naming its field (the default pickling rebuilds an exception from
        its one message, which this __init__ does not take)."""
        return (ScenarioError, (self.field, self.message))
