"""Models a service composed and other services use: co-owners, adoption, and the catalog first.

The garbage collector's part (keeping an object while one owner remains, dropping the references
of owners that are gone) is Kubernetes'; the end-to-end journeys run it for real. Here the
owner references are written by hand, as the collector would leave them.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from function.compose.service import INFERENCE_SERVICE, MODEL, compose_service
from function.kube.contract import Composition, Observed
from function.rules import naming
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
IMAGE = "registry.example.com/models/proprietary:v1"


def service(name: str, uid: str, resolved: str | None = None) -> Any:
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": NS, "uid": uid},
        "spec": {"model": {"image": IMAGE}},
    }
    if resolved is not None:
        out["status"] = {"resolvedModel": {"name": "m", "scope": "Namespace", "uid": resolved}}
    return out


def composed_model(comp: Composition, uid: str, owners: list[Any]) -> Any:
    """The model a service composed, as the API server holds it: uid, owners, Ready."""
    manifest = copy.deepcopy(cast("Any", comp.resources[MODEL].manifest))
    manifest["metadata"]["uid"] = uid
    manifest["metadata"]["ownerReferences"] = owners
    manifest["status"] = {"status": "Ready"}
    return manifest


def template_of(model: Any) -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": "gen", "namespace": NS, "uid": "uid-gen"},
        "spec": {"modelName": model["metadata"]["name"], "type": "optimized"},
        "status": {
            "status": "Available",
            "profile": {"metadata": {"gpu": "MI300X", "gpu_count": 1}},
        },
    }


def status(comp: Composition) -> Any:
    return comp.status


def controller(name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "AIMService", "name": name, "uid": uid, "controller": True}


def first_composition() -> Composition:
    return loop.reconcile(compose_service, Observed(service("a", "uid-a")), [])


def test_the_composing_service_makes_every_other_user_an_owner() -> None:
    """Every other service using a composed model becomes its owner, so it outlives the composer."""
    ours = composed_model(first_composition(), "uid-m", [controller("a", "uid-a")])
    users = [service("a", "uid-a", "uid-m"), service("b", "uid-b", "uid-m"), service("c", "x")]
    comp = loop.reconcile(
        compose_service, Observed(service("a", "uid-a"), {MODEL: ours}), [ours, *users]
    )

    owners = cast("Any", comp.resources[MODEL].manifest)["metadata"]["ownerReferences"]
    # b uses the model; c resolved another; a is the controller, which Crossplane adds itself.
    assert owners == [{"apiVersion": API, "kind": "AIMService", "name": "b", "uid": "uid-b"}]


def test_owners_are_kept_while_the_services_are_not_listed_yet() -> None:
    """A call before Crossplane listed the services must not drop a co-owner."""
    co_owner = {"apiVersion": API, "kind": "AIMService", "name": "b", "uid": "uid-b"}
    ours = composed_model(first_composition(), "uid-m", [controller("a", "uid-a"), co_owner])
    settled = loop.reconcile(
        compose_service, Observed(service("a", "uid-a"), {MODEL: ours}), [ours]
    )
    required = {k: v for k, v in loop.answer(settled, [ours]).items() if k != "services"}
    comp = compose_service(Observed(service("a", "uid-a"), {MODEL: ours}, required))

    owners = cast("Any", comp.resources[MODEL].manifest)["metadata"]["ownerReferences"]
    assert owners == [co_owner]


def test_a_model_another_live_service_composed_is_used_not_composed_again() -> None:
    """A model another live service composed is used, not composed a second time."""
    theirs = composed_model(first_composition(), "uid-m", [controller("a", "uid-a")])
    comp = loop.reconcile(
        compose_service, Observed(service("b", "uid-b")), [theirs, template_of(theirs)]
    )

    assert MODEL not in comp.resources  # Crossplane would refuse: a controls it
    assert status(comp)["resolvedModel"]["uid"] == "uid-m"
    assert INFERENCE_SERVICE in comp.resources


def test_a_model_left_without_its_composer_is_adopted_by_a_user_and_stays_ready() -> None:
    """a was deleted; the garbage collector kept the model for b and removed a's reference."""
    co_owner = {"apiVersion": API, "kind": "AIMService", "name": "b", "uid": "uid-b"}
    orphan = composed_model(first_composition(), "uid-m", [co_owner])
    ready_isvc = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    b = service("b", "uid-b", "uid-m")
    world = [orphan, template_of(orphan), b]
    running = loop.reconcile(compose_service, Observed(b), world)
    isvc = {**cast("Any", running.resources[INFERENCE_SERVICE].manifest), **ready_isvc}

    comp = loop.reconcile(compose_service, Observed(b, {INFERENCE_SERVICE: isvc}), world)

    adopted = cast("Any", comp.resources[MODEL].manifest)
    assert adopted["metadata"]["name"] == orphan["metadata"]["name"]
    assert comp.resources[MODEL].ready
    assert status(comp)["status"] == "Running"
    assert status(comp)["resolvedModel"]["uid"] == "uid-m"


