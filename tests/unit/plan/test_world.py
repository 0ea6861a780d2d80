"""The plan's world answers by kind and by controller from its indexes, and they stay true to
what it holds as objects are created, rewritten, handed to another controller and deleted; a
round's comparison ignores only what every write moves."""

from __future__ import annotations

import json
from typing import Any

from aim_plan.world import World, canonical


def pod(name: str, namespace: str = "ml", owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [{"uid": owner, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in objects]


def test_objects_of_a_kind_are_listed_per_namespace_or_across_all_in_creation_order() -> None:
    """A LIST in one namespace sees that namespace's objects, one in none sees every one's;
    another kind, or an apiVersion of the same kind, is not listed."""
    world = World(
        [
            pod("b", "ml"),
            pod("a", "other"),
            pod("c", "ml"),
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu"}},
            {"apiVersion": "v2", "kind": "Pod", "metadata": {"name": "x", "namespace": "ml"}},
        ]
    )
    assert names(world.of_kind("v1", "Pod", "ml")) == ["ml/b", "ml/c"]
    assert names(world.of_kind("v1", "Pod")) == ["ml/b", "ml/c", "other/a"]
    assert names(world.of_kind("v1", "Node", "")) == ["/gpu"]
    assert world.of_kind("v1", "Pod", "empty") == []
    assert world.of_kind("v1", "Secret") == []


def test_a_rewrite_keeps_the_object_listed_once_and_in_its_place_and_a_delete_unlists_it() -> None:
    """What the index lists is the current object: a rewrite replaces it where it was, a
    delete removes it from every answer."""
    world = World([pod("a"), pod("b")])
    world.put({**pod("a"), "status": {"phase": "Running"}})
    assert names(world.of_kind("v1", "Pod", "ml")) == ["ml/a", "ml/b"]
    assert world.of_kind("v1", "Pod", "ml")[0]["status"] == {"phase": "Running"}
    world.delete(("v1", "Pod", "ml", "a"))
    assert names(world.of_kind("v1", "Pod")) == ["ml/b"]


def test_an_object_is_listed_under_its_current_controller_only() -> None:
    """What an XR composed is read from the controller index: an object adopted by another
    controller, or deleted, no longer counts as the first one's."""
    world = World([pod("a", owner="xr-1"), pod("b", owner="xr-1"), pod("free")])
    assert names(world.controlled_by("xr-1")) == ["ml/a", "ml/b"]
    world.put(pod("a", owner="xr-2"))
    world.delete(("v1", "Pod", "ml", "b"))
    world.put(pod("free", owner="xr-2"))
    assert world.controlled_by("xr-1") == []
    assert names(world.controlled_by("xr-2")) == ["ml/a", "ml/free"]


def test_the_round_comparison_ignores_only_what_every_write_moves_and_leaves_the_object_as_is() -> (
    None
):
    """resourceVersion and conditions' lastTransitionTime (an HTTPRoute's per parent too) differ
    on every write and say nothing of the end state; a condition's status does. Comparing
    copies nothing into the object it reads."""
    route: dict[str, Any] = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r", "namespace": "ml", "resourceVersion": "1"},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t1"}],
            "parents": [{"conditions": [{"type": "Accepted", "lastTransitionTime": "t1"}]}],
        },
    }
    rewritten = json.loads(json.dumps(route))
    rewritten["metadata"]["resourceVersion"] = "2"
    rewritten["status"]["conditions"][0]["lastTransitionTime"] = "t2"
    rewritten["status"]["parents"][0]["conditions"][0]["lastTransitionTime"] = "t2"
    before = json.dumps(route, sort_keys=True)
    assert canonical(rewritten) == canonical(route)
    assert json.dumps(route, sort_keys=True) == before
    rewritten["status"]["conditions"][0]["status"] = "False"
    assert canonical(rewritten) != canonical(route)
