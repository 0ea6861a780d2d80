"""The route policy: tenants' services share a Gateway, so none may take another's paths.

A Gateway matches the longest path prefix, so a route at `/research/chat`, or at a longer prefix of
another team's path, or at `/`, would take that team's traffic. The platform's
AIMClusterRuntimeConfig sets `routing.policy` (default: each namespace under `/<namespace>/`, and
no annotations of the tenants' own); tenants write the service and the namespace's
AIMRuntimeConfig, neither of which can loosen it. A refused route degrades routing only.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from function.compose.service import HTTP_ROUTE, INFERENCE_SERVICE
from function.errors import InvalidSpecError
from function.kube.contract import Composition
from tests.cases import Case, table
from tests.unit.compose.service.test_compose_service import (
    NS,
    WORLD,
    conditions,
    config,
    message_of,
    reconcile,
    service,
    status,
)

GATEWAY = {"name": "inference", "namespace": "gateways"}
ROUTING_ON = {"enabled": True, "gatewayRef": GATEWAY}


def platform(**routing: Any) -> Any:
    """The platform's AIMClusterRuntimeConfig `default`: routing on, and what else it sets."""
    return config(kind="AIMClusterRuntimeConfig", routing={**ROUTING_ON, **routing})


def routed(namespace: str = NS, /, **routing: Any) -> Any:
    """A service in `namespace` with its own routing settings (on through the platform's)."""
    xr = service(routing=routing or None)
    xr["metadata"]["namespace"] = namespace
    return xr


def world(namespace: str) -> list[Any]:
    """The model and template the service runs, in its namespace."""
    pool = copy.deepcopy(WORLD)
    for obj in pool:
        obj["metadata"]["namespace"] = namespace
    return pool


def path_of(comp: Composition) -> str | None:
    """The path of the HTTPRoute composed, None when there is none."""
    if HTTP_ROUTE not in comp.resources:
        return None
    route: Any = comp.resources[HTTP_ROUTE].manifest
    value = route["spec"]["rules"][0]["matches"][0]["path"]["value"]
    assert isinstance(value, str)
    return value


@dataclass(frozen=True)
class PathCase(Case):
    template: str | None
    """The service's spec.routing.pathTemplate; None: the default path."""
    want_path: str | None
    """The route's path; None: no route."""
    want_reason: str = "Creating"
    """HTTPRouteReady's reason."""
    policy: dict[str, Any] | None = None
    """The platform's spec.routing.policy; None: the default."""
    namespace: str = NS


