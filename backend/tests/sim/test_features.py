"""Toggle names and validation: hints one per category, features named exactly as in
placement-model.md section 3, errors that name the field; and where the sources read each toggle
(FEATURE_DECISIONS), held to the table by walking them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import placemap.sim
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
    assert set(FEATURE_DECISIONS) == set(FEATURE_NAMES) | set(HINTS)


SIM = Path(placemap.sim.__file__).parent
HINT_BITS = {f"HINT_{name.upper()}": name for name in HINTS}


def toggle_reads() -> dict[str, set[str]]:
    """Every function of the simulator (module.function, as FEATURE_DECISIONS names them) that
    reads a feature switch (an attribute of that name) or a hint bit (HINT_*, or a module constant
    built from them), features.py itself aside (it defines and parses them)."""
    trees = {p: ast.parse(p.read_text()) for p in sorted(SIM.rglob("*.py")) if p.name != "features.py"}
    # module constants built from hint bits (balance.HOLDING_HINTS), wherever they are used
    aliases = {
        t.id: {HINT_BITS[n.id] for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in HINT_BITS}
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }
    reads: dict[str, set[str]] = {}
    for path, tree in trees.items():
        module = path.stem
        # and the names a module imports them under (`from ... import HOLDING_HINTS as HOLD`)
        local = dict(aliases)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.asname and (a.name in HINT_BITS or a.name in aliases):
                        local[a.asname] = {HINT_BITS[a.name]} if a.name in HINT_BITS else aliases[a.name]
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                _visit(node, f"{module}.{node.name}", local, reads)
            elif isinstance(node, ast.ClassDef):
                for m in node.body:
                    if isinstance(m, ast.FunctionDef):
                        _visit(m, f"{module}.{node.name}.{m.name}", local, reads)
    return reads


def _visit(fn: ast.AST, name: str, aliases: dict[str, set[str]], reads: dict[str, set[str]]) -> None:
    for n in ast.walk(fn):
        if isinstance(n, ast.Attribute) and n.attr in FEATURE_NAMES:
            reads.setdefault(n.attr, set()).add(name)
        elif isinstance(n, ast.Name):
            for toggle in {HINT_BITS[n.id]} if n.id in HINT_BITS else aliases.get(n.id, set()):
                reads.setdefault(toggle, set()).add(name)


def test_each_toggle_is_read_only_where_its_table_says() -> None:
    """A toggle can change only the decisions of the functions that read it: the sources read
    each one exactly where FEATURE_DECISIONS says (a new read elsewhere, or one gone, fails)."""
    reads = toggle_reads()
    assert reads == {k: set(v) for k, v in FEATURE_DECISIONS.items()}


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
