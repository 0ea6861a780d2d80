"""The benchmarks' shared command-line values: a bad count or size list is argparse's usage error
naming the flag, before any cluster or server starts."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from benchmarks.args import at_least, size_list
from tests.cases import Case, table


@dataclass(frozen=True)
class Sizes(Case):
    text: str
    parsed: list[int] | None


SIZES = [
    Sizes("two", "sizes in the order given", "100,1000", [100, 1000]),
    Sizes("zero", "a batch of no services measures nothing", "100,0", None),
    Sizes("word", "not a number", "ten", None),
    Sizes("empty-item", "a trailing comma is a typo, not a size", "10,", None),
]


@table(SIZES)
def test_a_size_list_is_whole_numbers_of_at_least_one(case: Sizes) -> None:
    """`--sizes` parses to the numbers, or is refused naming the flag."""
    if case.parsed is not None:
        assert size_list(case.text) == case.parsed
        return
    with pytest.raises(argparse.ArgumentTypeError, match="--sizes must be whole numbers"):
        size_list(case.text)


def test_a_count_below_its_minimum_is_refused_naming_the_flag_and_the_minimum() -> None:
    """`--namespaces 0` would divide services among no namespaces: refused, saying the least."""
    parse = at_least(1, "--namespaces")
    assert parse("10") == 10
    for text in ("0", "-3", "many"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"--namespaces must be .* at least 1"):
            parse(text)
