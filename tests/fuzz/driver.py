"""Plays Crossplane for the fuzz tier: calls RunFunction, answers what it asks for, calls again.

A scenario draws an XR, then for a few rounds turns the previous response into the next request
as Crossplane would (the XR's status written back, the composed objects observed with a status
their controllers might report, each requirement answered with objects of the kind asked for),
so hostile values reach the code that reads Pods, Jobs, Secrets and templates, not only the
spec parser. Every response is checked with `tests.fuzz.checks`, and every request is answered
twice from its bytes, which must give the same bytes.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import structlog
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format
from hypothesis import strategies as st

from devtools.render.requests import run_function_request, selects
from function.kube.convert import struct_to_dict
from function.registry.inspect import (
    FailureKind,
    Inspection,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.listing import ListingAnswer, ListingRequest, QueryAnswer, RepositoryTags
from function.server.fn import FunctionRunner
from function.settings import DEFAULT_SYSTEM_NAMESPACE as SYSTEM_NAMESPACE
from tests.fuzz import checks
from tests.fuzz import strategies as fz
from tests.podsecurity import restricted_violations

NOW: Final = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
TOTALS: Final[dict[str, Counter[str]]] = {}
"""Per kind: examples, RunFunction calls, problems, and the condition reasons seen (the report)."""
ROUNDS: Final = 5


@dataclass
class SimulatedRegistry:
    """Stands in for a registry (none runs in this tier): every image has the drawn labels,
    or the drawn failure; every repository has the drawn label keys and entrypoint as tags."""

    labels: dict[str, str] | None
    entrypoint: tuple[str, ...] = ()

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """The drawn answer for whichever image is asked about."""
        if self.labels is None:
            return RegistryFailure(request.image, FailureKind.UNAUTHORIZED, "denied")
        return Inspection(request.image, "sha256:" + "b" * 64, self.labels, self.entrypoint)

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Every query answered with the drawn names as tags (vetted by no lister), or refused."""
        if self.labels is None:
            answers = [
                QueryAnswer(q, failure=FailureKind.UNAUTHORIZED, message="denied")
                for q in request.queries
            ]
        else:
            tags = (*self.labels, *self.entrypoint)
            answers = [
                QueryAnswer(q, (RepositoryTags(q.repository, tags),)) for q in request.queries
            ]
        return ListingAnswer(request.source, tuple(answers))


@dataclass
class Findings:
    """What a scenario saw: the properties broken, and counts for the report."""

    problems: list[str] = field(default_factory=list)
    calls: int = 0
    results: Counter[str] = field(default_factory=Counter)
    reasons: set[str] = field(default_factory=set)


def scenario(data: st.DataObject, kind: str) -> Findings:
    """Draw an XR of `kind` and the world around it; run up to ROUNDS calls; check each."""
    seed: fz.Seed | None = None
    from_example = bool(fz.seeds(kind)) and data.draw(st.booleans(), label="from an example")
    if from_example:
        seed = data.draw(st.sampled_from(fz.seeds(kind)).flatmap(fz.seeded), label="example")
    if seed is not None:
        xr, world, observed = seed.xr, seed.world, dict(seed.observed)
        namespace = xr["metadata"].get("namespace")
    else:
        namespace = (
            None if fz.is_cluster_scoped(kind) else data.draw(st.sampled_from(fz.NAMESPACES))
        )
        xr = data.draw(fz.aim_object(kind, fz.metadata(namespace=namespace)), label="xr")
        world, observed = (), {}
    wrong_scope = data.draw(st.integers(0, 9), label="the wrong scope") == 9
    if wrong_scope:  # what `crossplane render` can be given, never the API server
        namespace = None if namespace else data.draw(st.sampled_from(fz.NAMESPACES))
        meta = {k: v for k, v in xr["metadata"].items() if k != "namespace"}
        xr = {**xr, "metadata": {**meta, **({"namespace": namespace} if namespace else {})}}
    elif namespace and data.draw(st.booleans(), label="the claims flavour"):
        claim_labels = fz.claim_labels(namespace, str(xr["metadata"]["name"]))
        xr = fz.as_composite(xr, data.draw(claim_labels, label="claim labels"))
    labels = data.draw(st.one_of(st.none(), fz.image_labels()), label="image labels")
    registry = SimulatedRegistry(
        labels, tuple(data.draw(st.lists(st.text(max_size=10), max_size=2)))
    )
    # Two runners given the same calls: each remembers what it told the XR (by its uid,
    # function/server/told.py), so one runner asked twice tells less the second time; the same
    # calls in the same order must still give byte-identical responses.
    runners = (
        FunctionRunner(inspector=registry, lister=registry, clock=lambda: NOW),
        FunctionRunner(inspector=registry, lister=registry, clock=lambda: NOW),
    )
    secrets: list[str] = []
    findings = Findings()
    req = run_function_request(xr, observed, {}, tag="fuzz")
    # Tracebacks rendered, so a failing example shows where the bug is.
    with structlog.testing.capture_logs([structlog.processors.format_exc_info]) as logs:
        for _ in range(ROUNDS):
            rsp = _answer(runners, req, findings, _Scope(fz.is_cluster_scoped(kind), namespace))
            if rsp is None:
                break
            req = _next_request(data, _World(xr, namespace, world, secrets), rsp)
    findings.problems += [
        f"bug while composing:\n{e['exception']}" for e in logs if "exception" in e
    ]
    findings.problems += [
        f"secret value in the response or log: {v[:12]}..."
        for v in checks.leaked(secrets, str(logs), *findings.results)
    ]
    totals = TOTALS.setdefault(kind, Counter())
    totals.update(examples=1, calls=findings.calls, problems=len(findings.problems))
    totals.update(findings.reasons)
    return findings


