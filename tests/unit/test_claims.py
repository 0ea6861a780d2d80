"""The claims flavour's translation (function/claims.py): composites shown as claims, lookups sent
to composites. The render tests run it through the real engine; these pin the edge cases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from function.claims import as_claim, claim_of, composite_requirement_fields

LABELS = {"crossplane.io/claim-name": "chat", "crossplane.io/claim-namespace": "team-a"}


@dataclass(frozen=True)
class ViewCase:
    id: str
    obj: dict[str, Any]
    kind: str
    namespace: str | None
    name: str
    reason: str


VIEWS = [
    ViewCase(
        "labelled",
        {"kind": "XAIMService", "metadata": {"name": "chat-x1", "labels": LABELS, "uid": "u"}},
        "AIMService",
        "team-a",
        "chat",
        "Crossplane labels every composite it makes for a claim",
    ),
    ViewCase(
        "claim-ref-only",
        {
            "kind": "XAIMModel",
            "metadata": {"name": "m-x1"},
            "spec": {"claimRef": {"name": "m", "namespace": "team-b"}},
        },
        "AIMModel",
        "team-b",
        "m",
        "labels can be stripped by a user; spec.claimRef says the same",
    ),
    ViewCase(
        "no-claim",
        {"kind": "XAIMService", "metadata": {"name": "orphan"}},
        "AIMService",
        None,
        "orphan",
        "a composite applied by hand has no namespace; the caller refuses it",
    ),
    ViewCase(
        "label-no-namespace",
        {
            "kind": "XAIMService",
            "metadata": {
                "name": "chat-x1",
                "labels": {**LABELS, "crossplane.io/claim-namespace": "Team_A"},
            },
        },
        "AIMService",
        None,
        "chat-x1",
        "a valid label value that is no namespace name: composing there would only be refused",
    ),
    ViewCase(
        "cluster-kind",
        {"kind": "AIMClusterModel", "metadata": {"name": "llama", "labels": LABELS}},
        "AIMClusterModel",
        None,
        "llama",
        "cluster kinds have no claims and are never renamed",
    ),
    ViewCase(
        "x-prefixed-unknown",
        {"kind": "XAIMClusterModel", "metadata": {"name": "llama", "labels": LABELS}},
        "XAIMClusterModel",
        None,
        "llama",
        "only the namespaced kinds' composites exist; anything else is left for the kind check",
    ),
]


@pytest.mark.parametrize("case", VIEWS, ids=lambda c: c.id)
def test_a_composite_is_shown_as_its_claim(case: ViewCase) -> None:
    view = as_claim(case.obj)
    meta = view["metadata"]
    assert isinstance(meta, dict)
    assert view["kind"] == case.kind
    assert meta.get("namespace") == case.namespace
    assert meta["name"] == case.name
    assert meta.get("uid") == case.obj["metadata"].get("uid")


def test_labels_that_are_not_strings_fall_back_to_the_claim_ref() -> None:
    obj: dict[str, Any] = {
        "kind": "XAIMService",
        "metadata": {"labels": {"crossplane.io/claim-name": 5}},
        "spec": {"claimRef": {"name": "chat", "namespace": "team-a"}},
    }
    assert claim_of(obj) == ("team-a", "chat")


def test_a_lookup_by_name_in_a_namespace_becomes_a_lookup_by_claim_labels() -> None:
    assert composite_requirement_fields("AIMServiceTemplate", "team-a", "t") == (
        "XAIMServiceTemplate",
        {"crossplane.io/claim-namespace": "team-a", "crossplane.io/claim-name": "t"},
    )


def test_a_lookup_of_every_object_in_a_namespace_matches_the_namespace_label_only() -> None:
    assert composite_requirement_fields("AIMService", "team-a", None) == (
        "XAIMService",
        {"crossplane.io/claim-namespace": "team-a"},
    )


def test_cluster_kinds_and_core_kinds_are_looked_up_as_they_are() -> None:
    assert composite_requirement_fields("AIMClusterServiceTemplate", None, "t") is None
    assert composite_requirement_fields("Secret", "team-a", "s") is None
