"""Text from users, registries, pods and other controllers, cut to what a message can carry.

What another controller writes is read by type and cut at a bound: a word (a type, status,
reason, phase or name) at `MAX_WORD` characters, a message at `MAX_MESSAGE`; what is quoted to a
user is cut shorter, with a mark that it was (`cut`).
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

MAX_WORD: Final = 1024
"""A condition's type, status or reason, a phase, a name: the API server allows a condition's
reason 1,024 characters, and the rest less. Compared with known values, or quoted."""
MAX_MESSAGE: Final = 32 * 1024
"""A condition's message: the API server allows 32,768 characters. Quoting callers cut it more."""


def cut(text: str, most: int) -> str:
    """`text`, or its first `most` characters and `...` when it is longer."""
    return text if len(text) <= most else text[:most] + "..."


def word(value: JsonValue | None) -> str:
    """A short string another controller wrote: itself cut at `MAX_WORD`, else empty."""
    return value[:MAX_WORD] if isinstance(value, str) else ""


def text(value: JsonValue | None, limit: int = MAX_MESSAGE) -> str:
    """A message another controller wrote: itself cut at `limit`, else empty."""
    return value[:limit] if isinstance(value, str) else ""
