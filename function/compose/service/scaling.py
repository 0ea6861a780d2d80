"""How many inference pods a service runs: the bounds it asks for, and what its autoscaler has.

Fixed at `replicas` by default; with `minReplicas`/`maxReplicas`, KServe's HPA class scales
between them, and with `autoScaling.metrics` KServe's KEDA class does. The HPA class runs a
HorizontalPodAutoscaler named after the predictor, KEDA one named `keda-hpa-<predictor>`: their
status says how many pods there are and how many the autoscaler wants. Until one exists (and for
a fixed count) the bounds stand in for both.
"""

from __future__ import annotations

from typing import Final

from function.api.service import AIMServiceSpec, ReplicaStatus
from function.build.kserve import Scaling
from function.kube.objects import status_of
from function.kube.observed import Observed, Requirement

HPA: Final = "autoscaler"
"""Requirement name of the predictor's HorizontalPodAutoscaler."""
_MAX_COUNT: Final = 2**31 - 1


def bounds(spec: AIMServiceSpec) -> Scaling:
    """The replica bounds and autoscaler the spec asks for."""
    metrics = tuple(
        m.model_dump(mode="json", by_alias=True, exclude_none=True)
        for m in (spec.auto_scaling.metrics if spec.auto_scaling else ())
    )
    if spec.min_replicas is None and spec.max_replicas is None and not metrics:
        return Scaling(spec.replicas, spec.replicas)
    low = spec.min_replicas or 1
    return Scaling(low, spec.max_replicas or low, autoscaled=True, metrics=metrics)


def requirements(scaling: Scaling, namespace: str, isvc_name: str) -> list[Requirement]:
    """The autoscaler's HorizontalPodAutoscaler, where the service has one."""
    predictor = f"{isvc_name}-predictor"
    name = {"keda": f"keda-hpa-{predictor}", "hpa": predictor}.get(scaling.autoscaler_class)
    if name is None:
        return []
    return [Requirement(HPA, "autoscaling/v2", "HorizontalPodAutoscaler", name, namespace)]


def runtime(scaling: Scaling, observed: Observed) -> ReplicaStatus:
    """The counts: from the HorizontalPodAutoscaler's status when it has them, else the bounds."""
    low, high = scaling.min_replicas, scaling.max_replicas
    current = desired = low
    for hpa in observed.required.get(HPA) or ():
        status = status_of(hpa)
        current = _count(status.get("currentReplicas"), current)
        # Below the lower bound an HPA never wants: it has computed nothing yet (the
        # Kubernetes HPA controller writes 0 until its metrics answer), so it wants what runs.
        wanted = _count(status.get("desiredReplicas"), current)
        desired = wanted if wanted >= low else current
    text = f"{current}" if low == high else f"{current}/{desired} ({low}-{high})"
    return ReplicaStatus(
        min_replicas=low,
        max_replicas=high,
        current_replicas=current,
        desired_replicas=desired,
        replicas=text,
    )


def _count(value: object, default: int) -> int:
    # Another controller's status: only a plausible count replaces the default.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT:
        return value
    return default