PATH_CASES = [
    PathCase(
        "own-namespace",
        "the namespace's own prefix, as the usual template gives it",
        "/{.metadata.namespace}/{.metadata.name}",
        "/ml-team/qwen-chat",
    ),
    PathCase(
        "default-path",
        "no template: /<namespace>/<uid>, inside the default policy as it always was",
        None,
        "/ml-team/0b5e-uid",
    ),
    PathCase(
        "namespace-root",
        "the whole of the namespace's own prefix shadows only its own services",
        "/{.metadata.namespace}",
        "/ml-team",
    ),
    PathCase(
        "empty-segments",
        "`//` only makes empty segments, which are dropped: it hides no other prefix",
        "//{.metadata.namespace}//chat",
        "/ml-team/chat",
    ),
    PathCase(
        "other-namespace",
        "another namespace's path: the route would take its traffic",
        "/research/chat",
        None,
        "RoutePathNotAllowed",
    ),
    PathCase(
        "string-prefix",
        "compared by segments: /ml-team-b starts with the characters /ml-team, yet is another "
        "namespace's",
        "/ml-team-b/chat",
        None,
        "RoutePathNotAllowed",
    ),
    PathCase(
        "catch-all",
        "`/` would catch every path nobody else matches: it renders to nothing, no route at all",
        "/",
        None,
        "RouteTemplateInvalid",
    ),
    PathCase(
        "dot-dot",
        "`..` would climb out of the prefix (and Gateway API refuses it): no route",
        "/{.metadata.namespace}/../research/chat",
        None,
        "RouteTemplateInvalid",
    ),
    PathCase(
        "encoded-slash",
        "an encoded `/..` is percent-encoded again, so it stays inside one segment, which is not "
        "the namespace's",
        "/ml-team%2F..%2Fresearch/chat",
        None,
        "RoutePathNotAllowed",
    ),
    PathCase(
        "custom-prefix-inside",
        "the platform's own prefix, a template like pathTemplate",
        "/teams/{.metadata.namespace}/chat",
        "/teams/ml-team/chat",
        policy={"pathPrefix": "/teams/{.metadata.namespace}/"},
    ),
    PathCase(
        "custom-prefix-outside",
        "under a custom prefix, the old default place is outside",
        "/{.metadata.namespace}/chat",
        None,
        "RoutePathNotAllowed",
        policy={"pathPrefix": "/teams/{.metadata.namespace}/"},
    ),
    PathCase(
        "custom-prefix-default-path",
        "no template: the default path is <prefix>/<uid>, so it stays inside any prefix",
        None,
        "/teams/ml-team/0b5e-uid",
        policy={"pathPrefix": "/teams/{.metadata.namespace}"},
    ),
    PathCase(
        "prefix-keeps-repeats",
        "namespace `teams` under /teams/{ns}/ gets the prefix /teams/teams, not /teams (which "
        "would cover every namespace): /teams/research stays refused",
        "/teams/research/chat",
        None,
        "RoutePathNotAllowed",
        policy={"pathPrefix": "/teams/{.metadata.namespace}/"},
        namespace="teams",
    ),
    PathCase(
        "prefix-keeps-repeats-default-path",
        "that namespace's default path keeps the repeat too, so it is routed inside its prefix",
        None,
        "/teams/teams/0b5e-uid",
        policy={"pathPrefix": "/teams/{.metadata.namespace}/"},
        namespace="teams",
    ),
    PathCase(
        "encoded-prefix-default-path",
        "a prefix that needs encoding keeps it once in the default path (encoded twice it would "
        "lie outside its own prefix)",
        None,
        "/ml%20models/ml-team/0b5e-uid",
        policy={"pathPrefix": "/ML Models/{.metadata.namespace}/"},
    ),
    PathCase(
        "root-prefix",
        "a platform that wants no path policy says `/`",
        "/anything/chat",
        "/anything/chat",
        policy={"pathPrefix": "/"},
    ),
]


@table(PATH_CASES)
def test_a_route_path_outside_the_policy_gets_no_route(case: PathCase) -> None:
    """A path inside the policy's prefix is routed; one outside it gets no HTTPRoute, and
    HTTPRouteReady says why; the InferenceService is composed either way."""
    pool = [platform(**({"policy": case.policy} if case.policy else {})), *world(case.namespace)]
    xr = routed(case.namespace, **({"pathTemplate": case.template} if case.template else {}))
    comp = reconcile(xr, pool)
    assert path_of(comp) == case.want_path, case.reason
    assert conditions(comp)["HTTPRouteReady"][1] == case.want_reason, case.reason
    assert INFERENCE_SERVICE in comp.resources, case.reason
    assert status(comp)["status"] == ("Starting" if case.want_path else "Degraded"), case.reason


def test_the_refusal_names_the_field_the_path_the_prefix_and_the_fix() -> None:
    """The message says which field rendered which path, the prefix it must stay under, and how
    to fix it; it is also a warning event."""
    comp = reconcile(routed(pathTemplate="/research/{.metadata.name}"), [platform(), *WORLD])
    message = message_of(comp, "HTTPRouteReady")
    assert message.startswith("spec.routing.pathTemplate renders /research/qwen-chat,"), message
    assert "outside the service's route prefix /ml-team/" in message
    assert "default route policy `/{.metadata.namespace}/`" in message
    assert "start the path with /ml-team/" in message
    assert "no HTTPRoute is created or changed" in message
    assert message in comp.warnings


@dataclass(frozen=True)
class SourceCase(Case):
    namespaced_template: str | None
    cluster_template: str | None
    policy: dict[str, Any] | None
    field: str


