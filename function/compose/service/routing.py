"""The HTTPRoute that exposes a service through a Gateway, and whether the Gateway accepted it.

Each setting comes from the service, else its runtime config. The route does not wait for the
InferenceService: it can be accepted before the model is up, and it points at the predictor
Service KServe will create under a name known in advance.

Services of many namespaces share a Gateway, and a Gateway matches the longest path prefix, so
the platform's route policy (`spec.routing.policy` of the AIMClusterRuntimeConfig; by default each
namespace under `/<namespace>/`) bounds what a tenant's path and annotations may be. Tenants write
the service and the namespace's AIMRuntimeConfig; only the cluster config is the platform's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from function.api.common import ParentReference
from function.api.meta import Kind
from function.api.runtimeconfig import DEFAULT_PATH_PREFIX, RoutePolicy, RoutingConfig
from function.build.gateway import build_http_route
from function.kube import views
from function.kube.contract import Desired, Observed
from function.kube.views import ParentRef, route_parents, string_at
from function.rules import labels, naming
from function.rules.pods import MAX_QUOTE
from function.rules.routepath import (
    RoutePathError,
    extend,
    render_path,
    render_prefix,
    within,
)
from function.rules.routepolicy import refused_annotations
from function.rules.runtimeconfig import DEFAULT_NAME, RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State
from function.rules.text import cut

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
    config: RuntimeConfig | None,
    isvc_name: str,
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
    policy = config.route_policy if config else RoutePolicy()
    try:
        prefix = render_prefix(policy.path_prefix, observed.composite)
    except RoutePathError as e:
        return _invalid(f"{_policy_origin(config)}: {e}")
    template = _pick(service, defaults, "path_template")
    try:
        path = (
            render_path(template, observed.composite)
            if isinstance(template, str)
            else _default_path(observed, prefix)
        )
    except RoutePathError as e:
        return _invalid(f"{_template_field(service, config)}: {e}")

    annotations = {
        **((defaults.annotations if defaults else None) or {}),
        **((service.annotations if service else None) or {}),
    }
    refusal = _refusal(path, prefix, annotations, service, config)
    if refusal is not None:
        return RouteOutcome(refusal)

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
        # Implementations may leave the message empty (Traefik does for NoMatchingParent).
        said = (
            cut(accepted.message, MAX_QUOTE)
            or f"{accepted.reason or 'NotAccepted'}, with no message"
        )
        return ConditionType.HTTP_ROUTE_READY.failed(
            accepted.reason or "NotAccepted", f"{gateway} rejected the HTTPRoute: {said}"
        )
    resolved = views.find(ours.conditions, "ResolvedRefs")
    if resolved is not None and resolved.is_false:
        return ConditionType.HTTP_ROUTE_READY.progressing(
            Reason.ROUTE_BACKEND_UNRESOLVED,
            f"{gateway} cannot resolve the backend yet: {cut(resolved.message, MAX_QUOTE)}",
        )
    if accepted is not None and accepted.is_true:
        return ConditionType.HTTP_ROUTE_READY.ready(
            Reason.ROUTE_ACCEPTED, f"{gateway} accepted the HTTPRoute"
        )
    return ConditionType.HTTP_ROUTE_READY.progressing(
        Reason.ROUTE_PENDING, f"{gateway} has not accepted it yet"
    )


def _invalid(problem: str) -> RouteOutcome:
    return RouteOutcome(
        ConditionType.HTTP_ROUTE_READY.degraded(
            Reason.ROUTE_TEMPLATE_INVALID,
            f"{problem}; no HTTPRoute is created or changed until it renders",
        )
    )


def _refusal(
    path: str,
    prefix: str,
    annotations: Mapping[str, str],
    service: RoutingConfig | None,
    config: RuntimeConfig | None,
) -> Health | None:
    """Why the route policy refuses this route (the path first, then annotations), or None.

    Like a path that does not render, a refused route degrades routing only: the route is not
    created, an existing one is kept as it is (so a change cannot move it to a refused path),
    and the InferenceService goes on serving.
    """
    policy = config.route_policy if config else RoutePolicy()
    platform = config.platform_routing if config else None
    refused = refused_annotations(
        annotations, (platform.annotations if platform else None) or {}, policy.allowed_annotations
    )
    outside = not within(path, prefix)
    problems: list[str] = []
    if outside:
        problems.append(
            f"{_template_field(service, config)} renders {path}, outside the service's route "
            f"prefix {prefix}/ (from {_policy_origin(config)}); start the path with {prefix}/ "
            f"(a template beginning `{policy.path_prefix}`), or have the platform team widen the "
            "policy"
        )
    if refused:
        allowed = ", ".join(policy.allowed_annotations) or "none"
        name = _config_name(config)
        problems.extend(
            f"{field} sets {', '.join(repr(k) for k in keys)}, which the route policy does not "
            f"allow (allowed: {allowed}); remove it, or have the platform team allow it in "
            f"spec.routing.policy.allowedAnnotations of {Kind.CLUSTER_RUNTIME_CONFIG} {name!r}"
            for field, keys in _by_field(refused, service, config).items()
        )
    if not problems:
        return None
    return ConditionType.HTTP_ROUTE_READY.degraded(
        Reason.ROUTE_PATH_NOT_ALLOWED if outside else Reason.ROUTE_ANNOTATION_NOT_ALLOWED,
        "; ".join(problems) + "; no HTTPRoute is created or changed until then",
    )


def _by_field(
    keys: list[str], service: RoutingConfig | None, config: RuntimeConfig | None
) -> dict[str, list[str]]:
    """The refused keys by the field that set them: the service's, else its runtime config's."""
    own = (service.annotations if service else None) or {}
    fields: dict[str, list[str]] = {}
    for key in keys:
        field = (
            "spec.routing.annotations"
            if key in own
            else f"spec.routing.annotations of {Kind.RUNTIME_CONFIG} {_config_name(config)!r}"
        )
        fields.setdefault(field, []).append(key)
    return fields


def _template_field(service: RoutingConfig | None, config: RuntimeConfig | None) -> str:
    """The field the path came from: the service's, the runtime config's, or the default.

    Of the runtime config's, the cluster's when the merged template is the cluster's own.
    """
    if service is not None and service.path_template:
        return "spec.routing.pathTemplate"
    routing = config.spec.routing if config else None
    if config is None or routing is None or not routing.path_template:
        return "the default path"
    platform = config.platform_routing
    kind = (
        Kind.CLUSTER_RUNTIME_CONFIG
        if platform is not None and platform.path_template == routing.path_template
        else Kind.RUNTIME_CONFIG
    )
    return f"spec.routing.pathTemplate of {kind} {_config_name(config)!r}"


def _policy_origin(config: RuntimeConfig | None) -> str:
    """Where the route prefix in force is written, for messages."""
    name = _config_name(config)
    platform = config.platform_routing if config else None
    if platform is not None and platform.policy is not None:
        return (
            f"spec.routing.policy.pathPrefix `{platform.policy.path_prefix}` of "
            f"{Kind.CLUSTER_RUNTIME_CONFIG} {name!r}"
        )
    return (
        f"the default route policy `{DEFAULT_PATH_PREFIX}`: {Kind.CLUSTER_RUNTIME_CONFIG} "
        f"{name!r} sets no spec.routing.policy"
    )


def _config_name(config: RuntimeConfig | None) -> str:
    return config.ref.name if config is not None and config.ref is not None else DEFAULT_NAME


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


def _pick(service: RoutingConfig | None, config: RoutingConfig | None, field: str) -> object:
    """The service's value when set, else the runtime config's."""
    for source in (service, config):
        value = getattr(source, field, None) if source is not None else None
        if value is not None:
            return value
    return None
