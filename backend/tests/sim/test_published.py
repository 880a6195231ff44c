"""The published feature checks (placemap.sim.published) are valid scenarios that differ only
in the features, and their agreement rule is the one documented."""

from __future__ import annotations

import pytest

from placemap.sim.features import Features
from placemap.sim.published import CHECKS, Check, agrees
from placemap.sim.scenario import parse_scenario


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: f"{c.feature}-{c.topology}-{c.workload['kind']}")
def test_each_check_is_two_valid_scenarios_that_differ_only_in_features(check: Check) -> None:
    base, test = (parse_scenario(sc) for sc in check.scenarios())
    assert base.topology.name == test.topology.name == check.topology
    assert base.workload_spec == test.workload_spec and base.hints == test.hints == 0
    assert base.features != test.features  # the change is in the features alone
    assert Features() in (base.features, test.features)  # one side is the default kernel


def test_agreement_wants_the_published_direction_beyond_rounding_or_a_neutral_model() -> None:
    assert agrees(35.6, 3.4) and agrees(-29.8, -2.0)
    assert not agrees(665.4, 0.0004)  # a change within rounding is no direction
    assert not agrees(-29.8, 4.9) and not agrees(11.8, -0.5)
    assert agrees(1.7, 3.5) and agrees(0.0, -4.9)
    assert not agrees(0.0, 6.4) and not agrees(-0.4, 5.1)