SOURCE_CASES = [
    SourceCase(
        "namespaced-template",
        "a team's AIMRuntimeConfig is tenant-written, so its template is held to the policy too",
        "/research/{.metadata.name}",
        None,
        None,
        "spec.routing.pathTemplate of AIMRuntimeConfig 'default'",
    ),
    SourceCase(
        "cluster-template",
        "the platform's own template outside its own policy is named as the platform's to fix",
        None,
        "/models/{.metadata.name}",
        {"pathPrefix": "/{.metadata.namespace}/"},
        "spec.routing.pathTemplate of AIMClusterRuntimeConfig 'default'",
    ),
]


@table(SOURCE_CASES)
def test_a_runtime_configs_template_is_named_by_its_kind(case: SourceCase) -> None:
    """A path from a runtime config names the config that wrote the template."""
    cluster_routing: dict[str, Any] = {}
    if case.cluster_template:
        cluster_routing["pathTemplate"] = case.cluster_template
    if case.policy:
        cluster_routing["policy"] = case.policy
    pool = [platform(**cluster_routing), *WORLD]
    if case.namespaced_template:
        pool.append(config(routing={"pathTemplate": case.namespaced_template}))
    comp = reconcile(routed(), pool)
    assert conditions(comp)["HTTPRouteReady"] == ("False", "RoutePathNotAllowed"), case.reason
    message = message_of(comp, "HTTPRouteReady")
    assert message.startswith(case.field), (case.reason, message)
    if case.policy:
        assert "spec.routing.policy.pathPrefix `/{.metadata.namespace}/` of" in message


def test_an_existing_route_stays_where_it_is_when_its_new_path_is_refused() -> None:
    """Editing the template to another team's path does not move the route there: the HTTPRoute
    that exists is kept as it is (not ready), as for a template that does not render."""
    pool = [platform(), *WORLD]
    before = reconcile(routed(pathTemplate="/{.metadata.namespace}/chat"), pool)
    existing = before.resources[HTTP_ROUTE].manifest
    after = reconcile(
        routed(pathTemplate="/research/chat"), pool, {HTTP_ROUTE: copy.deepcopy(existing)}
    )
    assert conditions(after)["HTTPRouteReady"] == ("False", "RoutePathNotAllowed")
    assert path_of(after) == "/ml-team/chat"
    assert not after.resources[HTTP_ROUTE].ready


# --- annotations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotationCase(Case):
    service: dict[str, str] | None
    """The service's spec.routing.annotations."""
    want: dict[str, str] | None
    """The route's annotations; None: no route."""
    refused_in: str = ""
    """A part of the message: the field and the key refused."""
    namespaced: dict[str, str] | None = None
    """The namespace's AIMRuntimeConfig's spec.routing.annotations."""
    cluster: dict[str, str] | None = None
    """The platform's own spec.routing.annotations."""
    allowed: list[str] | None = None
    """The platform's spec.routing.policy.allowedAnnotations."""


ANNOTATION_CASES = [
    AnnotationCase(
        "service-default-refused",
        "by default a tenant adds no annotations: gateway controllers read some as settings",
        {"konghq.com/plugins": "no-auth"},
        None,
        "spec.routing.annotations sets 'konghq.com/plugins'",
    ),
    AnnotationCase(
        "namespaced-default-refused",
        "the namespace's AIMRuntimeConfig is the tenant's too, and is named as the source",
        None,
        None,
        "spec.routing.annotations of AIMRuntimeConfig 'default' sets 'konghq.com/plugins'",
        namespaced={"konghq.com/plugins": "no-auth"},
    ),
    AnnotationCase(
        "cluster-passes",
        "the platform's own annotations always pass, whatever the policy allows",
        None,
        {"example.com/tier": "gold"},
        cluster={"example.com/tier": "gold"},
    ),
    AnnotationCase(
        "service-repeats-cluster",
        "the platform's annotation with the platform's value is still the platform's",
        {"example.com/tier": "gold"},
        {"example.com/tier": "gold"},
        cluster={"example.com/tier": "gold"},
    ),
    AnnotationCase(
        "service-overrides-cluster",
        "a tenant's value for the platform's key is the tenant's: the key must be allowed",
        {"example.com/tier": "platinum"},
        None,
        "spec.routing.annotations sets 'example.com/tier'",
        cluster={"example.com/tier": "gold"},
    ),
    AnnotationCase(
        "exact-key-allowed",
        "a key the policy lists passes",
        {"owner": "alice"},
        {"owner": "alice"},
        allowed=["owner"],
    ),
    AnnotationCase(
        "prefix-allowed",
        "a prefix ending in / allows every key of that prefix",
        {"team.example.com/cost-center": "42"},
        {"team.example.com/cost-center": "42"},
        allowed=["team.example.com/"],
    ),
    AnnotationCase(
        "prefix-is-its-domain-only",
        "a prefix allows its own domain, not a subdomain nor a longer name",
        {"sub.team.example.com/x": "1", "team.example.community/x": "2"},
        None,
        "sets 'sub.team.example.com/x', 'team.example.community/x'",
        allowed=["team.example.com/"],
    ),
]


