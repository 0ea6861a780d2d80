"""How many inference pods a service runs: the bounds it asks for, and what its autoscaler has.

Fixed at `replicas` by default; with `minReplicas`/`maxReplicas`, KServe's HPA class scales
between them, and with `autoScaling.metrics` KServe's KEDA class does. The HPA class runs a
HorizontalPodAutoscaler named after the predictor, KEDA one named `keda-hpa-<predictor>`: their
status says how many pods there are and how many the autoscaler wants. Until one exists (and for
a fixed count) the bounds stand in for both. Their conditions say whether the autoscaler works:
`HPAReady`. With `minReplicas: 0`, KEDA scales through the HTTP add-on's ScaledObject (`wake.py`),
whose HPA is also `keda-hpa-<predictor>`; at zero pods it is idle, not broken (`ScaledToZero`).
"""

from __future__ import annotations

from typing import Final

from function.api.service import AIMServiceSpec, ReplicaStatus
from function.build.kserve import Scaling
from function.kube import views
from function.kube.contract import Observed, Requirement
from function.kube.views import AutoscalerStatus, ObjectCondition, autoscaler_status
from function.rules.status import ConditionType, Health, Reason

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
    low = 1 if spec.min_replicas is None else spec.min_replicas
    return Scaling(low, spec.max_replicas or max(low, 1), autoscaled=True, metrics=metrics)


def requirements(scaling: Scaling, namespace: str, isvc_name: str) -> list[Requirement]:
    """The autoscaler's HorizontalPodAutoscaler, where the service has one."""
    predictor = f"{isvc_name}-predictor"
    # Scale to zero's ScaledObject is the add-on's, named like the HTTPScaledObject: the predictor.
    keda = f"keda-hpa-{predictor}"
    name = {"keda": keda, "external": keda, "hpa": predictor}.get(scaling.autoscaler_class)
    if name is None:
        return []
    return [Requirement(HPA, "autoscaling/v2", "HorizontalPodAutoscaler", name, namespace)]


def runtime(scaling: Scaling, observed: Observed) -> ReplicaStatus:
    """The counts: from the HorizontalPodAutoscaler's status when it has them, else the bounds."""
    low, high = scaling.min_replicas, scaling.max_replicas
    current = desired = low
    for hpa in observed.required.get(HPA) or ():
        status = autoscaler_status(hpa)
        current = _count(status.current_replicas, current)
        # Below the lower bound an HPA never wants: it has computed nothing yet (the
        # Kubernetes HPA controller writes 0 until its metrics answer), so it wants what runs.
        wanted = _count(status.desired_replicas, current)
        desired = wanted if wanted >= low else current
    text = f"{current}" if low == high else f"{current}/{desired} ({low}-{high})"
    return ReplicaStatus(
        min_replicas=low,
        max_replicas=high,
        current_replicas=current,
        desired_replicas=desired,
        replicas=text,
    )


def health(scaling: Scaling, observed: Observed, *, serving: bool) -> Health | None:
    """Whether the service's autoscaler works, from its HPA's conditions; None without one.

    An HPA that cannot read its metrics while the service is not Ready yet is waiting for the
    pods to report them; once it serves, the service runs but cannot scale (Degraded).
    """
    found = observed.required.get(HPA)
    if not scaling.autoscaled or found is None:
        return None
    if not found:
        maker = "KEDA has" if scaling.to_zero else "KServe has"
        return ConditionType.HPA_READY.progressing(
            Reason.HPA_NOT_FOUND, f"{maker} made no autoscaler yet"
        )
    status = autoscaler_status(found[0])
    if scaling.to_zero and _at_zero(status):
        return ConditionType.HPA_READY.ready(
            Reason.SCALED_TO_ZERO, "scaled to zero: no pod until the next request wakes it"
        )
    return _working(status.conditions, serving=serving)


def _at_zero(status: AutoscalerStatus) -> bool:
    """Whether KEDA has scaled the target to zero pods, as the HPA controller says it.

    At zero the controller stops scaling (ScalingActive False, reason ScalingDisabled) and writes
    no `currentReplicas` (a zero count is left out of its status): idle, not broken.
    """
    active = views.find(status.conditions, "ScalingActive")
    disabled = active is not None and active.is_false and active.reason == "ScalingDisabled"
    return disabled and status.current_replicas in {None, 0}


def _working(conditions: tuple[ObjectCondition, ...], *, serving: bool) -> Health:
    """Whether an HPA with pods to scale can scale them, from its conditions."""
    able = views.find(conditions, "AbleToScale")
    active = views.find(conditions, "ScalingActive")
    if able is not None and not able.is_true:
        return ConditionType.HPA_READY.progressing(
            Reason.SCALE_TARGET_NOT_READY, f"the autoscaler: {_said(able)}"
        )
    if active is None or not active.is_true:
        if serving:
            return ConditionType.HPA_READY.degraded(
                Reason.METRICS_FAILED, f"the service runs but cannot scale: {_said(active)}"
            )
        return ConditionType.HPA_READY.progressing(
            Reason.WAITING_FOR_METRICS, f"the autoscaler: {_said(active)}"
        )
    return ConditionType.HPA_READY.ready(Reason.HPA_OPERATIONAL, "the autoscaler reads its metrics")


def _said(condition: ObjectCondition | None) -> str:
    """A condition's reason and message, as the autoscaler wrote them (cut short)."""
    if condition is None:
        return "no status yet"
    text = ": ".join(x for x in (condition.reason, condition.message) if x)
    return (text or "no reason given")[:300]


def _count(value: int | None, default: int) -> int:
    # Another controller's status: only a plausible count replaces the default.
    if value is not None and 0 <= value <= _MAX_COUNT:
        return value
    return default
