"""The HTTPRoute that exposes a service through a Gateway, and whether the Gateway accepted it.

Each setting comes from the service, else its runtime config. The route does not wait for the
InferenceService: it can be accepted before the model is up, and it points at the predictor
Service KServe will create under a name known in advance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from function.api.common import ParentReference
from function.api.runtimeconfig import RoutingConfig
from function.build.gateway import build_http_route
from function.kube import views
from function.kube.contract import Desired, Observed
from function.kube.views import ParentRef, route_parents, string_at
from function.rules import labels, naming
from function.rules.routepath import RoutePathError, render_path
from function.rules.status import ConditionType, Health, Reason, State

HTTP_ROUTE = "http-route"
"""Composition-resource name of the HTTPRoute."""

GATEWAY_GROUP = "gateway.networking.k8s.io"


@dataclass(frozen=True)
class RouteOutcome:
    """Routing's health (None when routing is off), the path, and the HTTPRoute to compose."""

    health: Health | None = None
    path: str | None = None
    desired: Desired | None = None


def compose_route(
    observed: Observed,
    service: RoutingConfig | None,
    config: RoutingConfig | None,
    isvc_name: str,
) -> RouteOutcome:
    """Decide the HTTPRoute from the service's routing settings over the runtime config's."""
    if not _pick(service, config, "enabled"):
        return RouteOutcome()
    gateway = _pick(service, config, "gateway_ref")
    if not isinstance(gateway, ParentReference):
        return RouteOutcome(
            ConditionType.HTTP_ROUTE_READY.failed(
                Reason.GATEWAY_NOT_CONFIGURED,
                "routing is enabled but no Gateway is named; set spec.routing.gatewayRef on "
                "the service or spec.routing.gatewayRef in its runtime config",
            )
        )
    template = _pick(service, config, "path_template")
    try:
        path = (
            render_path(template, observed.composite)
            if isinstance(template, str)
            else _default_path(observed)
        )
    except RoutePathError as e:
        source = (
            "spec.routing.pathTemplate"
            if service and service.path_template
            else ("the runtime config's spec.routing.pathTemplate")
        )
        return RouteOutcome(
            ConditionType.HTTP_ROUTE_READY.degraded(
                Reason.ROUTE_TEMPLATE_INVALID,
                f"{source}: {e}; no HTTPRoute is created or changed until it renders",
            )
        )

    parent = gateway.model_dump(mode="json", exclude_none=True)
    parent.setdefault("group", GATEWAY_GROUP)
    parent.setdefault("kind", "Gateway")
    annotations = {
        **((config.annotations if config else None) or {}),
        **((service.annotations if service else None) or {}),
    }
    timeout = _pick(service, config, "request_timeout")
    manifest = build_http_route(
        name=naming.derived_name([observed.name], [observed.namespace]),
        namespace=observed.namespace,
        labels={
            **labels.MANAGED_BY,
            "app.kubernetes.io/component": "routing",
            labels.SERVICE: labels.value(observed.name),
        },
        annotations=annotations,
        parent=parent,
        path=path,
        backend_service=f"{isvc_name}-predictor",
        request_timeout=timeout if isinstance(timeout, str) else None,
    )
    health = route_health(observed.resources.get(HTTP_ROUTE), parent, observed.namespace)
    return RouteOutcome(health, path, Desired(manifest, ready=health.state is State.READY))


def route_health(
    route: Mapping[str, JsonValue] | None, parent: Mapping[str, JsonValue], namespace: str
) -> Health:
    """What the Gateway said about the route, in `status.parents[]` for our parent."""
    if route is None:
        return ConditionType.HTTP_ROUTE_READY.progressing(
            Reason.CREATING, "the HTTPRoute is being created"
        )
    ours = next(
        (p for p in route_parents(route) if p.ref.same_as(ParentRef.read(parent), namespace)),
        None,
    )
    gateway = f"Gateway {parent.get('name')!s}"
    if ours is None:
        return ConditionType.HTTP_ROUTE_READY.progressing(
            Reason.ROUTE_PENDING,
            f"{gateway} has not reported on the HTTPRoute yet",
        )
    accepted = views.find(ours.conditions, "Accepted")
    if accepted is not None and accepted.is_false:
        return ConditionType.HTTP_ROUTE_READY.failed(
            accepted.reason or "NotAccepted",
            f"{gateway} rejected the HTTPRoute: {accepted.message}",
        )
    resolved = views.find(ours.conditions, "ResolvedRefs")
    if resolved is not None and resolved.is_false:
        return ConditionType.HTTP_ROUTE_READY.progressing(
            Reason.ROUTE_BACKEND_UNRESOLVED,
            f"{gateway} cannot resolve the backend yet: {resolved.message}",
        )
    if accepted is not None and accepted.is_true:
        return ConditionType.HTTP_ROUTE_READY.ready(
            Reason.ROUTE_ACCEPTED, f"{gateway} accepted the HTTPRoute"
        )
    return ConditionType.HTTP_ROUTE_READY.progressing(
        Reason.ROUTE_PENDING, f"{gateway} has not accepted it yet"
    )


def _default_path(observed: Observed) -> str:
    uid = string_at(observed.composite, "metadata", "uid")
    if not uid:
        msg = (
            "the default path /<namespace>/<uid> needs metadata.uid, which objects read from a "
            "file do not have; set spec.routing.pathTemplate"
        )
        raise RoutePathError(msg)
    return render_path(f"/{observed.namespace}/{uid}", {})


def _pick(service: RoutingConfig | None, config: RoutingConfig | None, field: str) -> object:
    """The service's value when set, else the runtime config's."""
    for source in (service, config):
        value = getattr(source, field, None) if source is not None else None
        if value is not None:
            return value
    return None