@table(ANNOTATION_CASES)
def test_tenants_route_annotations_need_the_policy_to_allow_them(case: AnnotationCase) -> None:
    """An annotation a tenant sets reaches the route only when the policy allows its key; one it
    does not allow means no route, naming the key and the field that set it."""
    cluster: dict[str, Any] = {}
    if case.cluster:
        cluster["annotations"] = case.cluster
    if case.allowed:
        cluster["policy"] = {"allowedAnnotations": case.allowed}
    pool = [platform(**cluster), *WORLD]
    if case.namespaced:
        pool.append(config(routing={"annotations": case.namespaced}))
    comp = reconcile(routed(**({"annotations": case.service} if case.service else {})), pool)
    if case.want is None:
        assert HTTP_ROUTE not in comp.resources, case.reason
        assert conditions(comp)["HTTPRouteReady"] == ("False", "RouteAnnotationNotAllowed")
        message = message_of(comp, "HTTPRouteReady")
        assert case.refused_in in message, (case.reason, message)
        assert "spec.routing.policy.allowedAnnotations of AIMClusterRuntimeConfig" in message
    else:
        route: Any = comp.resources[HTTP_ROUTE].manifest
        assert route["metadata"].get("annotations", {}) == case.want, case.reason


def test_a_refused_path_and_annotation_are_told_together() -> None:
    """Both problems are in one message, so a user fixes them in one go; the path's reason wins."""
    xr = routed(pathTemplate="/research/chat", annotations={"konghq.com/plugins": "x"})
    comp = reconcile(xr, [platform(), *WORLD])
    assert conditions(comp)["HTTPRouteReady"] == ("False", "RoutePathNotAllowed")
    message = message_of(comp, "HTTPRouteReady")
    assert "renders /research/chat" in message
    assert "'konghq.com/plugins'" in message


# --- only the platform sets the policy -----------------------------------------------------------


def test_a_namespaced_runtime_config_cannot_carry_a_policy() -> None:
    """A team's AIMRuntimeConfig with `routing.policy` (its XRD refuses the field; this is what
    holds where admission did not run) is refused naming it, rather than merged over the
    platform's: nothing new is composed, no route at `/`."""
    loosened = config(routing={"policy": {"pathPrefix": "/"}, "pathTemplate": "/research/chat"})
    comp = reconcile(routed(), [platform(), loosened, *WORLD])
    assert conditions(comp)["RuntimeConfigReady"] == ("False", "InvalidSpec")
    message = message_of(comp, "RuntimeConfigReady")
    assert "spec.routing.policy is the platform's" in message
    assert "AIMClusterRuntimeConfig 'default'" in message
    assert comp.resources == {}


def test_a_service_cannot_carry_a_policy() -> None:
    """The service's routing has no policy field: one is refused naming it."""
    with pytest.raises(InvalidSpecError, match=r"spec\.routing\.policy"):
        reconcile(routed(policy={"pathPrefix": "/"}), [platform(), *WORLD])


def test_a_namespaced_runtime_config_does_not_loosen_the_platforms_prefix() -> None:
    """The team's config merged over the platform's changes its defaults, not its policy: the
    team's template is held to the platform's custom prefix."""
    strict = platform(policy={"pathPrefix": "/teams/{.metadata.namespace}/"})
    team = config(routing={"pathTemplate": "/{.metadata.namespace}/chat"})
    comp = reconcile(routed(), [strict, team, *WORLD])
    assert conditions(comp)["HTTPRouteReady"] == ("False", "RoutePathNotAllowed")
    assert "/teams/ml-team/" in message_of(comp, "HTTPRouteReady")
