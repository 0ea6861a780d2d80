"""Crossplane's required-resources loop, in process, for composer unit tests.

`reconcile` answers each requirement from a pool of objects (by kind, name, namespace and
labels) and calls the composer again until its requirements stop changing, as Crossplane does
within one reconcile (the real loop runs in the render tests).
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest

from function.api.meta import Manifest
from function.compose import Composer
from function.kube.contract import AskRegistry, Composition, Inspect, Observed

MAX_CALLS = 6


def answer(comp: Composition, pool: list[Manifest]) -> dict[str, tuple[Manifest, ...]]:
    """What Crossplane would fetch for the composer's requirements."""
    fetched = {}
    for r in comp.requirements:
        fetched[r.name] = tuple(
            o
            for o in pool
            if o["kind"] == r.kind
            and (r.match_name is None or _meta(o)["name"] == r.match_name)
            and (r.namespace is None or _meta(o).get("namespace") == r.namespace)
            and _has_labels(o, r.match_labels or {})
        )
    return fetched


def reconcile(composer: Composer, observed: Observed, pool: list[Manifest]) -> Composition:
    """Call `composer` until its requirements stabilise (at most MAX_CALLS calls).

    A composer that asks the registry fails the test: give it `inspection` or `listing`.
    """
    outcome = run(composer, observed, pool)
    if isinstance(outcome, Inspect):
        pytest.fail(f"the composer asked to inspect {outcome.request.image}; pass inspection=")
    if isinstance(outcome, AskRegistry):
        pytest.fail(f"the composer asked the registry {outcome.request}; pass listing=")
    return outcome


def run(composer: Composer, observed: Observed, pool: list[Manifest]) -> Composition | AskRegistry:
    """`reconcile`, ending early when the composer asks the registry."""
    required: dict[str, tuple[Manifest, ...]] = {}
    asked: list[Any] = []
    for _ in range(MAX_CALLS):
        comp = composer(dataclasses.replace(observed, required=required))
        if isinstance(comp, AskRegistry) or comp.requirements == asked:
            return comp
        asked = comp.requirements
        required = answer(comp, pool)
    pytest.fail("requirements did not stabilise")


def _has_labels(obj: Manifest, wanted: Any) -> bool:
    labels = _meta(obj).get("labels", {})
    return all(labels.get(k) == v for k, v in wanted.items())


def _meta(obj: Manifest) -> Any:
    return cast("Any", obj)["metadata"]
