"""Events for conditions that changed, so `kubectl describe` tells an object's story.

Warnings already report what failed or degraded. What went right, or moved on (a template
discovered, a service's pods turning Ready), would leave no trace but the current condition; one
Normal event per transition keeps the sequence. A transition is a condition whose status or
reason differs from the one last told: the server remembers what it told each XR
(function/server/told.py), and falls back to the conditions the object carries, as Crossplane
last wrote them, when it does not (after a restart). A condition that works but warns
(`Condition.warn`, a missing default runtime config) is told once too, as a Warning: on every
call it would repeat, for as long as the cluster is so set up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from function.kube.contract import Notice
from function.rules.status import Condition, ConditionStatus

Said = Mapping[str, tuple[str, str]]
"""Conditions as an event told them: (status, reason) by condition type."""


def carried(composite: Mapping[str, JsonValue]) -> dict[str, tuple[str, str]]:
    """The conditions `composite` carries in its status; entries of the wrong shape left out."""
    status = composite.get("status")
    had = status.get("conditions") if isinstance(status, dict) else None
    out: dict[str, tuple[str, str]] = {}
    for c in had if isinstance(had, list) else []:
        match c:
            case {"type": str(kind), "status": str(state), "reason": str(reason)}:
                out[kind] = (state, reason)
    return out


def said(conditions: Sequence[Condition]) -> dict[str, tuple[str, str]]:
    """`conditions` as `Said`: what remains true of them once told."""
    return {c.type: (c.status.value, c.reason) for c in conditions}


def transitions(
    before: Said,
    conditions: Sequence[Condition],
    warnings: Sequence[str] = (),
) -> list[Notice]:
    """One message per condition that changed since `before`.

    Conditions still being resolved (Unknown) are not news yet; those whose message is already
    a warning of this call, or was told by an earlier condition of it (a template's Progressing
    repeats its Discovered), are not said twice.
    """
    told = set(warnings)
    notices = []
    for c in conditions:
        if (
            c.status is ConditionStatus.UNKNOWN
            or before.get(c.type) == (c.status.value, c.reason)
            or c.message in told
        ):
            continue
        notices.append(
            Notice(
                f"{c.type} is {c.status}: {c.reason}" + (f": {c.message}" if c.message else ""),
                c.reason if c.warn else None,
            )
        )
        if c.message:
            told.add(c.message)
    return notices
