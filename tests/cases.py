"""Test tables: each row is a dataclass carrying the id pytest shows and the reason it exists.

A table of tuples says what each row holds but not why it is there; when a row fails, or looks
redundant, its reason is what tells the reader whether the code or the row is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pytest


class Row(Protocol):
    """What a table needs of a row, whatever else it holds."""

    @property
    def id(self) -> str:
        """A short name for pytest's output and `-k`."""

    @property
    def reason(self) -> str:
        """What the row protects."""


@dataclass(frozen=True)
class Case:
    """One row of a table: `id` names it in pytest's output, `reason` says what it protects."""

    id: str
    reason: str


def table(cases: Sequence[Row]) -> pytest.MarkDecorator:
    """Parametrize a test over `cases`, passed as its `case` argument."""
    ids = [c.id for c in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        msg = f"case ids must be unique in a table: {repeated}"
        raise ValueError(msg)
    unexplained = [c.id for c in cases if not c.reason.strip()]
    if unexplained:
        msg = f"cases without a reason: {unexplained}"
        raise ValueError(msg)
    return pytest.mark.parametrize("case", cases, ids=ids)
