"""Routes pinned to hostnames: a tenant answers only for hosts the platform lets it have, and a
route with no hostnames is not left on a Gateway whose several listeners would all serve it.

A route without hostnames attaches to every listener of its Gateway that takes it, including one
meant for other teams' hosts or for authenticated traffic (the AIM operator's security fix #142),
so where there are several the service gets no HTTPRoute until it names its hosts. The hosts a
tenant may name are the platform's own (its AIMClusterRuntimeConfig's `routing.hostnames`) and
those its route policy's `allowedHostnames` patterns cover.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from function.compose.service import HTTP_ROUTE, INFERENCE_SERVICE
from function.kube.contract import Composition
from tests.cases import Case, table
from tests.unit.compose.service.test_compose_service import (
    WORLD,
    conditions,
    config,
    message_of,
    reconcile,
    status,
)
from tests.unit.compose.service.test_route_policy import GATEWAY, platform, routed


def hostnames_of(comp: Composition) -> list[str] | None:
    """The composed route's `spec.hostnames`; None when there is no route."""
    if HTTP_ROUTE not in comp.resources:
        return None
    route: Any = comp.resources[HTTP_ROUTE].manifest
    return list(route["spec"].get("hostnames", []))


@dataclass(frozen=True)
class HostCase(Case):
    service: list[str] | None
    """The service's spec.routing.hostnames; None: unset."""
    want: list[str] | None
    """The route's hostnames; None: no route."""
    refused_in: str = ""
    """A part of the refusal's message: the field and the host refused."""
    cluster: list[str] | None = None
    """The platform's own spec.routing.hostnames."""
    namespaced: list[str] | None = None
    """The namespace's AIMRuntimeConfig's spec.routing.hostnames."""
    allowed: list[str] = field(default_factory=list)
    """The platform's spec.routing.policy.allowedHostnames."""


HOST_CASES = [
    HostCase(
        "none",
        "no hostnames anywhere: the route answers for any host its one listener has, as before",
        None,
        [],
    ),
    HostCase(
        "cluster-inherited",
        "the platform pins every service of its config to its workloads host",
        None,
        ["workloads.example.com"],
        cluster=["workloads.example.com"],
    ),
    HostCase(
        "service-default-refused",
        "by default a tenant may not name a host of its own: it could answer for another team's",
        ["chat.research.example.com"],
        None,
        "spec.routing.hostnames pins chat.research.example.com",
    ),
    HostCase(
        "service-repeats-platform",
        "a tenant may narrow to the platform's own hosts",
        ["workloads.example.com"],
        ["workloads.example.com"],
        cluster=["workloads.example.com", "api.example.com"],
    ),
    HostCase(
        "namespaced-refused",
        "the namespace's AIMRuntimeConfig is the tenant's too, and is named as the source",
        None,
        None,
        "spec.routing.hostnames of AIMRuntimeConfig 'default' pins chat.example.com",
        namespaced=["chat.example.com"],
    ),
    HostCase(
        "namespace-pattern",
        "`*.{.metadata.namespace}.example.com` gives each team its own subdomain, wildcards too",
        ["chat.ml-team.example.com", "*.ml-team.example.com"],
        ["chat.ml-team.example.com", "*.ml-team.example.com"],
        allowed=["*.{.metadata.namespace}.example.com"],
    ),
    HostCase(
        "another-teams-subdomain",
        "the same pattern does not give ml-team the research team's subdomain",
        ["chat.research.example.com"],
        None,
        "pins chat.research.example.com",
        allowed=["*.{.metadata.namespace}.example.com"],
    ),
    HostCase(
        "wildcard-not-its-base",
        "`*.ml-team.example.com` covers the names below it, not ml-team.example.com itself",
        ["ml-team.example.com"],
        None,
        "pins ml-team.example.com",
        allowed=["*.ml-team.example.com"],
    ),
    HostCase(
        "suffix-is-by-label",
        "a wildcard matches whole labels: `*.example.com` does not cover `evilexample.com`",
        ["evilexample.com"],
        None,
        "pins evilexample.com",
        allowed=["*.example.com"],
    ),
    HostCase(
        "exact-pattern",
        "a pattern without a wildcard allows that one name",
        ["ml-team.example.com"],
        ["ml-team.example.com"],
        allowed=["{.metadata.namespace}.example.com"],
    ),
    HostCase(
        "service-unpins",
        "a service's list replaces its config's whole: an empty one unpins it",
        [],
        [],
        cluster=["workloads.example.com"],
    ),
]


