"""KEDA's HTTP add-on and KEDA idling a workload at zero; `aim plan` runs neither (e2e runs both).

The operator reports an HTTPScaledObject Ready (and makes a ScaledObject of its name, which the
function does not read); KEDA's HPA `keda-hpa-<name>` finds no request waiting and the target at
zero pods, and the HPA controller writes it then: no current count, scaling disabled. That HPA
is how the function tells a service is scaled to zero (`function/compose/service/scaling.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_plan.standins.conditions import true


def is_reconciled(scaled: Mapping[str, Any]) -> bool:
    """Whether the add-on's operator already reported the HTTPScaledObject."""
    conditions = (scaled.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" for c in conditions)


def reconciled(at: str) -> dict[str, Any]:
    """The HTTPScaledObject's status once the add-on's operator has taken it."""
    return {"conditions": [true("Ready", at, "Reconciled")]}


def idle_hpa(scaled: Mapping[str, Any], at: str) -> dict[str, Any]:
    """KEDA's HPA of the HTTPScaledObject, as the HPA controller writes it at zero pods."""
    meta = scaled["metadata"]
    disabled = {
        "type": "ScalingActive",
        "status": "False",
        "reason": "ScalingDisabled",
        "lastTransitionTime": at,
    }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"keda-hpa-{meta['name']}", "namespace": meta["namespace"]},
        "status": {"desiredReplicas": 0, "conditions": [true("AbleToScale", at), disabled]},
    }
