"""The HTTPRoute that exposes a service through a Gateway, and whether the Gateway accepted it.

Each setting comes from the service, else its runtime config. The route does not wait for the
InferenceService: it can be accepted before the model is up, and it points at the predictor
Service KServe will create under a name known in advance.

Services of many namespaces share a Gateway, so the platform's route policy bounds what a tenant's
route may be (`routepolicy.py`). A route pinned to no hostname answers on every listener that
takes it: where the Gateway has several, the route is not composed, and one composed before is
removed, until the service names its hostnames (the AIM operator's `RouteHostnameRequired`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from function.api.common import ParentReference
from function.api.runtimeconfig import RoutePolicy, RoutingConfig
from function.build.gateway import Waker, build_http_route
from function.compose.service import routepolicy
from function.compose.service.route_status import route_health
from function.compose.service.routepolicy import RouteRequest
from function.kube.contract import Desired, Observed, Requirement
from function.kube.views import (
    GATEWAY_GROUP,
    gateway_listeners,
    string_at,
)
from function.rules import labels, naming
from function.rules.listeners import attachable
from function.rules.routepath import RoutePathError, extend, render_path, render_prefix
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State

HTTP_ROUTE: Final = "http-route"
"""Composition-resource name of the HTTPRoute."""

GATEWAY: Final = "gateway"
"""Requirement name of the Gateway a route without hostnames would attach to."""


@dataclass(frozen=True)
class RouteOutcome:
    """Routing's health (None when routing is off), the route to compose, what to read first.

    `withdrawn`: no route may stay, not even the one composed before.
    """

    health: Health | None = None
    path: str | None = None
    hostnames: tuple[str, ...] = ()
    desired: Desired | None = None
    requirements: list[Requirement] = field(default_factory=list)
    withdrawn: bool = False


def compose_route(
    observed: Observed,
    service: RoutingConfig | None,
    config: RuntimeConfig | None,
    isvc_name: str,
    waker: Waker | None = None,
) -> RouteOutcome:
    """Decide the HTTPRoute from the service's routing over the runtime config's, in policy."""
    defaults = config.spec.routing if config else None
    if not _pick(service, defaults, "enabled"):
        return RouteOutcome()
    gateway = _pick(service, defaults, "gateway_ref")
    if not isinstance(gateway, ParentReference):
        return RouteOutcome(
            ConditionType.HTTP_ROUTE_READY.failed(
                Reason.GATEWAY_NOT_CONFIGURED,
                "routing is enabled but no Gateway is named; set spec.routing.gatewayRef on "
                "the service or spec.routing.gatewayRef in its runtime config",
            )
        )
    request = _request(observed, service, config)
    if isinstance(request, RouteOutcome):
        return request
    refusal = routepolicy.refusal(request, service, config)
    if refusal is not None:
        return RouteOutcome(refusal)
    wanted = _gateway_requirements(observed, gateway, request)
    exposure = _exposure(observed, gateway, wanted)
    if exposure is not None:
        return exposure

    parent = gateway.model_dump(mode="json", exclude_none=True)
    parent.setdefault("group", GATEWAY_GROUP)
    parent.setdefault("kind", "Gateway")
    timeout = _pick(service, defaults, "request_timeout")
    manifest = build_http_route(
        name=naming.derived_name([observed.name], [observed.namespace]),
        namespace=observed.namespace,
        labels={
            **labels.MANAGED_BY,
            "app.kubernetes.io/component": "routing",
            labels.SERVICE: labels.value(observed.name),
        },
        annotations=request.annotations,
        parent=parent,
        path=request.path,
        hostnames=request.hostnames,
        backend_service=f"{isvc_name}-predictor",
        request_timeout=timeout if isinstance(timeout, str) else None,
        waker=waker,
    )
    health = route_health(observed.resources.get(HTTP_ROUTE), parent, observed.namespace)
    return RouteOutcome(
        health,
        request.path,
        tuple(request.hostnames),
        Desired(manifest, ready=health.state is State.READY),
        wanted,
    )


def enabled(service: RoutingConfig | None, config: RuntimeConfig | None) -> bool:
    """Whether the service is routed: its `routing.enabled`, else its runtime config's."""
    return bool(_pick(service, config.spec.routing if config else None, "enabled"))


def request_timeout(service: RoutingConfig | None, config: RuntimeConfig | None) -> str | None:
    """The route's request timeout: the service's, else its runtime config's."""
    timeout = _pick(service, config.spec.routing if config else None, "request_timeout")
    return timeout if isinstance(timeout, str) else None


