"""The claims flavour's view (function/kube/claims.py): a composite shown as its claim.
The render tests run it through the real engine; these pin the edge cases."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.kube.claims import as_claim, claim_of
from function.kube.owners import co_owners
from tests.cases import table

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


@table(VIEWS)
def test_a_composite_is_shown_as_its_claim(case: ViewCase) -> None:
    """A claim's composite reads as the namespaced XR it stands for."""
    view = as_claim(case.obj)
    meta = view["metadata"]
    assert isinstance(meta, dict)
    assert view["kind"] == case.kind
    assert meta.get("namespace") == case.namespace
    assert meta["name"] == case.name
    assert meta.get("uid") == case.obj["metadata"].get("uid")


def test_labels_that_are_not_strings_fall_back_to_the_claim_ref() -> None:
    """Claim labels that are not strings fall back to spec.claimRef."""
    obj: dict[str, Any] = {
        "kind": "XAIMService",
        "metadata": {"labels": {"crossplane.io/claim-name": 5}},
        "spec": {"claimRef": {"name": "chat", "namespace": "team-a"}},
    }
    assert claim_of(obj) == ("team-a", "chat")


def test_the_composers_own_claim_is_not_made_a_co_owner_of_what_it_shares() -> None:
    """Users of a shared object are claims in this flavour, and the composer their composite: its
    own claim must not become an owner beside it (its UID differs from the composite's)."""
    composite: dict[str, Any] = {
        "kind": "XAIMService",
        "metadata": {"name": "chat-x1", "labels": LABELS, "uid": "x1"},
    }
    composer = as_claim(composite)
    users: list[dict[str, Any]] = [
        {
            "apiVersion": "aim.silogen.ai/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": n, "namespace": "team-a", "uid": uid},
        }
        for n, uid in (("chat", "c1"), ("other", "c2"))
    ]
    assert co_owners(users, composer) == [
        {
            "apiVersion": "aim.silogen.ai/v1alpha1",
            "kind": "AIMService",
            "name": "other",
            "uid": "c2",
        }
    ]