def test_an_orphan_by_another_name_is_used_but_not_adopted() -> None:
    """Only the model this service would itself have composed is taken over."""
    orphan = composed_model(first_composition(), "uid-m", [])
    orphan["metadata"]["name"] = "someone-elses-name"
    comp = loop.reconcile(
        compose_service, Observed(service("b", "uid-b")), [orphan, template_of(orphan)]
    )
    assert MODEL not in comp.resources
    assert status(comp)["resolvedModel"]["name"] == "someone-elses-name"


def legacy(comp: Composition, uid: str, owners: list[Any]) -> Any:
    """A model as a service composed it before models by image were named `auto-<hash>`."""
    model = composed_model(comp, uid, owners)
    model["metadata"]["name"] = naming.image_model_name(IMAGE)
    return model


def test_a_model_composed_under_the_older_name_stays_the_services_model() -> None:
    """After an upgrade, a service keeps the model it composed as `<image>-<tag>-<hash>`: the
    function asks for it by that name, as Crossplane keeps it, so nothing is created again."""
    ours = legacy(first_composition(), "uid-m", [controller("a", "uid-a")])
    a = service("a", "uid-a", "uid-m")
    comp = loop.reconcile(compose_service, Observed(a, {MODEL: ours}), [ours, template_of(ours), a])

    assert (
        cast("Any", comp.resources[MODEL].manifest)["metadata"]["name"] == ours["metadata"]["name"]
    )
    assert status(comp)["resolvedModel"]["uid"] == "uid-m"
    assert INFERENCE_SERVICE in comp.resources


def test_an_orphan_under_the_older_name_is_adopted_by_its_user() -> None:
    """A user of a model composed under the older name adopts it when its composer is gone, as
    it would one under the new name, so the model keeps an owner that maintains its co-owners."""
    co_owner = {"apiVersion": API, "kind": "AIMService", "name": "b", "uid": "uid-b"}
    orphan = legacy(first_composition(), "uid-m", [co_owner])
    b = service("b", "uid-b", "uid-m")
    comp = loop.reconcile(compose_service, Observed(b), [orphan, template_of(orphan), b])

    adopted = cast("Any", comp.resources[MODEL].manifest)
    assert adopted["metadata"]["name"] == naming.image_model_name(IMAGE)
    assert status(comp)["resolvedModel"]["uid"] == "uid-m"


def test_a_catalog_model_wins_over_one_a_service_composed() -> None:
    """A catalog model wins over one a service composed for the same image."""
    theirs = composed_model(first_composition(), "uid-m", [controller("a", "uid-a")])
    catalog: Any = {
        "apiVersion": API,
        "kind": "AIMModel",
        "metadata": {"name": "proprietary", "namespace": NS, "uid": "uid-cat"},
        "spec": {"image": IMAGE},
        "status": {"status": "Ready"},
    }
    comp = loop.reconcile(
        compose_service, Observed(service("b", "uid-b")), [theirs, catalog, template_of(catalog)]
    )
    assert status(comp)["resolvedModel"]["name"] == "proprietary"
    assert next(c.reason for c in comp.conditions if c.type == "ModelReady") == "ModelResolved"
