"""A Gateway API implementation accepting HTTPRoutes, which only the e2e node runs (Traefik).

It writes only the route's status: one entry per parent the route names, Accepted and
ResolvedRefs True at the route's generation, which is what the function reads to tell that the
route is carried (`function/compose/service/route_status.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from aim_plan.standins.conditions import true

CONTROLLER_NAME: Final = "aim.silogen.ai/simulated-gateway"
"""The controller the stand-in says it is, wherever it runs: a real one names itself (Traefik
does), and the function reads no name."""


def is_accepted(route: Mapping[str, Any]) -> bool:
    """Whether a gateway already wrote the route's parents (it has nothing more to do)."""
    return bool((route.get("status") or {}).get("parents"))


def accepted(route: Mapping[str, Any], at: str) -> dict[str, Any]:
    """The route's status once accepted on each parent it names, at its generation."""
    generation = route["metadata"].get("generation", 1)
    parents = [
        {
            "parentRef": ref,
            "controllerName": CONTROLLER_NAME,
            "conditions": [
                {**true(kind, at, kind), "observedGeneration": generation}
                for kind in ("Accepted", "ResolvedRefs")
            ],
        }
        for ref in (route.get("spec") or {}).get("parentRefs") or []
    ]
    return {"parents": parents}
