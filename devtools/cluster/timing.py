"""Wall times of the end-to-end tier, printed at the end of the run (the conftest's summary)."""

from __future__ import annotations

TIMES: dict[str, float] = {}
