"""The suite's own rules: every test says what it protects."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.cases import Case, table

TESTS = Path(__file__).resolve().parents[2]


def test_every_test_has_a_docstring_saying_what_it_protects() -> None:
    """A test without one leaves the next reader to guess why it exists, or whether it may go."""
    missing = [
        f"{path.relative_to(TESTS)}::{node.name}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
        and not ast.get_docstring(node)
    ]
    assert not missing, "tests without a docstring:\n" + "\n".join(missing)


def _literal_tables(path: Path) -> list[str]:
    """Parametrize decorators whose values are a list written out in the file (directly or through
    a module-level name) rather than discovered (examples on disk, kinds from the XRDs) or the keys
    of a mapping (the valid spec of each kind)."""
    tree = ast.parse(path.read_text())
    literals = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.List | ast.Tuple | ast.Set)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.mark.parametrize"):
            continue
        values = node.args[1] if len(node.args) > 1 else None
        names = {n.id for n in ast.walk(values) if isinstance(n, ast.Name)} if values else set()
        if isinstance(values, ast.List | ast.Tuple | ast.Set) or names & literals:
            found.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    return found


def test_tables_are_cases_with_reasons() -> None:
    """A row written by hand carries why it exists (tests/cases.py); a bare tuple does not.
    Parametrizing over what is discovered (every example, every kind) stays as it is."""
    found = [where for path in sorted(TESTS.rglob("test_*.py")) for where in _literal_tables(path)]
    assert not found, "tables of tuples; use tests/cases.table:\n" + "\n".join(found)


def test_a_table_refuses_rows_it_could_not_tell_apart_or_explain() -> None:
    """Two rows with one id would share a name in pytest's output and in `-k`; a row without a
    reason is the bare tuple the rule above exists to prevent."""
    with pytest.raises(ValueError, match="unique"):
        table([Case("a", "one reason"), Case("a", "another")])
    with pytest.raises(ValueError, match="without a reason"):
        table([Case("a", " ")])


# Folders of tests/unit that test what function/ does not hold, with why.
_UNIT_EXTRAS = {
    "builders": "function/build's tests: pytest does not collect folders named build",
    "migrate": "aim_migrate/",
    "plan": "aim_plan/",
    "devtools": "devtools/",
    "repo": "the repository as a whole: the Dockerfile, RBAC, layering, the suite's own rules",
}


def test_unit_tests_mirror_function() -> None:
    """A unit test sits in the folder of function/ it tests (or a named extra), so the test of a
    module is found where the module is; none is left loose at the top of tests/unit."""
    unit = TESTS / "unit"
    function = TESTS.parent / "function"
    loose = sorted(p.name for p in unit.glob("test_*.py"))
    assert not loose, f"tests at the top of tests/unit: {loose}"
    strays = [
        str(d.relative_to(unit))
        for d in sorted(unit.rglob("*"))
        if d.is_dir()
        and any(d.glob("test_*.py"))
        and not (function / d.relative_to(unit)).is_dir()
        and d.relative_to(unit).parts[0] not in _UNIT_EXTRAS
    ]
    assert not strays, f"test folders with no counterpart in function/: {strays}"
