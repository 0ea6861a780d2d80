"""`aim plan --against`'s diff: what a plan would do to a live cluster, told per object and per
running service, from small hand-built worlds (live as read, planned as the plan ends)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aim_plan.diff import MAX_PATHS, as_data, as_text, diff
from aim_plan.world import World
from tests.cases import Case, table

AIM = "aim.silogen.ai/v1alpha1"
Obj = dict[str, Any]


def obj(api: str, kind: str, name: str, owner: str | None = None, **top: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": "ml", "uid": f"uid-{kind}-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [{"uid": owner, "controller": True}]
    return {"apiVersion": api, "kind": kind, "metadata": meta, **top}


def live_world() -> list[Obj]:
    """A running service on template `lat`, its template cache and model cache, its
    InferenceService, and a pull Secret."""
    svc = obj(
        AIM,
        "AIMService",
        "chat",
        spec={"model": {"name": "llama"}},
        status={
            "status": "Running",
            "resolvedTemplate": {"name": "lat"},
            "templateCache": "lat-cache",
            "inferenceService": "chat-isvc",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Available"}],
        },
    )
    cache = obj(
        AIM, "AIMTemplateCache", "lat-cache", owner="uid-AIMService-chat", spec={"t": "lat"}
    )
    model_cache = obj(AIM, "AIMModelCache", "weights", owner="uid-AIMTemplateCache-lat-cache")
    model_cache["spec"] = {"size": "10Gi"}
    isvc = obj(
        "serving.kserve.io/v1beta1",
        "InferenceService",
        "chat-isvc",
        owner="uid-AIMService-chat",
        spec={"predictor": {"image": "aim:1", "protocol": "v2"}},  # protocol: KServe's default
    )
    secret = obj("v1", "Secret", "pull", data={"token": "c2VjcmV0"})
    return [svc, cache, model_cache, isvc, secret]


def by_kind(world: list[Obj], kind: str) -> Obj:
    return next(o for o in world if o["kind"] == kind)


def switch_template(w: list[Obj]) -> None:
    status = by_kind(w, "AIMService")["status"]
    status["resolvedTemplate"] = {"name": "thr"}
    status["templateCache"] = "thr-cache"
    w.remove(by_kind(w, "AIMTemplateCache"))
    w.remove(by_kind(w, "AIMModelCache"))
    by_kind(w, "InferenceService")["spec"] = {"predictor": {"image": "aim:2"}}


def lose_cache(w: list[Obj]) -> None:
    by_kind(w, "AIMService")["status"].pop("templateCache")
    w.remove(by_kind(w, "AIMTemplateCache"))
    w.remove(by_kind(w, "AIMModelCache"))


def replace_isvc(w: list[Obj]) -> None:
    w.remove(by_kind(w, "InferenceService"))
    new = obj(
        "serving.kserve.io/v1beta1", "InferenceService", "chat-isvc2", owner="uid-AIMService-chat"
    )
    w.append(new)
    by_kind(w, "AIMService")["status"]["inferenceService"] = "chat-isvc2"


def scale(w: list[Obj]) -> None:
    by_kind(w, "InferenceService")["spec"]["predictor"].update(minReplicas=2, maxReplicas=4)


def scale_and_change_image(w: list[Obj]) -> None:
    by_kind(w, "InferenceService")["spec"]["predictor"].update(maxReplicas=4, image="aim:2")


def new_service(w: list[Obj]) -> None:
    w.append(obj(AIM, "AIMService", "other", spec={"model": {"name": "llama"}}))


def only_defaults_and_volatile(w: list[Obj]) -> None:
    """The plan's InferenceService lacks KServe's default; every object's volatile fields moved."""
    by_kind(w, "InferenceService")["spec"]["predictor"].pop("protocol")
    for o in w:
        o["metadata"].update(resourceVersion="99", generation=7, managedFields=[{"m": 1}])
        o["metadata"]["creationTimestamp"] = "2030-01-01T00:00:00Z"
        for c in (o.get("status") or {}).get("conditions") or []:
            c["lastTransitionTime"] = "2030-01-01T00:00:00Z"


def manifest_left_out(w: list[Obj]) -> None:
    """The user planned manifests without the service: the plan starts from the live world and
    adds or updates only what is given, so the service stays (the plan deletes nothing given)."""


def secret_changed(w: list[Obj]) -> None:
    by_kind(w, "Secret")["data"] = {"token": "bmV3"}


@dataclass(frozen=True)
class Impact(Case):
    change: Callable[[list[Obj]], None]
    switches: bool = False
    lost: tuple[str, ...] = ()
    redeployed: str | None = None
    rescaled: str | None = None
    created: tuple[str, ...] = ()
    nothing: bool = False


