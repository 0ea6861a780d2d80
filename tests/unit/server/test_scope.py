"""An XR's scope comes from its kind's XRD: metadata that contradicts it is refused, not composed.

Composers read the XR's namespace as the one whose Secrets, runtime config and templates it may
use; an AIMClusterModel carrying a namespace would otherwise read that namespace's Secrets, and
an AIMModel without one would read the function's own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.registry.inspect import (
    FailureKind,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.server.fn import FunctionRunner
from tests.cases import Case, table

IMAGE = "registry.example.com/amd/aim-qwen-qwen3-32b:0.8.5"
CLAIM = {"crossplane.io/claim-name": "chat", "crossplane.io/claim-namespace": "team"}


@dataclass(frozen=True)
class ScopeCase(Case):
    kind: str
    spec: dict[str, Any]
    namespace: str | None
    labels: dict[str, str] = field(default_factory=dict)
    refused: tuple[str, ...] = ()
    """Phrases the fatal result must hold; empty: the scope is right and composing goes on."""


CASES = [
    ScopeCase(
        "cluster-kind-with-namespace",
        "the issue's case: a cluster model must not read the Secrets of the namespace it names",
        "AIMClusterModel",
        {"image": IMAGE},
        "team",
        refused=(
            "AIMClusterModel m carries metadata.namespace 'team'",
            "cluster-scoped",
            "remove metadata.namespace",
            "or make it an AIMModel in namespace team",
        ),
    ),
    ScopeCase(
        "cluster-kind-without-twin",
        "a model source has no namespaced counterpart to suggest",
        "AIMClusterModelSource",
        {"registry": "docker.io", "filters": [{"image": "org/*"}]},
        "team",
        refused=("AIMClusterModelSource m carries metadata.namespace", "remove metadata.namespace"),
    ),
    ScopeCase(
        "namespaced-kind-without-namespace",
        "a namespaced model without a namespace must not read the function's own namespace",
        "AIMModel",
        {"image": IMAGE},
        None,
        refused=(
            "AIMModel m has no metadata.namespace",
            "namespaced",
            "set metadata.namespace",
            "or make it an AIMClusterModel",
        ),
    ),
    ScopeCase(
        "service-without-namespace",
        "a service has no cluster twin: only the namespace is suggested",
        "AIMService",
        {"model": {"image": IMAGE}},
        None,
        refused=("AIMService m has no metadata.namespace", "set metadata.namespace"),
    ),
    ScopeCase(
        "claims-composite",
        "the claims flavour's composite is cluster-scoped but stands for a namespaced claim: it is "
        "composed as the namespaced XR in its claim's namespace",
        "XAIMService",
        {"model": {"image": IMAGE}},
        None,
        labels=CLAIM,
    ),
    ScopeCase(
        "namespaced-kind-in-namespace",
        "the ordinary namespaced XR",
        "AIMModel",
        {"image": IMAGE},
        "team",
    ),
    ScopeCase(
        "cluster-kind-without-namespace",
        "the ordinary cluster-scoped XR",
        "AIMClusterModel",
        {"image": IMAGE},
        None,
    ),
]


class Offline:
    """No registry in unit tests: every image is refused, so nothing leaves the process."""

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        return RegistryFailure(request.image, FailureKind.UNAUTHORIZED, "offline")


def request(case: ScopeCase) -> fnv1.RunFunctionRequest:
    meta: dict[str, Any] = {"name": "m", "labels": case.labels}
    if case.namespace is not None:
        meta["namespace"] = case.namespace
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "t"
    req.observed.composite.resource.update(
        {
            "apiVersion": "aim.silogen.ai/v1alpha1",
            "kind": case.kind,
            "metadata": meta,
            "spec": case.spec,
        }
    )
    return req


@table(CASES)
def test_the_scope_of_an_xr_is_its_kinds(case: ScopeCase) -> None:
    """A contradicting XR gets one fatal result naming the kind, the object and the fix, and
    neither composes nor asks for anything (no Secret of any namespace is read)."""
    rsp = asyncio.run(FunctionRunner(inspector=Offline()).RunFunction(request(case)))
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    if not case.refused:
        assert not [m for m in fatal if "metadata.namespace" in m], case.reason
        assert "status" in dict(rsp.desired.composite.resource), case.reason
        return
    assert len(fatal) == 1, case.reason
    for phrase in case.refused:
        assert phrase in fatal[0], case.reason
    assert dict(rsp.desired.resources) == {}, case.reason
    assert dict(rsp.requirements.resources) == {}, case.reason