@table(HOST_CASES)
def test_tenants_hostnames_need_the_platform_to_allow_them(case: HostCase) -> None:
    """A host a tenant names reaches the route only when it is the platform's or the policy
    allows it; any other means no route, naming the host, the field and where to allow it."""
    cluster: dict[str, Any] = {}
    if case.cluster is not None:
        cluster["hostnames"] = case.cluster
    if case.allowed:
        cluster["policy"] = {"allowedHostnames": case.allowed}
    pool = [platform(**cluster), *WORLD]
    if case.namespaced is not None:
        pool.append(config(routing={"hostnames": case.namespaced}))
    own = {"hostnames": case.service} if case.service is not None else {}
    comp = reconcile(routed(**own), pool)
    assert hostnames_of(comp) == case.want, case.reason
    assert INFERENCE_SERVICE in comp.resources, case.reason
    if case.want is None:
        assert conditions(comp)["HTTPRouteReady"] == ("False", "RouteHostnameNotAllowed")
        message = message_of(comp, "HTTPRouteReady")
        assert case.refused_in in message, (case.reason, message)
        assert "spec.routing.policy.allowedHostnames" in message, message
        assert status(comp)["status"] == "Degraded", case.reason
    else:
        assert status(comp)["routing"].get("hostnames") == (case.want or None), case.reason


def listener(name: str, port: int = 80, protocol: str = "HTTP", **allowed: Any) -> Any:
    """A Gateway listener, taking routes from every namespace unless `allowed` says otherwise."""
    return {
        "name": name,
        "port": port,
        "protocol": protocol,
        "allowedRoutes": allowed or {"namespaces": {"from": "All"}},
    }


def gateway(*listeners: Any) -> Any:
    """The platform's Gateway `gateways/inference` with those listeners."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": GATEWAY["name"], "namespace": GATEWAY["namespace"]},
        "spec": {"gatewayClassName": "any", "listeners": list(listeners)},
    }


WORKLOADS = listener("workloads")
API = listener("api", 443, "HTTPS")


@dataclass(frozen=True)
class ListenerCase(Case):
    listeners: list[Any] | None
    """The Gateway's listeners; None: there is no Gateway."""
    routed: bool
    """Whether the service gets its route."""
    ref: dict[str, Any] = field(default_factory=dict)
    """What the service's gatewayRef adds to the platform's (sectionName, port)."""
    hostnames: list[str] | None = None
    """The platform's own spec.routing.hostnames."""


