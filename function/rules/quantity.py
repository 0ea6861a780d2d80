"""Kubernetes quantities (`16Gi`, `512M`, `500m`, `17244293365`): exact values, bytes, and back.

A leaf module: standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Final, NoReturn

from function.rules.text import cut

# What the API server accepts for a quantity (a sign, a decimal, a suffix or an exponent),
# except a negative value, which no size can be.
_QUANTITY: Final = re.compile(
    r"^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([KMGTPE]i?|k|m)|[eE]([+-]?[0-9]+))?$"
)
# Kubernetes quantities are int64 underneath (about 9.2e18 bytes, just under 8Ei). No size anyone
# writes needs more than 64 characters, or an exponent beyond 19.
MAX_BYTES: Final = 2**63 - 1
_MAX_EXPONENT: Final = 19
_MAX_LENGTH: Final = 64
_FACTOR: Final[Mapping[str | None, int | Decimal]] = MappingProxyType(
    {
        None: 1,
        "m": Decimal("0.001"),
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
        ValueError: not a memory or storage quantity, or larger than Kubernetes allows (8Ei).
    """
    return math.ceil(amount(quantity))


def amount(quantity: str | int) -> Decimal:
    """The exact value of a quantity: `500m` is 0.5, `2Gi` 2147483648.

    Exact decimal arithmetic with the exponent bounded first, so `1e400` or `1e9999999` is an
    error in microseconds rather than an overflow or seconds of big-number arithmetic.

    Raises:
        ValueError: not a quantity, or larger than Kubernetes allows (int64).
    """
    text = str(quantity).strip()
    match = _QUANTITY.match(text) if len(text) <= _MAX_LENGTH else None
    if match is None:
        msg = f"{_shown(text)!r} is not a quantity such as 16Gi or 17244293365"
        raise ValueError(msg)
    number = Decimal(match.group(1))
    if match.group(3):
        exponent = int(match.group(3))
        if number and number.adjusted() + exponent > _MAX_EXPONENT:
            _too_large(text)
        # Beyond the bounds the size is 0, too large (refused above) or rounds up to one byte.
        size = number.scaleb(min(max(exponent, -_MAX_EXPONENT), _MAX_EXPONENT))
    else:
        size = number * _FACTOR[match.group(2)]
    if size > MAX_BYTES:
        _too_large(text)
    return Decimal(size)


def _too_large(text: str) -> NoReturn:
    msg = f"{_shown(text)!r} is larger than the {MAX_BYTES} bytes a Kubernetes quantity holds"
    raise ValueError(msg)


def _shown(text: str) -> str:
    return cut(text, _MAX_LENGTH)


def binary(size: int) -> str:
    """Bytes as the largest exact binary unit: 536870912 -> `512Mi`; odd sizes stay bytes."""
    for suffix, unit in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if size and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


def gib_text(size: int) -> str:
    """Bytes in GiB to one decimal, for people reading progress: 4509715660 -> `4.2 GiB`."""
    return f"{size / GIB:.1f} GiB"


def with_headroom_gib(size: int, headroom_percent: int) -> str:
    """A PVC request for `size` bytes plus headroom, rounded up to whole GiB (at least 1Gi)."""
    wanted = size * (100 + headroom_percent) / 100
    return f"{max(math.ceil(wanted / GIB), 1)}Gi"
