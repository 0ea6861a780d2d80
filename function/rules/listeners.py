"""Which of a Gateway's listeners a route without hostnames attaches to.

Gateway API attaches a route with no hostnames to every listener its parent reference selects
(all of them, or the one `sectionName` names, or those on `port`) that takes HTTPRoutes from the
route's namespace. On a Gateway with several such listeners the route answers on all of them,
including those meant for other teams' hosts or for authenticated traffic: the AIM operator's
security fix #142 refuses such a route. Where we cannot tell (a namespace selector, whose labels we
do not read), the listener counts as one the route may attach to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

HTTP_PROTOCOLS: Final = frozenset({"HTTP", "HTTPS"})


@dataclass(frozen=True)
class Listener:
    """What of a Gateway listener decides whether an HTTPRoute can attach to it."""

    name: str | None
    port: int | None
    protocol: str | None
    takes_http_routes: bool
    """`allowedRoutes.kinds` is unset (HTTP listeners take HTTPRoutes) or lists HTTPRoute."""
    namespaces_from: str
    """`allowedRoutes.namespaces.from`: `Same` (the default), `All` or `Selector`."""


def attachable(
    listeners: Sequence[Listener],
    *,
    section_name: str | None,
    port: int | None,
    gateway_namespace: str,
    route_namespace: str,
) -> list[Listener]:
    """The listeners a route from `route_namespace` without hostnames would attach to."""
    return [
        listener
        for listener in listeners
        if (section_name is None or listener.name == section_name)
        and (port is None or listener.port == port)
        and (listener.protocol is None or listener.protocol in HTTP_PROTOCOLS)
        and listener.takes_http_routes
        and (listener.namespaces_from != "Same" or gateway_namespace == route_namespace)
    ]
