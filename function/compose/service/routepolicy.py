"""Whether the platform's route policy lets a service's route be what its team asked for.

Tenants write the service and their namespace's AIMRuntimeConfig; only the AIMClusterRuntimeConfig
is the platform's, and its `routing.policy` bounds the path (under `/<namespace>/` by default),
the annotations (none by default) and the hostnames (the platform's own by default) a tenant's
route may have. A refused route is not created, and an existing one is kept as it is, so a
change cannot move it where the policy forbids; the InferenceService goes on serving.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from function.api.meta import Kind
from function.api.runtimeconfig import DEFAULT_PATH_PREFIX, RoutePolicy, RoutingConfig
from function.rules.hostnames import refused_hostnames
from function.rules.routepath import within
from function.rules.routepolicy import refused_annotations
from function.rules.runtimeconfig import DEFAULT_NAME, RuntimeConfig
from function.rules.status import ConditionType, Health, Reason


@dataclass(frozen=True)
class RouteRequest:
    """What a service's route would be, from the service's routing over its runtime config's."""

    path: str
    prefix: str
    annotations: Mapping[str, str]
    hostnames: Sequence[str]
    namespace: str


def refusal(
    route: RouteRequest, service: RoutingConfig | None, config: RuntimeConfig | None
) -> Health | None:
    """Why the route policy refuses this route (path, then hostnames, then annotations), or None.

    Every problem is named with the field that caused it; the reason is the first one's.
    """
    problems = [
        *_path_problems(route, service, config),
        *_hostname_problems(route, service, config),
        *_annotation_problems(route, service, config),
    ]
    if not problems:
        return None
    return ConditionType.HTTP_ROUTE_READY.degraded(
        problems[0][0],
        "; ".join(text for _, text in problems) + "; no HTTPRoute is created or changed until then",
    )


Problem = tuple[Reason, str]


def _path_problems(
    route: RouteRequest, service: RoutingConfig | None, config: RuntimeConfig | None
) -> list[Problem]:
    if within(route.path, route.prefix):
        return []
    policy = config.route_policy if config else RoutePolicy()
    return [
        (
            Reason.ROUTE_PATH_NOT_ALLOWED,
            (
                f"{template_field(service, config)} renders {route.path}, outside the service's "
                f"route prefix {route.prefix}/ (from {policy_origin(config)}); start the path with "
                f"{route.prefix}/ (a template beginning `{policy.path_prefix}`), or have the "
                "platform team widen the policy"
            ),
        )
    ]


def _hostname_problems(
    route: RouteRequest, service: RoutingConfig | None, config: RuntimeConfig | None
) -> list[Problem]:
    policy = config.route_policy if config else RoutePolicy()
    platform = config.platform_routing if config else None
    own = (platform.hostnames if platform else None) or []
    hosts = refused_hostnames(route.hostnames, own, policy.allowed_hostnames, route.namespace)
    if not hosts:
        return []
    allowed = ", ".join(policy.allowed_hostnames) or "none"
    return [
        (
            Reason.ROUTE_HOSTNAME_NOT_ALLOWED,
            (
                f"{_hostnames_field(service, config)} pins {', '.join(hosts)}, which neither "
                f"{Kind.CLUSTER_RUNTIME_CONFIG} {_config_name(config)!r}'s own "
                "spec.routing.hostnames lists nor its spec.routing.policy.allowedHostnames allows "
                f"(allowed: {allowed}); use one of those, or have the platform team allow it"
            ),
        )
    ]


def _annotation_problems(
    route: RouteRequest, service: RoutingConfig | None, config: RuntimeConfig | None
) -> list[Problem]:
    policy = config.route_policy if config else RoutePolicy()
    platform = config.platform_routing if config else None
    own = (platform.annotations if platform else None) or {}
    refused = refused_annotations(route.annotations, own, policy.allowed_annotations)
    allowed = ", ".join(policy.allowed_annotations) or "none"
    return [
        (
            Reason.ROUTE_ANNOTATION_NOT_ALLOWED,
            (
                f"{field} sets {', '.join(repr(k) for k in keys)}, which the route policy does not "
                f"allow (allowed: {allowed}); remove it, or have the platform team allow it in "
                "spec.routing.policy.allowedAnnotations of "
                f"{Kind.CLUSTER_RUNTIME_CONFIG} {_config_name(config)!r}"
            ),
        )
        for field, keys in _by_field(refused, service, config).items()
    ]


def template_field(service: RoutingConfig | None, config: RuntimeConfig | None) -> str:
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


def policy_origin(config: RuntimeConfig | None) -> str:
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


def _hostnames_field(service: RoutingConfig | None, config: RuntimeConfig | None) -> str:
    """The field the hostnames came from: the service's, else its namespace's runtime config's.

    The cluster's own hostnames always pass, so refused ones that are not the service's are the
    AIMRuntimeConfig's.
    """
    if service is not None and service.hostnames is not None:
        return "spec.routing.hostnames"
    return f"spec.routing.hostnames of {Kind.RUNTIME_CONFIG} {_config_name(config)!r}"


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


def _config_name(config: RuntimeConfig | None) -> str:
    return config.ref.name if config is not None and config.ref is not None else DEFAULT_NAME