LOST = ("AIMTemplateCache ml/lat-cache", "AIMModelCache ml/weights")
IMPACTS = [
    Impact(
        "template-switch",
        "a new template wins: the service switches, loses its caches and its InferenceService "
        "spec changes, so it is redeployed (exit 2)",
        switch_template,
        switches=True,
        lost=LOST,
        redeployed="InferenceService ml/chat-isvc changes (spec.predictor.image)",
    ),
    Impact(
        "cache-loss",
        "caching turned off: the cache is lost, the template and InferenceService are kept",
        lose_cache,
        lost=LOST,
    ),
    Impact(
        "isvc-replaced",
        "the InferenceService is replaced by another: redeployed",
        replace_isvc,
        redeployed="InferenceService ml/chat-isvc is replaced by InferenceService ml/chat-isvc2",
        created=("InferenceService ml/chat-isvc2",),
    ),
    Impact(
        "rescaled",
        "only the replica bounds change: KServe scales the Deployment, no pod restarts, so it is "
        "no redeploy (exit 0) but the service is told",
        scale,
        rescaled=(
            "InferenceService ml/chat-isvc (spec.predictor.maxReplicas, spec.predictor.minReplicas)"
        ),
    ),
    Impact(
        "rescaled-and-new-image",
        "a new image with the new bounds rolls the pods: a redeploy, naming only the pod field",
        scale_and_change_image,
        redeployed="InferenceService ml/chat-isvc changes (spec.predictor.image)",
    ),
    Impact(
        "new-service",
        "a new service is created; the running one is unaffected",
        new_service,
        created=("AIMService ml/other",),
    ),
    Impact(
        "unchanged",
        "defaults the API server added and volatile fields are no change",
        only_defaults_and_volatile,
        nothing=True,
    ),
    Impact(
        "manifest-left-out",
        "a manifest left out deletes no live object",
        manifest_left_out,
        nothing=True,
    ),
]


@table(IMPACTS)
def test_a_running_service_is_told_what_the_plan_does_to_it(case: Impact) -> None:
    """Per running service: whether it switches template, loses its caches, is redeployed
    (which makes `aim plan --against` exit 2), and nothing when nothing changes."""
    live = live_world()
    planned = copy.deepcopy(live)
    case.change(planned)
    result = diff(live, planned)
    [service] = result.services
    assert service.switches_template is case.switches
    assert service.caches_lost == case.lost
    assert service.redeployed == case.redeployed
    assert service.rescaled == case.rescaled
    assert service.affected is bool(case.switches or case.lost or case.redeployed or case.rescaled)
    assert result.redeploys is bool(case.redeployed)
    assert tuple(c.what for c in result.changes if c.action == "created") == case.created
    if case.nothing:
        assert result.changes == []
        assert not service.affected


def test_changed_objects_list_their_changed_paths_as_kubectl_diff_does() -> None:
    """`~` with the spec paths, label changes both ways, and only the status and reason of
    conditions; `-` for what the function stops composing."""
    live = live_world()
    planned = copy.deepcopy(live)
    switch_template(planned)
    svc = by_kind(planned, "AIMService")
    svc["metadata"]["labels"] = {"team": "ml"}
    svc["status"]["conditions"] = [
        {"type": "Ready", "status": "True", "reason": "Available", "message": "another message"}
    ]
    # Core's own condition, which the plan does not write: not a change.
    by_kind(live, "AIMService")["status"]["conditions"].append(
        {"type": "Responsive", "status": "True", "reason": "WatchCircuitClosed"}
    )
    text = as_text(diff(live, planned)).splitlines()
    assert "~ AIMService ml/chat" in text
    assert "    metadata.labels.team" in text
    assert "    status.conditions[Ready].message" not in text
    assert not [line for line in text if "Responsive" in line]
    assert "- AIMTemplateCache ml/lat-cache" in text
    assert "~ InferenceService ml/chat-isvc" in text
    assert "  switches template: lat -> thr" in text
    assert "  template cache: lat-cache -> thr-cache" in text


def test_a_rescale_is_told_as_such_in_the_text() -> None:
    """A person reading the diff learns the service only scales: no pod restarts."""
    live = live_world()
    planned = copy.deepcopy(live)
    scale(planned)
    text = as_text(diff(live, planned)).splitlines()
    assert "running AIMService ml/chat:" in text
    assert (
        "  rescaled, no pod restarted: InferenceService ml/chat-isvc "
        "(spec.predictor.maxReplicas, spec.predictor.minReplicas)"
    ) in text
    assert not [line for line in text if "redeployed" in line]


def test_a_secret_is_named_as_changed_never_which_field() -> None:
    """Neither a value nor a key of a Secret reaches a terminal or a CI log."""
    live = live_world()
    planned = copy.deepcopy(live)
    secret_changed(planned)
    result = diff(live, planned)
    text, data = as_text(result), as_data(result)
    assert "~ Secret ml/pull changed" in text.splitlines()
    for leaked in ("token", "bmV3", "c2VjcmV0"):
        assert leaked not in text
    assert data["changed"] == [{"object": "Secret ml/pull"}]


def test_a_service_not_running_is_not_reported_as_redeployed() -> None:
    """Only a Running service can be redeployed: one still starting has nothing to lose."""
    live = live_world()
    by_kind(live, "AIMService")["status"]["status"] = "Starting"
    planned = copy.deepcopy(live)
    switch_template(planned)
    result = diff(live, planned)
    assert result.services == []
    assert not result.redeploys


def test_the_plans_world_diffs_as_the_objects_it_holds() -> None:
    """A World (the plan's end state) is an iterable of objects: uid and generation it gives
    are volatile, so an unchanged world is no change."""
    live = live_world()
    assert diff(live, World(live)).changes == []


def test_changes_past_the_listed_paths_are_a_redeploy_said_as_such() -> None:
    """More changed paths than are listed may reach the pods: the gate fails closed, and the
    line says how many were not listed rather than an empty list."""
    live = live_world()
    planned = copy.deepcopy(live)
    isvc = by_kind(planned, "InferenceService")
    isvc["metadata"]["labels"] = {f"team-{i}": "x" for i in range(MAX_PATHS + 3)}
    [service] = diff(live, planned).services
    assert service.redeployed == "InferenceService ml/chat-isvc changes (3 more not listed)"
