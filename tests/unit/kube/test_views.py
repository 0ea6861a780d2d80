"""Typed views of what other controllers write (function/kube/views.py): junk reads as absent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.kube.views import (
    ParentRef,
    autoscaler_status,
    condition_of,
    field_at,
    gateway_listeners,
    route_parents,
    string_at,
)
from tests.cases import Case, table


@dataclass(frozen=True)
class ConditionCase(Case):
    conditions: Any
    want_status: str | None


CONDITION_CASES = [
    ConditionCase(
        "found", "the entry of the asked type", [{"type": "Ready", "status": "True"}], "True"
    ),
    ConditionCase(
        "first-wins",
        "a controller that repeats a type: the first entry counts",
        [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}],
        "False",
    ),
    ConditionCase("absent", "no entry of that type", [{"type": "Other", "status": "True"}], None),
    ConditionCase("not-a-list", "conditions that are not a list", {"type": "Ready"}, None),
    ConditionCase(
        "junk-entries",
        "entries that are not objects are skipped, not fatal",
        ["Ready", 3, None, {"type": "Ready", "status": 1}],
        "",
    ),
    ConditionCase(
        "bounded",
        "a status with thousands of conditions is read only so far",
        [{"type": f"T{i}"} for i in range(1000)] + [{"type": "Ready", "status": "True"}],
        None,
    ),
]


@table(CONDITION_CASES)
def test_a_condition_is_read_whatever_else_the_list_holds(case: ConditionCase) -> None:
    """Another controller's conditions never fail a composer, however they are written."""
    found = condition_of({"status": {"conditions": case.conditions}}, "Ready")
    assert (found.status if found else None) == case.want_status, case.reason


def test_a_route_parent_matches_its_listener_in_the_routes_namespace() -> None:
    """An unset parentRef namespace is the route's own, as the Gateway API says."""
    route: dict[str, Any] = {
        "status": {
            "parents": [
                "junk",
                {"parentRef": "junk"},
                {
                    "parentRef": {"name": "gw", "sectionName": "http"},
                    "conditions": [{"type": "Accepted", "status": "True"}],
                },
            ]
        }
    }
    parents = route_parents(route)
    assert len(parents) == 1
    ours = ParentRef(name="gw", namespace="team", section_name="http")
    assert parents[0].ref.same_as(ours, "team")
    assert not parents[0].ref.same_as(ours, "other")
    assert not parents[0].ref.same_as(ParentRef(name="gw", namespace="team"), "team")


def test_autoscaler_counts_that_are_not_integers_read_as_unknown() -> None:
    """A bool is an int to Python; a count written as text is no count."""
    status = autoscaler_status({"status": {"currentReplicas": True, "desiredReplicas": "3"}})
    assert (status.current_replicas, status.desired_replicas) == (None, None)
    assert autoscaler_status({"status": {"currentReplicas": 2}}).current_replicas == 2


def test_a_field_is_read_by_path_and_absent_where_the_path_breaks() -> None:
    """A field of another object is read only where every step of its path is an object."""
    obj: dict[str, Any] = {"spec": {"model": {"image": "img"}, "list": [1]}}
    assert string_at(obj, "spec", "model", "image") == "img"
    assert string_at(obj, "spec", "list", "x") is None, "a list is not an object"
    assert field_at(obj, "spec", "list") == [1]
    assert string_at("not an object", "spec") is None
    assert string_at({"spec": {"n": 3}}, "spec", "n") is None, "a number is not a string"


@dataclass(frozen=True)
class FromCase(Case):
    written: Any
    """`allowedRoutes.namespaces.from` as the Gateway has it; ABSENT: unset."""
    want: str


FROM_CASES = [
    FromCase("unset", "Gateway API's default is the Gateway's own namespace", None, "Same"),
    FromCase("all", "every namespace", "All", "All"),
    FromCase("selector", "namespaces by label", "Selector", "Selector"),
    FromCase(
        "unknown",
        "a value we do not know may take the route's namespace: it counts as a selector, so a "
        "refusal errs on the side of not exposing the route",
        "Everyone",
        "Selector",
    ),
    FromCase("ill-typed", "an object where the word belongs reads as unknown, not as Same",
             {"x": 1}, "Selector"),
]  # fmt: skip


@table(FROM_CASES)
def test_a_listeners_namespaces_read_towards_exposure(case: FromCase) -> None:
    """Where a Gateway's listener takes routes from is read so that what we cannot tell counts
    as taking them: reading it as `Same` would let a route without hostnames onto it."""
    namespaces = {} if case.written is None else {"from": case.written}
    listeners: Any = [{"name": "web", "allowedRoutes": {"namespaces": namespaces}}]
    [listener] = gateway_listeners({"spec": {"listeners": listeners}})
    assert listener.namespaces_from == case.want, case.reason


def test_a_listener_takes_http_routes_unless_its_kinds_leave_them_out() -> None:
    """Unset or empty kinds are the protocol's (HTTPRoute for HTTP); a list must name it."""

    def takes(kinds: Any) -> bool:
        spec: Any = {"listeners": [{"name": "web", "allowedRoutes": {"kinds": kinds}}]}
        return gateway_listeners({"spec": spec})[0].takes_http_routes

    assert takes(None)
    assert takes([])
    assert takes([{"kind": "HTTPRoute"}, {"kind": "GRPCRoute"}])
    assert takes([{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute"}])
    assert not takes([{"kind": "GRPCRoute"}])
    assert not takes([{"group": "example.com", "kind": "HTTPRoute"}]), "another group's kind"
