"""aim plan answers the function's requirements as Crossplane core 2.4 does, in core's loop."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from aim_plan.requirements import resolve
from aim_plan.rounds import MAX_REQUIREMENT_ITERATIONS, reconcile
from aim_plan.world import World
from tests.cases import Case, table


def obj(kind: str, name: str, namespace: str = "", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": kind, "metadata": meta}


WORLD = [
    obj("Secret", "pull", "ml"),
    obj("Secret", "pull", "other"),
    obj("Pod", "job-a-1", "ml", **{"batch.kubernetes.io/job-name": "job-a"}),
    obj("Pod", "job-a-2", "other", **{"batch.kubernetes.io/job-name": "job-a"}),
    obj("Pod", "job-b-1", "ml", **{"batch.kubernetes.io/job-name": "job-b"}),
    obj("Node", "gpu-1"),
    obj("Node", "gpu-2"),
    obj("Namespace", "ml"),
]


@dataclass(frozen=True)
class Selecting(Case):
    kind: str
    expected: list[str]
    match_name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


SELECTING = [
    Selecting(
        "name-in-namespace",
        "a GET by name in the selector's namespace finds that namespace's object only",
        "Secret",
        ["ml/pull"],
        match_name="pull",
        namespace="ml",
    ),
    Selecting(
        "name-without-namespace",
        "a GET by name with no namespace is a cluster-scoped GET: a namespaced object is not "
        "found, however many namespaces hold that name",
        "Secret",
        [],
        match_name="pull",
    ),
    Selecting(
        "cluster-scoped-name",
        "a cluster-scoped object is found by name with no namespace",
        "Namespace",
        ["ml"],
        match_name="ml",
    ),
    Selecting(
        "labels-in-namespace",
        "a LIST by labels in a namespace returns the matching objects there only",
        "Pod",
        ["ml/job-a-1"],
        namespace="ml",
        labels={"batch.kubernetes.io/job-name": "job-a"},
    ),
    Selecting(
        "labels-all-namespaces",
        "a LIST by labels with no namespace spans every namespace",
        "Pod",
        ["ml/job-a-1", "other/job-a-2"],
        labels={"batch.kubernetes.io/job-name": "job-a"},
    ),
    Selecting(
        "whole-kind",
        "neither a name nor labels lists every object of the kind (the function's Node listing)",
        "Node",
        ["gpu-1", "gpu-2"],
    ),
    Selecting(
        "absent",
        "nothing matching still answers the requirement, with no items: asked, and none",
        "Secret",
        [],
        match_name="missing",
        namespace="ml",
    ),
]


@table(SELECTING)
def test_a_requirement_is_answered_as_core_fetches_it(case: Selecting) -> None:
    """Each selector shape returns what core's GET or LIST would."""
    rsp = fnv1.RunFunctionResponse()
    response.require_resources(
        rsp,
        "wanted",
        "v1",
        case.kind,
        match_name=case.match_name,
        match_labels=case.labels or None,
        namespace=case.namespace,
    )
    found = resolve(rsp.requirements, World(WORLD))
    assert list(found) == ["wanted"]
    names = [
        "/".join(filter(None, (o["metadata"].get("namespace"), o["metadata"]["name"])))
        for o in found["wanted"]
    ]
    assert names == case.expected


@dataclass
class Asking:
    """A function that asks for one more Secret on each call, `settle_after` times."""

    settle_after: int
    requests: list[fnv1.RunFunctionRequest] = field(default_factory=list)

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: None = None
    ) -> fnv1.RunFunctionResponse:
        self.requests.append(fnv1.RunFunctionRequest.FromString(req.SerializeToString()))
        rsp = response.to(req)
        for i in range(min(len(self.requests), self.settle_after)):
            response.require_resources(
                rsp, f"s{i}", "v1", "Secret", match_name="pull", namespace="ml"
            )
        return rsp


XR = {
    "apiVersion": "aim.silogen.ai/v1alpha1",
    "kind": "AIMRuntimeConfig",
    "metadata": {"name": "default", "namespace": "ml"},
}
KEY = ("aim.silogen.ai/v1alpha1", "AIMRuntimeConfig", "ml", "default")


def test_the_function_is_called_again_with_what_it_asked_until_it_asks_nothing_new() -> None:
    """Core calls with the answers until the requirements stop changing and keeps the last."""
    world = World([*WORLD, XR])
    fn = Asking(settle_after=2)
    outcome = asyncio.run(reconcile(fn, world, KEY))
    assert outcome.error is None
    # Call 1 asks s0, call 2 (given s0) asks s0 and s1, call 3 (given both) asks the same.
    assert [sorted(r.required_resources) for r in fn.requests] == [[], ["s0"], ["s0", "s1"]]
    assert [len(r.required_resources["s0"].items) for r in fn.requests[1:]] == [1, 1]
    synced = world.get(KEY)["status"]["conditions"][0]  # type: ignore[index]
    assert (synced["type"], synced["status"]) == ("Synced", "True")


def test_requirements_that_never_settle_fail_the_xr_as_core_does() -> None:
    """Past core's iterations the XR is not composed: Synced False says why."""
    world = World([*WORLD, XR])
    fn = Asking(settle_after=100)
    outcome = asyncio.run(reconcile(fn, world, KEY))
    assert len(fn.requests) == MAX_REQUIREMENT_ITERATIONS + 1
    assert outcome.error is not None
    assert "did not stabilize" in outcome.error
    synced = world.get(KEY)["status"]["conditions"][0]  # type: ignore[index]
    assert (synced["type"], synced["status"], synced["reason"]) == (
        "Synced",
        "False",
        "ReconcileError",
    )
