"""The XR's status write carries the observed resourceVersion only when core writes nothing else
between the call and it (function/kube/precondition.py).

A precondition set when core's reference apply changes the XR would fail every reconcile that
composes something new; one left out at rest lets a stale copy's conditions be written back
(crossplane/crossplane#7062). The e2e tier shows the API server's side; these pin the decision.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.kube.claims import as_claim, is_composite_of_claim
from function.kube.contract import Composition, Desired, Observed
from function.kube.convert import struct_to_dict
from function.kube.precondition import status_precondition
from function.server.fn import FunctionRunner
from tests.cases import table

ISVC = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "chat-1a2b", "namespace": "team"},
}
ROUTE = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "HTTPRoute",
    "metadata": {"name": "chat-route", "namespace": "team"},
}
JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "llama-discovery", "namespace": "aim-system"},
}


def ref(obj: dict[str, Any], *, namespace: bool = False) -> dict[str, str]:
    meta = obj["metadata"]
    out = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    if namespace:
        out["namespace"] = meta["namespace"]
    return out


@dataclass(frozen=True)
class PreconditionCase:
    id: str
    desired: list[dict[str, Any]]
    refs: Any
    expect: str | None
    reason: str
    kind: str = "AIMService"
    metadata: dict[str, Any] = field(
        default_factory=lambda: {"name": "chat", "namespace": "team", "resourceVersion": "417"}
    )
    legacy: bool = False
    """spec.resourceRefs (a LegacyCluster composite) instead of spec.crossplane.resourceRefs."""


CASES = [
    PreconditionCase(
        "at-rest",
        [ISVC, ROUTE],
        [ref(ROUTE), ref(ISVC)],
        "417",
        "the references are core's, sorted: nothing else writes the XR, so a stale copy is refused",
    ),
    PreconditionCase(
        "first-compose",
        [ISVC],
        None,
        None,
        "core first applies the new reference, which changes the XR: a precondition would fail",
    ),
    PreconditionCase(
        "one-more",
        [ISVC, ROUTE],
        [ref(ISVC)],
        None,
        "a route composed later changes the references, as on the first compose",
    ),
    PreconditionCase(
        "one-less",
        [ISVC],
        [ref(ROUTE), ref(ISVC)],
        None,
        "a resource no longer composed is collected and its reference removed: a write",
    ),
    PreconditionCase(
        "other-order",
        [ISVC, ROUTE],
        [ref(ISVC), ref(ROUTE)],
        None,
        "the list is replaced atomically: core's sorted order differs from the stored one",
    ),
    PreconditionCase(
        "nothing-composed",
        [],
        [],
        "417",
        "an XR that composes nothing (a runtime config) has no reference write either",
    ),
    PreconditionCase(
        "no-version",
        [ISVC],
        [ref(ISVC)],
        None,
        "`crossplane composition render` sends an XR that no API server wrote",
        metadata={"name": "chat", "namespace": "team"},
    ),
    PreconditionCase(
        "version-not-a-string",
        [ISVC],
        [ref(ISVC)],
        None,
        "whatever sent it was not the API server: echo nothing rather than a number",
        metadata={"name": "chat", "namespace": "team", "resourceVersion": 417},
    ),
    PreconditionCase(
        "version-too-long",
        [ISVC],
        [ref(ISVC)],
        None,
        "an opaque version longer than any revision is not echoed back",
        metadata={"name": "chat", "namespace": "team", "resourceVersion": "9" * 65},
    ),
    PreconditionCase(
        "cluster-xr",
        [JOB],
        [ref(JOB, namespace=True)],
        "417",
        "a cluster-scoped XR's references carry the composed object's namespace",
        kind="AIMClusterServiceTemplate",
        metadata={"name": "llama", "resourceVersion": "417"},
    ),
    PreconditionCase(
        "cluster-xr-namespace-missing",
        [JOB],
        [ref(JOB)],
        None,
        "core would add the namespace to a cluster-scoped XR's reference: a write",
        kind="AIMClusterServiceTemplate",
        metadata={"name": "llama", "resourceVersion": "417"},
    ),
    PreconditionCase(
        "claims-composite",
        [ISVC],
        [ref(ISVC, namespace=True)],
        "417",
        "a claim's composite is cluster-scoped although composers see the claim's namespace",
        kind="XAIMService",
        metadata={
            "name": "chat-x1",
            "resourceVersion": "417",
            "labels": {"crossplane.io/claim-name": "chat", "crossplane.io/claim-namespace": "team"},
        },
        legacy=True,
    ),
    PreconditionCase(
        "unnamed-desired",
        [{**ISVC, "metadata": {"generateName": "chat-", "namespace": "team"}}],
        [],
        None,
        "core names such a resource itself, so its reference cannot be predicted",
    ),
    PreconditionCase(
        "malformed-refs",
        [ISVC],
        [ref(ISVC), "InferenceService/chat"],
        None,
        "references core did not write are rewritten: no precondition",
    ),
    PreconditionCase(
        "refs-not-a-list",
        [ISVC],
        {"name": "chat"},
        None,
        "a shape core never writes is no evidence the XR is left alone",
    ),
]


def xr(case: PreconditionCase) -> dict[str, Any]:
    spec: dict[str, Any] = {"model": {"ref": "llama"}}
    if case.refs is not None:
        if case.legacy:
            spec["resourceRefs"] = case.refs
        else:
            spec["crossplane"] = {"compositionRef": {"name": "c"}, "resourceRefs": case.refs}
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": case.kind,
        "metadata": case.metadata,
        "spec": spec,
    }


@table(CASES)
def test_the_status_write_requires_the_observed_version_only_when_safe(
    case: PreconditionCase,
) -> None:
    """Each row: the version to require, or none where core's own reference apply (or a copy no
    API server wrote) would make a precondition wrong."""
    composite = xr(case)
    observed = Observed(composite=as_claim(composite), claims=is_composite_of_claim(composite))
    assert status_precondition(observed, case.desired) == case.expect


def _runner_composing(resources: dict[str, dict[str, Any]]) -> FunctionRunner:
    def compose(_: Observed) -> Composition:
        return Composition(
            resources={n: Desired(m, ready=True) for n, m in resources.items()},
            status={"status": "Running"},
        )

    return FunctionRunner({"AIMService": compose})


def test_the_response_carries_the_version_beside_the_status() -> None:
    """What core applies is the desired composite: its metadata must hold the version."""
    composite = xr(CASES[0])
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(composite)
    rsp = asyncio.run(_runner_composing({"isvc": ISVC, "route": ROUTE}).RunFunction(req))
    desired = struct_to_dict(rsp.desired.composite.resource)
    assert desired == {"metadata": {"resourceVersion": "417"}, "status": {"status": "Running"}}


def test_a_new_resource_leaves_the_status_write_unconditional() -> None:
    """Else the status apply after core's reference write would be refused on every compose."""
    composite = xr(CASES[0])
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(composite)
    extra = {**JOB, "metadata": {"name": "warm", "namespace": "team"}}
    runner = _runner_composing({"isvc": ISVC, "route": ROUTE, "job": extra})
    desired = struct_to_dict(asyncio.run(runner.RunFunction(req)).desired.composite.resource)
    assert "metadata" not in desired
