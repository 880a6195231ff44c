"""Toggle names and validation: hints one per category, features named exactly as in
placement-model.md section 3, errors that name the field."""

from __future__ import annotations

import pytest

from placemap.sim.errors import ScenarioError
from placemap.sim.features import (
    FEATURE_DECISIONS,
    FEATURE_NAMES,
    HINT_FORK_AFFINE,
    HINT_WAKE_WIDE,
    HINTS,
    Features,
    hint_names,
    parse_features,
    parse_hints,
)


def test_every_toggle_of_the_model_is_named_exactly() -> None:
    assert set(HINTS) == {"fork_affine", "fork_spread", "wake_affine", "wake_hold", "wake_wide"}
    assert set(FEATURE_NAMES) == {
        "SIS_UTIL", "SIS_SHORT", "UTIL_FITS_CAPACITY", "SELECT_BIAS_PREV", "STEAL",
        "steal_node_limit", "MM_FOOTPRINT", "NUMA_IMB_LEGACY", "NO_MC",
    }  # fmt: skip
    assert set(FEATURE_DECISIONS) == (set(FEATURE_NAMES) - {"steal_node_limit"}) | set(HINTS)


def test_defaults() -> None:
    f = Features()
    assert f.SIS_UTIL and f.steal_node_limit == 2
    assert not (f.SIS_SHORT or f.STEAL or f.NO_MC or f.NUMA_IMB_LEGACY or f.MM_FOOTPRINT)


def test_hints_combine_across_categories() -> None:
    mask = parse_hints(["fork_affine", "wake_wide"])
    assert mask == HINT_FORK_AFFINE | HINT_WAKE_WIDE
    assert hint_names(mask) == ["fork_affine", "wake_wide"]


def test_two_hints_of_one_category_are_refused() -> None:
    with pytest.raises(ScenarioError, match="only one wake hint") as e:
        parse_hints(["wake_affine", "wake_hold"])
    assert e.value.field == "hints"


def test_unknown_hint_names_its_index() -> None:
    with pytest.raises(ScenarioError) as e:
        parse_hints(["fork_affine", "wake_sideways"])
    assert e.value.field == "hints[1]"


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"SIS_UTIL": 1}, "features.SIS_UTIL"),
        ({"sis_util": True}, "features.sis_util"),
        ({"steal_node_limit": 0}, "features.steal_node_limit"),
        ([], "features"),
    ],
)
def test_bad_features_name_the_field(value: object, field: str) -> None:
    with pytest.raises(ScenarioError) as e:
        parse_features(value)
    assert e.value.field == field


def test_features_parse() -> None:
    f = parse_features({"SIS_UTIL": False, "STEAL": True, "steal_node_limit": 8})
    assert (f.SIS_UTIL, f.STEAL, f.steal_node_limit) == (False, True, 8)
