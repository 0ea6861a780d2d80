"""Plays Crossplane for the fuzz tier: calls RunFunction, answers what it asks for, calls again.

A scenario draws an XR, then for a few rounds turns the previous response into the next request
as Crossplane would (the XR's status written back, the composed objects observed with a status
their controllers might report, each requirement answered with objects of the kind asked for),
so hostile values reach the code that reads Pods, Jobs, Secrets and templates, not only the
spec parser. Every response is checked with `tests.fuzz.checks`, and every request is answered
twice from its bytes, which must give the same bytes.

What is drawn depends only on the examples' seed: the response's maps (composed resources,
requirements, labels) are read in key order, since protobuf iterates them in an order that
changes from one process to the next. The call that first broke a property is kept in the
findings (`Call`), so it can be saved and replayed as a kept case (`tests/fuzz/kept/`).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import structlog
import yaml
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
DIGESTS: Final[dict[str, Any]] = {}
"""Per kind: a SHA-256 over every request sent, in order; the same seed must give the same one."""
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


@dataclass(frozen=True)
class Call:
    """One RunFunction call as plain manifests: the XR, its composed objects, the lookups' answers.

    What a kept case stores (`tests/fuzz/kept/`): the request is built from it as Crossplane
    builds one, so a case stays readable and survives changes to the strategies.
    """

    xr: Any
    observed: Mapping[str, Any]
    required: Mapping[str, Sequence[Any]]

    def request(self) -> fnv1.RunFunctionRequest:
        """The request Crossplane would send."""
        return run_function_request(self.xr, self.observed, self.required, tag="fuzz")


@dataclass
class Findings:
    """What a scenario saw: the properties broken, and counts for the report."""

    problems: list[str] = field(default_factory=list)
    calls: int = 0
    results: Counter[str] = field(default_factory=Counter)
    reasons: set[str] = field(default_factory=set)
    failed: Call | None = None
    """The first call that broke a property (for a leak, the last call), to keep as a case."""
    registry: SimulatedRegistry = field(default_factory=lambda: SimulatedRegistry({}))
    secrets: list[str] = field(default_factory=list)
    """Secret values drawn into the world, which no response or log line may hold."""


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
    findings = Findings(registry=registry)
    secrets = findings.secrets
    call = Call(xr, observed, {})
    scope = _Scope(fz.is_cluster_scoped(kind), namespace)
    digest = DIGESTS.setdefault(kind, hashlib.sha256())
    # Tracebacks rendered, so a failing example shows where the bug is.
    with structlog.testing.capture_logs([structlog.processors.format_exc_info]) as logs:
        for _ in range(ROUNDS):
            req = call.request()
            digest.update(req.SerializeToString(deterministic=True))
            rsp = _checked(runners, req, findings, scope, logs)
            if findings.problems and findings.failed is None:
                findings.failed = call
            if rsp is None:
                break
            call = _next_call(data, _World(xr, namespace, world, secrets), rsp)
    leaks = checks.leaked(secrets, str(logs), *findings.results)
    findings.problems += [f"secret value in the response or log: {v[:12]}..." for v in leaks]
    if leaks and findings.failed is None:
        findings.failed = call
    totals = TOTALS.setdefault(kind, Counter())
    totals.update(examples=1, calls=findings.calls, problems=len(findings.problems))
    totals.update(findings.reasons)
    return findings


@dataclass(frozen=True)
class _Scope:
    """The kind's scope (from its XRD) and the namespace the drawn XR lives in."""

    cluster: bool
    namespace: str | None


def replay(
    kind: str, call: Call, registry: SimulatedRegistry, secrets: Sequence[str] = ()
) -> list[str]:
    """The properties `call` breaks, checked as a scenario checks each of its calls."""
    runners = (
        FunctionRunner(inspector=registry, lister=registry, clock=lambda: NOW),
        FunctionRunner(inspector=registry, lister=registry, clock=lambda: NOW),
    )
    meta = call.xr.get("metadata") if isinstance(call.xr, dict) else None  # a kept case: any
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    findings = Findings()
    scope = _Scope(fz.is_cluster_scoped(kind), namespace)
    with structlog.testing.capture_logs([structlog.processors.format_exc_info]) as logs:
        _checked(runners, call.request(), findings, scope, logs)
    leaks = checks.leaked(list(secrets), str(logs), *findings.results)
    return findings.problems + [f"secret value in the response or log: {v[:12]}..." for v in leaks]


