"""The condition every stand-in writes when what it reports holds."""

from __future__ import annotations

from typing import Any


def true(kind: str, at: str, reason: str | None = None) -> dict[str, Any]:
    """A True condition of type `kind`, written at `at`.

    With a `reason`, the empty message Kubernetes' own controllers write beside it; without,
    none: KServe's conditions are Knative's, and a True one of those carries no reason.
    """
    condition: dict[str, Any] = {"type": kind, "status": "True", "lastTransitionTime": at}
    if reason is not None:
        condition |= {"reason": reason, "message": ""}
    return condition
