"""What a download's pod says of it, read with bounds: its progress report and its check.

The report is a ConfigMap the download pod's sidecar patches (build/progress.py); the check's
verdict is the verify container's termination message (build/verify.py). Both came from a pod,
so every value is checked (digits only, sane lengths, a real time) and what fails a check is
ignored rather than believed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from function.api.cache import Verification
from function.api.meta import Manifest
from function.kube.contract import Requirement
from function.rules import jsontext, quantity
from function.rules.discovery import rfc3339, timestamp

KEY: Final = "download-report"
_MAX_DIGITS: Final = 19  # bytes that fit an int64, as the API's int fields do
_MAX_WORDS: Final = 300


@dataclass(frozen=True)
class Report:
    """What the sidecar last wrote: bytes measured, when they last grew, whether it stalled."""

    downloaded_bytes: int | None = None
    grew_at: str | None = None
    updated_at: str | None = None
    stalled: str | None = None

    def percent(self, total: int | None) -> int | None:
        """Bytes downloaded of `total`, rounded down, at most 100 (sizes are estimates)."""
        if self.downloaded_bytes is None or not total:
            return None
        return min(self.downloaded_bytes * 100 // total, 100)

    def summary(self, total: int | None) -> str:
        """`4.2 GiB of 15.0 GiB (28%)`, or what is known of it; empty before the first report."""
        if self.downloaded_bytes is None:
            return ""
        done = quantity.gib_text(self.downloaded_bytes)
        percent = self.percent(total)
        if total and percent is not None:
            return f"{done} of {quantity.gib_text(total)} ({percent}%)"
        return done


def requirement(name: str, namespace: str) -> Requirement:
    """Ask Crossplane for the report's ConfigMap."""
    return Requirement(KEY, "v1", "ConfigMap", match_name=name, namespace=namespace)


def read(required: Mapping[str, tuple[Manifest, ...]]) -> Report | None:
    """The report, or None when there is none yet (or Crossplane has not fetched it)."""
    found = required.get(KEY)
    if not found:
        return None
    data = found[0].get("data")
    if not isinstance(data, dict):
        return Report()
    return Report(
        downloaded_bytes=_count(data.get("downloadedBytes")),
        grew_at=_time(data.get("grewAt")),
        updated_at=_time(data.get("updatedAt")),
        stalled=_words(data.get("stalled")),
    )


def _count(value: JsonValue) -> int | None:
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= _MAX_DIGITS:
        return int(value)
    return None


def _time(value: JsonValue) -> str | None:
    when = timestamp(value)
    return rfc3339(when) if when is not None else None


def _words(value: JsonValue) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    printable = "".join(c if c.isprintable() else " " for c in value[:_MAX_WORDS])
    return printable.strip()


def verdict(message: str | None) -> Verification | str | None:
    """The verify container's verdict: a Verification, the error it reported, or None."""
    value = jsontext.termination_object(message)
    if value is None:
        return None
    error = value.get("error")
    if isinstance(error, str):
        return _words(error) or "the check failed without saying why"
    try:
        return Verification.model_validate(
            {k: value[k] for k in ("method", "files", "bytes", "reason") if k in value}
        )
    except ValueError:
        return None