FOUND: Final = Path(__file__).resolve().parents[2] / ".hypothesis" / "aim-fuzz-found"
"""Where a failing example's call is saved (git-ignored), to be kept once fixed."""


def save_found(kind: str, findings: Findings) -> Path | None:
    """Write the call that broke a property as a kept case to fill in; None when there is none."""
    if findings.failed is None:
        return None
    case = {
        "reason": "TODO: what this example found, and the fix that keeps it fixed",
        "kind": kind,
        "problems": [p[:500] for p in findings.problems],
        "registry": {
            "labels": findings.registry.labels,
            "entrypoint": list(findings.registry.entrypoint),
        },
        "secrets": findings.secrets,
        "call": {
            "xr": findings.failed.xr,
            "observed": dict(findings.failed.observed),
            "required": {k: list(v) for k, v in findings.failed.required.items()},
        },
    }
    text = yaml.safe_dump(case, sort_keys=False, allow_unicode=True, width=100)
    FOUND.mkdir(parents=True, exist_ok=True)
    path = FOUND / f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.yaml"
    path.write_text(text)
    return path


def _checked(
    runners: tuple[FunctionRunner, FunctionRunner],
    req: fnv1.RunFunctionRequest,
    findings: Findings,
    scope: _Scope,
    logs: list[Any],
) -> fnv1.RunFunctionResponse | None:
    """`_answer`, with a traceback the call logged counted as a problem of this call."""
    logged = len(logs)
    rsp = _answer(runners, req, findings, scope)
    findings.problems += [
        f"bug while composing:\n{e['exception']}" for e in logs[logged:] if "exception" in e
    ]
    return rsp


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
    findings.problems += checks.userinfo_in_messages(rsp)
    findings.problems += checks.oversized_status(rsp)
    findings.problems += checks.bad_references(rsp)
    findings.problems += checks.rbac_problems(rsp)
    asked = json_format.MessageToDict(req)
    findings.problems += checks.routes_outside_the_namespace(asked, rsp, scope.namespace)
    findings.problems += checks.foreign_jobs_counted(asked, rsp)
    findings.problems += checks.cluster_models_the_platform_did_not_ask(asked, rsp)
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


def _next_call(data: st.DataObject, world: _World, rsp: fnv1.RunFunctionResponse) -> Call:
    """What Crossplane sends next: status written back, objects observed, lookups answered.

    The response's maps are read in key order: protobuf's own order differs between processes,
    and drawing in it would make the same seed draw other examples in another run.
    """
    xr = world.xr
    written = struct_to_dict(rsp.desired.composite.resource)
    if "status" in written:
        xr = {**xr, "status": written["status"]}
    resources = {}
    for name, desired in sorted(rsp.desired.resources.items()):
        obj = struct_to_dict(desired.resource)
        was = obj.get("metadata")
        meta = {**(was if isinstance(was, dict) else {}), "uid": data.draw(fz.uids)}
        seen = data.draw(
            fz.cluster_object(str(obj.get("kind")), st.just(meta)), label=f"observed {name}"
        )
        status = {"status": seen["status"]} if "status" in seen else {}
        resources[name] = {**obj, "metadata": meta, **status}
    required = {}
    for name, selector in sorted(rsp.requirements.resources.items()):
        known = [o for o in world.objects if selects(selector, o)]
        drawn = data.draw(st.integers(0, 2 if not known else 1), label=f"more {name}")
        required[name] = known + [_found(data, selector, world) for _ in range(drawn)]
    return Call(xr, resources, required)


def _found(data: st.DataObject, selector: fnv1.ResourceSelector, world: _World) -> Any:
    cluster_kinds = {"Node"} | {k for k in fz.xrds() if fz.is_cluster_scoped(k)}
    where = (
        None if selector.kind in cluster_kinds else (selector.namespace or world.namespace or "x")
    )
    name: Any = selector.match_name if selector.HasField("match_name") else fz.dns_names
    meta = fz.metadata(name, where, dict(sorted(selector.match_labels.labels.items())))
    if selector.kind == "Secret":
        secret, values = data.draw(fz.secrets(meta), label="secret")
        world.secrets.extend(values)
        return secret
    return data.draw(fz.cluster_object(selector.kind, meta), label=selector.kind)