@dataclass(frozen=True)
class _Scope:
    """The kind's scope (from its XRD) and the namespace the drawn XR lives in."""

    cluster: bool
    namespace: str | None


def _answer(
    runners: tuple[FunctionRunner, FunctionRunner],
    req: fnv1.RunFunctionRequest,
    findings: Findings,
    scope: _Scope,
) -> fnv1.RunFunctionResponse | None:
    wire = req.SerializeToString()
    runner, twin = runners
    first = asyncio.run(runner.RunFunction(fnv1.RunFunctionRequest.FromString(wire)))
    second = asyncio.run(twin.RunFunction(fnv1.RunFunctionRequest.FromString(wire)))
    findings.calls += 2
    out = first.SerializeToString(deterministic=True)
    if out != second.SerializeToString(deterministic=True):
        findings.problems.append("the same request gave two different responses")
    rsp = json_format.MessageToDict(first)
    findings.results[json_format.MessageToJson(first)] += 1
    findings.reasons |= {f"{c['type']}={c.get('reason')}" for c in rsp.get("conditions", [])}
    findings.problems += [f"internal error: {m}" for m in checks.internal_errors(rsp)]
    findings.problems += checks.bad_names(rsp)
    findings.problems += checks.oversized_status(rsp)
    findings.problems += checks.bad_references(rsp)
    findings.problems += checks.rbac_problems(rsp)
    findings.problems += checks.routes_outside_the_namespace(
        json_format.MessageToDict(req), rsp, scope.namespace
    )
    findings.problems += checks.scope_problems(
        rsp, cluster=scope.cluster, namespace=scope.namespace, system_namespace=SYSTEM_NAMESPACE
    )
    for key, pod in checks.pod_specs(rsp):
        findings.problems += [f"{key} is not restricted: {v}" for v in restricted_violations(pod)]
    fatal = any(r.get("severity") == "SEVERITY_FATAL" for r in rsp.get("results", []))
    return None if fatal else first


@dataclass(frozen=True)
class _World:
    xr: Any
    namespace: str | None
    objects: tuple[Any, ...]
    secrets: list[str]


def _next_request(
    data: st.DataObject, world: _World, rsp: fnv1.RunFunctionResponse
) -> fnv1.RunFunctionRequest:
    """What Crossplane sends next: status written back, objects observed, lookups answered."""
    xr = world.xr
    written = struct_to_dict(rsp.desired.composite.resource)
    if "status" in written:
        xr = {**xr, "status": written["status"]}
    resources = {}
    for name, desired in rsp.desired.resources.items():
        obj = struct_to_dict(desired.resource)
        was = obj.get("metadata")
        meta = {**(was if isinstance(was, dict) else {}), "uid": data.draw(fz.uids)}
        seen = data.draw(
            fz.cluster_object(str(obj.get("kind")), st.just(meta)), label=f"observed {name}"
        )
        status = {"status": seen["status"]} if "status" in seen else {}
        resources[name] = {**obj, "metadata": meta, **status}
    required = {}
    for name, selector in rsp.requirements.resources.items():
        known = [o for o in world.objects if selects(selector, o)]
        drawn = data.draw(st.integers(0, 2 if not known else 1), label=f"more {name}")
        required[name] = known + [_found(data, selector, world) for _ in range(drawn)]
    return run_function_request(xr, resources, required, tag="fuzz")


def _found(data: st.DataObject, selector: fnv1.ResourceSelector, world: _World) -> Any:
    cluster_kinds = {"Node"} | {k for k in fz.xrds() if fz.is_cluster_scoped(k)}
    where = (
        None if selector.kind in cluster_kinds else (selector.namespace or world.namespace or "x")
    )
    name: Any = selector.match_name if selector.HasField("match_name") else fz.dns_names
    meta = fz.metadata(name, where, dict(selector.match_labels.labels))
    if selector.kind == "Secret":
        secret, values = data.draw(fz.secrets(meta), label="secret")
        world.secrets.extend(values)
        return secret
    return data.draw(fz.cluster_object(selector.kind, meta), label=selector.kind)
