"""The simulator keeps its own copy of the event columns and kind codes (it stays free of pyarrow,
which the generated schema module imports): this holds the copy to the generated schema."""

from __future__ import annotations

from placemap.schema.events import COLUMNS, Kind
from placemap.sim import trace


def test_sim_columns_are_schema_columns_in_schema_order() -> None:
    assert set(trace.COLUMNS) <= set(COLUMNS), set(trace.COLUMNS) - set(COLUMNS)
    assert list(trace.COLUMNS) == [c for c in COLUMNS if c in trace.COLUMNS]


def test_sim_kind_codes_are_the_schema_codes() -> None:
    for name in ("WAKEUP_NEW", "WAKING", "WAKEUP", "MIGRATE", "SWITCH", "FORK", "EXIT"):
        assert getattr(trace, name) == Kind[name], name
