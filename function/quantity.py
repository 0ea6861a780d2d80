"""Kubernetes memory and storage quantities (`16Gi`, `512M`, `17244293365`) as bytes, and back.

A leaf module: standard library only.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import Final

# What the API server accepts for a quantity (a sign, a decimal, a suffix or an exponent),
# except a negative value, which no size can be.
_QUANTITY: Final = re.compile(
    r"^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([KMGTPE]i?|k|m)|[eE]([+-]?[0-9]+))?$"
)
_FACTOR: Final = MappingProxyType(
    {
        None: 1,
        "m": 10**-3,
        "k": 10**3,
        "K": 10**3,
        "M": 10**6,
        "G": 10**9,
        "T": 10**12,
        "P": 10**15,
        "E": 10**18,
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
        "Pi": 2**50,
        "Ei": 2**60,
    }
)
GIB: Final = 2**30


def to_bytes(quantity: str | int) -> int:
    """The number of bytes a quantity stands for, rounded up.

    Raises:
        ValueError: not a memory or storage quantity.
    """
    match = _QUANTITY.match(str(quantity).strip())
    if match is None:
        msg = f"{quantity!r} is not a quantity such as 16Gi or 17244293365"
        raise ValueError(msg)
    factor = 10 ** int(match.group(3)) if match.group(3) else _FACTOR[match.group(2)]
    return math.ceil(float(match.group(1)) * factor)


def binary(size: int) -> str:
    """Bytes as the largest exact binary unit: 536870912 -> `512Mi`; odd sizes stay bytes."""
    for suffix, unit in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if size and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


def with_headroom_gib(size: int, headroom_percent: int) -> str:
    """A PVC request for `size` bytes plus headroom, rounded up to whole GiB (at least 1Gi)."""
    wanted = size * (100 + headroom_percent) / 100
    return f"{max(math.ceil(wanted / GIB), 1)}Gi"
