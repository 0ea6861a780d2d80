"""The suite's own rules: every test says what it protects."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


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
