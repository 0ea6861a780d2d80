"""What a Gateway said of a service's HTTPRoute, in the route's `status.parents[]`.

Gateway implementations write it; its messages are quoted within bounds, as anything another
controller writes.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from function.kube import views
from function.kube.views import ParentRef, route_parents
from function.rules.pods import MAX_QUOTE
from function.rules.status import ConditionType, Health, Reason
from function.rules.text import cut


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
