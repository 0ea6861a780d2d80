"""KServe's controller, which reports an InferenceService serving; it needs a node to serve on.

It writes only the InferenceService's status: Ready with its URL once the predictor could start,
which is once every claim it mounts is Bound (a Pod cannot start before), and until then (where
a caller reports it: the end-to-end journeys) PredictorReady and Ready False saying why. The
function reads Ready, its message and the URL; the conditions are KServe's (Knative's) shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aim_plan.standins.conditions import true


def is_ready(isvc: Mapping[str, Any]) -> bool:
    """Whether KServe already reports the InferenceService Ready."""
    conditions = (isvc.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def unbound_claims(isvc: Mapping[str, Any], bound: Callable[[str], bool]) -> list[str]:
    """The claims the predictor mounts that are not Bound (`bound` tells), which it waits for."""
    predictor = (isvc.get("spec") or {}).get("predictor") or {}
    claims = [
        (volume.get("persistentVolumeClaim") or {}).get("claimName")
        for volume in predictor.get("volumes") or []
    ]
    return [str(claim) for claim in claims if claim and not bound(str(claim))]


def ready(namespace: str, name: str, at: str) -> dict[str, Any]:
    """The InferenceService's status once it serves: its URL, PredictorReady and Ready."""
    return {
        "url": f"http://{name}.{namespace}.example.com",
        "conditions": [true("PredictorReady", at), true("Ready", at)],
    }


def not_ready(why: str) -> dict[str, Any]:
    """The InferenceService's status while its predictor cannot start, saying `why`.

    Why is an image it cannot pull or a claim not Bound, in both conditions the function reads.
    """
    return {
        "conditions": [
            {"type": kind, "status": "False", "reason": "PodsNotReady", "message": why}
            for kind in ("PredictorReady", "Ready")
        ]
    }


def says(isvc: Mapping[str, Any], why: str) -> bool:
    """Whether KServe already said `why` (it writes a status once per change)."""
    conditions = (isvc.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "PredictorReady" and c.get("message") == why for c in conditions)
