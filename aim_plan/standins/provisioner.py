"""A storage provisioner, which binds claims; no volume plugin runs where the function is tried.

It writes only the claim's status: phase Bound, with the access modes and the capacity the claim
asked for, which is what the function reads of a claim (whether it is Bound, and how big).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_bound(pvc: Mapping[str, Any]) -> bool:
    """Whether the claim is Bound (a provisioner has nothing more to do)."""
    return (pvc.get("status") or {}).get("phase") == "Bound"


def bound(pvc: Mapping[str, Any]) -> dict[str, Any]:
    """The claim's status once bound: phase Bound with the capacity it asked for."""
    spec = pvc.get("spec") or {}
    requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    return {
        "phase": "Bound",
        "accessModes": spec.get("accessModes") or [],
        "capacity": {"storage": requested},
    }
