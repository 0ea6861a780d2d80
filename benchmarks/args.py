"""Command-line values the benchmarks share: counts and lists of sizes.

Each is refused with the flag named when it is not a whole number or falls below what the
benchmark needs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def at_least(minimum: int, flag: str) -> Callable[[str], int]:
    """An argparse `type` for a whole number of at least `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            msg = f"{flag} must be a whole number of at least {minimum}, not {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return parse


def size_list(text: str) -> list[int]:
    """`--sizes`: comma-separated whole numbers, each at least 1."""
    try:
        values = [int(s) for s in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        msg = f"--sizes must be whole numbers of at least 1, comma-separated, not {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return values
