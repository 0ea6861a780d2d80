"""Typed views of what other controllers write in the objects composers read.

An object's conditions, an HTTPRoute's parents, a HorizontalPodAutoscaler's replica counts, a
PersistentVolumeClaim's phase: another controller writes them, so each view reads what it needs
once and tolerates the rest. An absent or ill-typed field reads as empty ("" or None), a list
that is not one as no entries, and lists and strings are cut at a bound (strings with
function/rules/text's `word` and `text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from function.kube.objects import status_of
from function.rules.listeners import Listener
from function.rules.text import text, word

GATEWAY_GROUP = "gateway.networking.k8s.io"

_MAX_ENTRIES = 64
"""Conditions, route parents or listeners read from one object; Gateway API allows 64 listeners
and real objects have a handful of each."""


def _entries(value: JsonValue) -> list[Mapping[str, JsonValue]]:
    if not isinstance(value, list):
        return []
    return [v for v in value[:_MAX_ENTRIES] if isinstance(v, dict)]


@dataclass(frozen=True)
class ObjectCondition:
    """One entry of an object's `status.conditions`."""

    type: str
    status: str = ""
    """"True", "False" or "Unknown" as written; empty when it has none."""
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""

    @property
    def is_true(self) -> bool:
        """Whether its status is "True"."""
        return self.status == "True"

    @property
    def is_false(self) -> bool:
        """Whether its status is "False" (not merely not True)."""
        return self.status == "False"


def _condition(entry: Mapping[str, JsonValue]) -> ObjectCondition:
    return ObjectCondition(
        type=word(entry.get("type")),
        status=word(entry.get("status")),
        reason=word(entry.get("reason")),
        message=text(entry.get("message")),
        last_transition_time=word(entry.get("lastTransitionTime")),
    )


def conditions(value: JsonValue) -> tuple[ObjectCondition, ...]:
    """The conditions in a `conditions` list, in order."""
    return tuple(_condition(c) for c in _entries(value))


def find(found: tuple[ObjectCondition, ...], condition_type: str) -> ObjectCondition | None:
    """The first condition of that type, None when there is none."""
    return next((c for c in found if c.type == condition_type), None)


def condition_of(
    obj: Mapping[str, JsonValue] | None, condition_type: str
) -> ObjectCondition | None:
    """The object's `status.conditions` entry of that type, None when it has none.

    Only that entry is read: composers ask this of every listed object on every call.
    """
    entry = next(
        (c for c in _entries(status_of(obj).get("conditions")) if c.get("type") == condition_type),
        None,
    )
    return _condition(entry) if entry is not None else None


def is_true(obj: Mapping[str, JsonValue] | None, condition_type: str) -> bool:
    """Whether the object's condition of that type is True (a Job's Complete, say)."""
    found = condition_of(obj, condition_type)
    return found is not None and found.is_true


@dataclass(frozen=True)
class ParentRef:
    """A Gateway API parent reference: the Gateway (and listener) a route attaches to."""

    name: str | None = None
    namespace: str | None = None
    section_name: str | None = None

    @classmethod
    def read(cls, ref: Mapping[str, JsonValue]) -> ParentRef:
        """From a `parentRef` object; ill-typed fields read as unset."""
        fields = (ref.get("name"), ref.get("namespace"), ref.get("sectionName"))
        name, namespace, section = (word(v) if isinstance(v, str) else None for v in fields)
        return cls(name, namespace, section)

    def same_as(self, other: ParentRef, namespace: str) -> bool:
        """Whether both name the same listener; an unset namespace is the route's `namespace`."""
        return (
            self.name == other.name
            and (self.namespace or namespace) == (other.namespace or namespace)
            and self.section_name == other.section_name
        )


@dataclass(frozen=True)
class RouteParent:
    """What one Gateway said about a route (`status.parents[]`)."""

    ref: ParentRef
    conditions: tuple[ObjectCondition, ...]


def route_parents(route: Mapping[str, JsonValue]) -> tuple[RouteParent, ...]:
    """The parents an HTTPRoute's status reports on; entries without a `parentRef` left out."""
    return tuple(
        RouteParent(ParentRef.read(ref), conditions(p.get("conditions")))
        for p in _entries(status_of(route).get("parents"))
        if isinstance(ref := p.get("parentRef"), dict)
    )


def gateway_listeners(gateway: Mapping[str, JsonValue]) -> tuple[Listener, ...]:
    """A Gateway's `spec.listeners`, as much as decides which routes attach to each.

    Where a field cannot be read the listener counts as one a route may attach to: an unknown
    `allowedRoutes.namespaces.from` reads as `Selector`, which takes some namespaces.
    """
    return tuple(_listener(e) for e in _entries(field_at(gateway, "spec", "listeners")))


def _listener(entry: Mapping[str, JsonValue]) -> Listener:
    name, protocol, port = entry.get("name"), entry.get("protocol"), entry.get("port")
    kinds = _entries(field_at(entry, "allowedRoutes", "kinds"))
    where = field_at(entry, "allowedRoutes", "namespaces", "from")
    return Listener(
        name=word(name) if isinstance(name, str) else None,
        port=port if isinstance(port, int) and not isinstance(port, bool) else None,
        protocol=word(protocol) if isinstance(protocol, str) else None,
        # Unset or empty: the protocol's kinds, which for HTTP and HTTPS include HTTPRoute.
        takes_http_routes=not kinds
        or any(
            k.get("kind") == "HTTPRoute" and k.get("group") in {None, GATEWAY_GROUP} for k in kinds
        ),
        namespaces_from="Same"
        if where is None
        else where
        if where in ("Same", "All")
        else "Selector",
    )


@dataclass(frozen=True)
class AutoscalerStatus:
    """What a HorizontalPodAutoscaler reports: replica counts (None: not an integer), conditions."""

    current_replicas: int | None
    desired_replicas: int | None
    conditions: tuple[ObjectCondition, ...]


def _count(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def autoscaler_status(hpa: Mapping[str, JsonValue]) -> AutoscalerStatus:
    """A HorizontalPodAutoscaler's status."""
    status = status_of(hpa)
    return AutoscalerStatus(
        current_replicas=_count(status.get("currentReplicas")),
        desired_replicas=_count(status.get("desiredReplicas")),
        conditions=conditions(status.get("conditions")),
    )


def phase_of(obj: Mapping[str, JsonValue] | None) -> str | None:
    """`status.phase` (a PersistentVolumeClaim's, a Pod's); None when it has none."""
    phase = status_of(obj).get("phase")
    return word(phase) if isinstance(phase, str) else None


def field_at(obj: Mapping[str, JsonValue] | JsonValue, key: str, *path: str) -> JsonValue:
    """The value at `key, *path` (`"spec", "model", "image"`), None where the path does not lead."""
    node = obj.get(key) if isinstance(obj, Mapping) else None
    for step in path:
        if not isinstance(node, dict):
            return None
        node = node.get(step)
    return node


def string_at(obj: Mapping[str, JsonValue] | JsonValue, key: str, *path: str) -> str | None:
    """The string at `key, *path`, None where there is none (absent, or not a string)."""
    value = field_at(obj, key, *path)
    return value if isinstance(value, str) else None