def _request(
    observed: Observed, service: RoutingConfig | None, config: RuntimeConfig | None
) -> RouteRequest | RouteOutcome:
    """The route's path, prefix, annotations and hostnames; an outcome when a path cannot render."""
    defaults = config.spec.routing if config else None
    policy = config.route_policy if config else RoutePolicy()
    try:
        prefix = render_prefix(policy.path_prefix, observed.composite)
    except RoutePathError as e:
        return _invalid(f"{routepolicy.policy_origin(config)}: {e}")
    template = _pick(service, defaults, "path_template")
    try:
        path = (
            render_path(template, observed.composite)
            if isinstance(template, str)
            else _default_path(observed, prefix)
        )
    except RoutePathError as e:
        return _invalid(f"{routepolicy.template_field(service, config)}: {e}")
    hostnames = _pick(service, defaults, "hostnames")
    return RouteRequest(
        path=path,
        prefix=prefix,
        annotations={
            **((defaults.annotations if defaults else None) or {}),
            **((service.annotations if service else None) or {}),
        },
        hostnames=list(hostnames) if isinstance(hostnames, list) else [],
        namespace=observed.namespace,
    )


def _gateway_requirements(
    observed: Observed, gateway: ParentReference, request: RouteRequest
) -> list[Requirement]:
    """The parent Gateway, where its listeners decide whether the route may be composed.

    A route pinned to hostnames attaches only where a listener's hostname matches them, and a
    parent that is not a Gateway has no listeners to count.
    """
    if request.hostnames or (gateway.group or GATEWAY_GROUP) != GATEWAY_GROUP:
        return []
    if (gateway.kind or "Gateway") != "Gateway":
        return []
    namespace = gateway.namespace or observed.namespace
    return [Requirement(GATEWAY, f"{GATEWAY_GROUP}/v1", "Gateway", gateway.name, namespace)]


def _exposure(
    observed: Observed, gateway: ParentReference, wanted: list[Requirement]
) -> RouteOutcome | None:
    """Why a route without hostnames may not be composed on this Gateway, or None if it may.

    Until the Gateway is read, nothing new is composed (an existing route is kept). A Gateway
    that does not exist has no listener to expose the route on yet: the route is composed, and
    withdrawn if the Gateway turns out to have several. `wanted` is the Gateway's requirement
    (`_gateway_requirements`), empty where no listener count applies.
    """
    if not wanted:
        return None
    found = observed.required.get(GATEWAY)
    if found is None:
        return RouteOutcome(
            ConditionType.HTTP_ROUTE_READY.progressing(
                Reason.ROUTE_PENDING, f"reading Gateway {gateway.name} to see its listeners"
            ),
            requirements=wanted,
        )
    namespace = wanted[0].namespace or observed.namespace
    listeners = [
        listener
        for manifest in found[:1]
        for listener in attachable(
            gateway_listeners(manifest),
            section_name=gateway.section_name,
            port=gateway.port,
            gateway_namespace=namespace,
            route_namespace=observed.namespace,
        )
    ]
    if len(listeners) < 2:  # noqa: PLR2004 - one listener is what a route without hosts may have
        return None
    names = ", ".join(listener.name or "(unnamed)" for listener in listeners)
    return RouteOutcome(
        ConditionType.HTTP_ROUTE_READY.degraded(
            Reason.ROUTE_HOSTNAME_REQUIRED,
            f"Gateway {namespace}/{gateway.name} has {len(listeners)} listeners this route would "
            f"attach to ({names}): without hostnames it answers on every one of them, including "
            "hosts meant for other teams or for authenticated traffic; set spec.routing.hostnames "
            "(on the service or its runtime config) to the hosts it serves, or "
            "spec.routing.gatewayRef.sectionName to one listener; until then it has no HTTPRoute",
        ),
        requirements=wanted,
        withdrawn=True,
    )


def _invalid(problem: str) -> RouteOutcome:
    """A path or prefix that does not render degrades routing; the route it had is kept."""
    return RouteOutcome(
        ConditionType.HTTP_ROUTE_READY.degraded(
            Reason.ROUTE_TEMPLATE_INVALID,
            f"{problem}; no HTTPRoute is created or changed until it renders",
        )
    )


def _default_path(observed: Observed, prefix: str) -> str:
    """`<prefix>/<uid>`: unique, and inside the policy whatever its prefix."""
    uid = string_at(observed.composite, "metadata", "uid")
    if not uid:
        msg = (
            f"the default path {prefix.rstrip('/')}/<uid> needs metadata.uid, which objects read "
            "from a file do not have; set spec.routing.pathTemplate"
        )
        raise RoutePathError(msg)
    return extend(prefix, [uid])


def _pick(service: RoutingConfig | None, config: RoutingConfig | None, name: str) -> object:
    """The service's value when set, else the runtime config's."""
    for source in (service, config):
        value = getattr(source, name, None) if source is not None else None
        if value is not None:
            return value
    return None
