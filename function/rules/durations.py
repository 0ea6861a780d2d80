"""Gateway API durations (`1h30m`, `90s`, `500ms`), as runtime configs and services write them."""

from __future__ import annotations

import re
from typing import Final

_DURATION_PART: Final = re.compile(r"([0-9]{1,5})(ms|h|m|s)")
_MAX_DURATION_LENGTH: Final = 32
_UNIT_SECONDS: Final = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def duration_seconds(text: str) -> float | None:
    """Seconds in a duration (`1h30m`), as `caching.retention` or `scaleToZero` take it.

    Admission holds the fields to the pattern; a value that slipped past it gives None (the
    caller falls back to the default) rather than being read as "nothing".
    """
    parts = _DURATION_PART.findall(text) if len(text) <= _MAX_DURATION_LENGTH else []
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(int(n) * _UNIT_SECONDS[u] for n, u in parts)
