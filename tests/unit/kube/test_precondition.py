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
from function.kube.precondition import Identity, status_precondition
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


def identity(obj: dict[str, Any]) -> Identity:
    meta = obj["metadata"]
    return (obj.get("apiVersion"), obj.get("kind"), meta.get("name"), meta.get("namespace"))


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
    existing: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Observed composed resources, by their name in the composition."""
    metadata: dict[str, Any] = field(
        default_factory=lambda: {"name": "chat", "namespace": "team", "resourceVersion": "417"}
    )
    legacy: bool = False
    """spec.resourceRefs (a LegacyCluster composite) instead of spec.crossplane.resourceRefs."""
    machinery: bool = True
    """Core has set the composition (it always has, before it calls the function)."""


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
        "core-sorts-by-concatenation",
        [
            {**JOB, "metadata": {"name": "zz", "namespace": "team"}},
            {"apiVersion": "batch/v1", "kind": "JobSet", "metadata": {"name": "aa"}},
        ],
        [
            {"apiVersion": "batch/v1", "kind": "JobSet", "name": "aa"},
            {"apiVersion": "batch/v1", "kind": "Job", "name": "zz"},
        ],
        "417",
        "core orders by apiVersion+kind+name+namespace run together: JobSet/aa before Job/zz, "
        "where sorting the fields one by one would put Job first",
    ),
    PreconditionCase(
        "existing-name-kept",
        [{**ISVC, "metadata": {"name": "renamed", "namespace": "team"}}],
        [ref(ISVC)],
        "417",
        "core keeps the name a composed resource already has, whatever the answer calls it",
        existing={"isvc": ISVC},
    ),
    PreconditionCase(
        "extra-ref-keys",
        [ISVC],
        [{**ref(ISVC), "uid": "1234"}],
        None,
        "core replaces the list with exactly apiVersion, kind, name and namespace: a write",
    ),
    PreconditionCase(
        "no-composition-yet",
        [],
        None,
        None,
        "without core's fields in the spec, where it keeps the references cannot be told",
        machinery=False,
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
    machinery: dict[str, Any] = {"compositionRef": {"name": "c"}} if case.machinery else {}
    if case.refs is not None:
        machinery["resourceRefs"] = case.refs
    if case.legacy:
        spec.update(machinery)
    elif machinery:
        spec["crossplane"] = machinery
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
    observed = Observed(
        composite=as_claim(composite),
        resources=case.existing,
        claims=is_composite_of_claim(composite),
    )
    keys = list(case.existing) or [f"r{i}" for i in range(len(case.desired))]
    desired = {key: identity(m) for key, m in zip(keys, case.desired, strict=True)}
    assert status_precondition(observed, desired) == case.expect


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