LISTENER_CASES = [
    ListenerCase(
        "one-listener",
        "a route without hosts has one listener to answer on",
        [WORKLOADS],
        routed=True,
    ),
    ListenerCase(
        "two-listeners",
        "two listeners take it: it would answer on the authenticated api listener too",
        [WORKLOADS, API],
        routed=False,
    ),
    ListenerCase(
        "pinned",
        "pinned to a host, it attaches only where a listener matches it",
        [WORKLOADS, API],
        routed=True,
        hostnames=["workloads.example.com"],
    ),
    ListenerCase(
        "section-name",
        "a gatewayRef naming one listener attaches to that one only",
        [WORKLOADS, API],
        routed=True,
        ref={"sectionName": "workloads"},
    ),
    ListenerCase(
        "port",
        "a gatewayRef with a port attaches to the listeners on that port only",
        [WORKLOADS, API],
        routed=True,
        ref={"port": 443},
    ),
    ListenerCase(
        "tls-listener",
        "a TLS passthrough listener takes no HTTPRoute",
        [WORKLOADS, listener("passthrough", 8443, "TLS")],
        routed=True,
    ),
    ListenerCase(
        "grpc-only",
        "a listener that takes only GRPCRoutes is not one this route attaches to",
        [WORKLOADS, listener("grpc", 81, kinds=[{"kind": "GRPCRoute"}])],
        routed=True,
    ),
    ListenerCase(
        "same-namespace",
        "a listener taking routes from the Gateway's own namespace only does not take ml-team's",
        [WORKLOADS, listener("internal", 81, namespaces={"from": "Same"})],
        routed=True,
    ),
    ListenerCase(
        "default-namespaces",
        "allowedRoutes unset means the Gateway's own namespace only (Gateway API's default)",
        [WORKLOADS, {"name": "internal", "port": 81, "protocol": "HTTP"}],
        routed=True,
    ),
    ListenerCase(
        "selector",
        "a namespace selector may take ml-team (its labels are not read), so it counts",
        [WORKLOADS, listener("tenants", 81, namespaces={"from": "Selector", "selector": {}})],
        routed=False,
    ),
    ListenerCase(
        "no-gateway",
        "a Gateway that does not exist exposes nothing yet: the route is composed",
        None,
        routed=True,
    ),
]


@table(LISTENER_CASES)
def test_a_route_without_hostnames_needs_a_gateway_with_one_listener_for_it(
    case: ListenerCase,
) -> None:
    """Where several listeners would take a route without hostnames there is no route, and
    HTTPRouteReady names the Gateway, its listeners and both fixes."""
    routing: dict[str, Any] = {"gatewayRef": {**GATEWAY, **case.ref}}
    if case.hostnames:
        routing["hostnames"] = case.hostnames
    pool = [platform(**routing), *WORLD]
    if case.listeners is not None:
        pool.append(gateway(*case.listeners))
    comp = reconcile(routed(), pool)
    assert (HTTP_ROUTE in comp.resources) == case.routed, case.reason
    assert INFERENCE_SERVICE in comp.resources, case.reason
    if not case.routed:
        assert conditions(comp)["HTTPRouteReady"] == ("False", "RouteHostnameRequired")
        message = message_of(comp, "HTTPRouteReady")
        assert message.startswith("Gateway gateways/inference has 2 listeners"), message
        assert "set spec.routing.hostnames" in message, message
        assert "spec.routing.gatewayRef.sectionName" in message, message
        assert message in comp.warnings


def test_a_route_is_withdrawn_when_its_gateway_gains_a_listener() -> None:
    """Unlike a refused path, which keeps the route where it was, a route without hostnames is
    itself the exposure: once the Gateway has a second listener, the route composed before is
    no longer desired, so Crossplane deletes it."""
    pool = [platform(), *WORLD, gateway(WORKLOADS)]
    before = reconcile(routed(), pool)
    existing = copy.deepcopy(before.resources[HTTP_ROUTE].manifest)
    pool[-1] = gateway(WORKLOADS, API)
    after = reconcile(routed(), pool, {HTTP_ROUTE: existing})
    assert HTTP_ROUTE not in after.resources
    assert conditions(after)["HTTPRouteReady"] == ("False", "RouteHostnameRequired")
    assert INFERENCE_SERVICE in after.resources


def test_a_refused_hostname_keeps_the_route_where_it_was() -> None:
    """Changing the hosts to one the policy refuses does not move the route to it: the route
    that exists stays as it is, pinned to the platform's host."""
    pool = [platform(hostnames=["workloads.example.com"]), *WORLD]
    before = reconcile(routed(), pool)
    existing = copy.deepcopy(before.resources[HTTP_ROUTE].manifest)
    after = reconcile(routed(hostnames=["chat.example.com"]), pool, {HTTP_ROUTE: existing})
    assert conditions(after)["HTTPRouteReady"] == ("False", "RouteHostnameNotAllowed")
    assert hostnames_of(after) == ["workloads.example.com"]
