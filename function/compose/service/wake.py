"""Scale to zero: the HTTPScaledObject that wakes an idle predictor, and where its route points.

A service with `minReplicas: 0` has no pod once it has gone `scaleToZero.idleAfter` without a
request. Its HTTPRoute then sends requests not to the predictor's Service but to the KEDA HTTP
add-on's interceptor, with the Host rewritten to one naming the predictor: the interceptor counts
the request, the add-on's scaler tells KEDA, KEDA scales the predictor's Deployment to one pod,
and the interceptor holds the request until that pod is ready (up to the platform's
`scaleToZero.wakeTimeout`) and forwards it. The client gets the model's answer, not a 503.
A request still waiting past that bound is failed over to the platform's wake responder (by an
ExternalName Service in the service's namespace, since the add-on dials failovers there), whose
503 with `Retry-After` OpenAI clients retry, where the interceptor alone would answer a bare 502.

KServe runs such a predictor with its `external` autoscaler class (it makes no autoscaler and
leaves the replica count to KEDA); the add-on's operator makes the KEDA ScaledObject from the
HTTPScaledObject composed here. The wake needs the route, so a service at `minReplicas: 0`
without routing is refused (the AIM operator's `RoutingRequiredForScaleToZero`), and it scales on
requests, not on metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from function.api.runtimeconfig import (
    DEFAULT_IDLE_AFTER,
    DEFAULT_INTERCEPTOR,
    DEFAULT_RESPONDER,
    DEFAULT_WAKE_TIMEOUT,
)
from function.api.service import AIMServiceSpec
from function.build.gateway import PREDICTOR_PORT, Waker
from function.build.kedahttp import build_external_name_service, build_http_scaled_object
from function.build.kserve import Scaling
from function.kube import views
from function.kube.contract import Desired, Observed
from function.kube.objects import name_of
from function.rules import labels
from function.rules.durations import duration_seconds
from function.rules.pods import MAX_QUOTE
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State
from function.rules.text import cut

HTTP_SCALED_OBJECT: Final = "http-scaled-object"
"""Composition-resource name of the HTTPScaledObject."""
WAKE_RESPONDER: Final = "wake-responder"
"""Composition-resource name of the ExternalName Service naming the platform's wake responder."""

_CONDITION = ConditionType.SCALE_TO_ZERO_READY


@dataclass(frozen=True)
class WakeOutcome:
    """Scale to zero's health (None for a service that does not), its objects, the route's waker."""

    health: Health | None = None
    desired: Mapping[str, Desired] = field(default_factory=dict)
    waker: Waker | None = None


def plan_wake(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    spec: AIMServiceSpec,
    scaling: Scaling,
    config: RuntimeConfig | None,
    *,
    routed: bool,
    isvc_name: str,
    request_timeout: str | None,
) -> WakeOutcome:
    """The HTTPScaledObject, the responder's name and the route's waker of a service at zero."""
    if not scaling.to_zero:
        return WakeOutcome()
    refused = _refusal(spec, routed=routed)
    if refused is not None:
        return WakeOutcome(refused)
    predictor = f"{isvc_name}-predictor"
    platform = config.platform_scale_to_zero if config else None
    interceptor = (platform.interceptor if platform else None) or DEFAULT_INTERCEPTOR
    responder = (platform.responder if platform else None) or DEFAULT_RESPONDER
    host = f"{predictor}.{observed.namespace}"
    owned = {
        **labels.MANAGED_BY,
        "app.kubernetes.io/component": "scale-to-zero",
        labels.SERVICE: labels.value(observed.name),
    }
    waking = build_external_name_service(
        name=f"{isvc_name}-waking",
        namespace=observed.namespace,
        labels=owned,
        target=f"{responder.name}.{responder.namespace}.svc.cluster.local",
    )
    wake_timeout = (platform.wake_timeout if platform else None) or DEFAULT_WAKE_TIMEOUT
    manifest = build_http_scaled_object(
        name=predictor,
        namespace=observed.namespace,
        labels=owned,
        host=host,
        deployment=predictor,
        service=predictor,
        port=PREDICTOR_PORT,
        max_replicas=scaling.max_replicas,
        scaledown_seconds=_seconds(_idle_after(spec, config), DEFAULT_IDLE_AFTER),
        condition_wait_seconds=_seconds(wake_timeout, DEFAULT_WAKE_TIMEOUT),
        response_header_seconds=(
            _seconds(request_timeout, DEFAULT_WAKE_TIMEOUT) if request_timeout else None
        ),
        failover=(name_of(waking), responder.port),
    )
    health = _health(observed, predictor)
    return WakeOutcome(
        health,
        {
            HTTP_SCALED_OBJECT: Desired(manifest, ready=health.state is State.READY),
            # A name, ready once it exists: nothing reports on an ExternalName Service.
            WAKE_RESPONDER: Desired(waking, ready=True),
        },
        Waker(interceptor.name, interceptor.namespace, interceptor.port, host),
    )


def _refusal(spec: AIMServiceSpec, *, routed: bool) -> Health | None:
    """Why a service at zero could never be woken, naming the field and the fix; else None."""
    if spec.auto_scaling is not None:
        return _CONDITION.failed(
            Reason.SCALE_TO_ZERO_WITH_METRICS,
            "spec.minReplicas 0 scales on requests through the Gateway, not on "
            "spec.autoScaling's metrics; remove spec.autoScaling, or set spec.minReplicas "
            "to at least 1",
        )
    if not routed:
        return _CONDITION.failed(
            Reason.ROUTING_REQUIRED_FOR_SCALE_TO_ZERO,
            "spec.minReplicas 0 needs routing: only a request through the Gateway can wake "
            "a service with no pod; enable spec.routing (or its runtime config's), or set "
            "spec.minReplicas to at least 1",
        )
    return None


def _idle_after(spec: AIMServiceSpec, config: RuntimeConfig | None) -> str:
    """The service's idle time, else its runtime config's, else the default."""
    own = spec.scale_to_zero.idle_after if spec.scale_to_zero else None
    defaults = config.spec.scale_to_zero if config else None
    return own or (defaults.idle_after if defaults else None) or DEFAULT_IDLE_AFTER


def _seconds(duration: str, default: str) -> int:
    """Whole seconds, at least one; a value admission would refuse reads as the default."""
    seconds = duration_seconds(duration) or duration_seconds(default) or 1.0
    return max(1, round(seconds))


def _health(observed: Observed, name: str) -> Health:
    """What the add-on's operator said of the HTTPScaledObject (its `Ready` condition)."""
    current = observed.resources.get(HTTP_SCALED_OBJECT)
    if current is None:
        return _CONDITION.progressing(
            Reason.CREATING, f"the HTTPScaledObject {name} is being created"
        )
    ready = views.condition_of(current, "Ready")
    if ready is not None and ready.is_true:
        return _CONDITION.ready(
            Reason.WAKE_READY,
            f"the KEDA HTTP add-on holds requests for {name} while it has no pod and wakes it",
        )
    if ready is not None and ready.is_false:
        said = cut(ready.message, MAX_QUOTE) or ready.reason or "no reason given"
        return _CONDITION.degraded(
            Reason.WAKE_NOT_READY,
            f"the KEDA HTTP add-on cannot scale {name}: {said}; requests are still held, but "
            "nothing wakes the predictor",
        )
    return _CONDITION.progressing(
        Reason.WAKE_NOT_READY,
        f"the KEDA HTTP add-on has not reported on the HTTPScaledObject {name} yet (is it "
        "installed? its operator writes the Ready condition)",
    )
