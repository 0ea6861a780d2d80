"""RunFunction over protobuf: dispatch by kind, and every failure becomes a result."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from pydantic import JsonValue

from function.compose import COMPOSERS
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Observed
from function.rules.discovery import rfc3339
from function.server.fn import FunctionRunner
from function.settings import Settings
from tests.cases import Case, table


def request(
    kind: str, spec: dict[str, Any] | None = None, generation: int | None = None
) -> fnv1.RunFunctionRequest:
    meta: dict[str, Any] = {"name": "x"}
    if not kind.startswith("AIMCluster"):  # a cluster kind's XR has no namespace (test_scope)
        meta["namespace"] = "team"
    if generation is not None:
        meta["generation"] = generation
    xr: dict[str, Any] = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": spec if spec is not None else {},
    }
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "t"
    req.observed.composite.resource.update(xr)
    return req


def run(runner: FunctionRunner, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    return asyncio.run(runner.RunFunction(req))


def only_result(rsp: fnv1.RunFunctionResponse) -> fnv1.Result:
    assert len(rsp.results) == 1
    return rsp.results[0]


def test_unknown_kind_is_a_fatal_result_naming_the_kind() -> None:
    """A Composition wired to the wrong kind tells the user which kind, without raising."""
    result = only_result(run(FunctionRunner(), request("AIMSomethingElse")))
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "'AIMSomethingElse'" in result.message
    assert "AIMService" in result.message


def test_spec_error_is_a_fatal_result_with_the_field() -> None:
    """A spec the composer cannot use is reported with its field path."""
    result = only_result(run(FunctionRunner(), request("AIMService", {"model": {"image": 3}})))
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "spec.model.image" in result.message


def test_warning_severity_errors_become_warnings() -> None:
    """An error's severity decides the result's."""

    class DegradedError(InvalidSpecError):
        severity = InvalidSpecError.severity.WARNING

    def composer(_: Observed) -> Composition:
        raise DegradedError(field="spec.x", problem="is odd")

    result = only_result(run(FunctionRunner({"K": composer}), request("K")))
    assert result.severity == fnv1.SEVERITY_WARNING
    assert "spec.x: is odd" in result.message


def test_a_bug_in_a_composer_is_a_fatal_result_not_a_grpc_error() -> None:
    """Our own bug fails this XR's reconcile with a message, and the server keeps serving."""

    def composer(_: Observed) -> Composition:
        empty: dict[str, Composition] = {}
        return empty["missing"]

    runner = FunctionRunner({"K": composer, **COMPOSERS})
    result = only_result(run(runner, request("K")))
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "internal error" in result.message
    assert "KeyError" in result.message

    healthy = request("AIMService", {"model": {"image": "i"}, "template": {"name": "t"}})
    # Only the Normal events of its first conditions: no fatal or warning carried over.
    results = run(runner, healthy).results
    assert [r.message for r in results if r.severity != fnv1.SEVERITY_NORMAL] == []


def test_composition_is_written_to_the_response() -> None:
    """Resources, readiness, status, conditions and requirements reach Crossplane."""
    req = request("AIMService", {"model": {"ref": "m"}, "template": {"name": "tpl"}})
    aim = "aim.silogen.ai/v1alpha1"
    tpl: dict[str, Any] = {
        "apiVersion": aim,
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": "tpl"},
        "spec": {"modelName": "m", "hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
        "status": {"status": "Available"},
    }
    model: dict[str, Any] = {
        "apiVersion": aim,
        "kind": "AIMClusterModel",
        "metadata": {"name": "m"},
        "spec": {"image": "img"},
        "status": {"status": "Ready"},
    }
    for key in ("runtime-config", "runtime-config-cluster", "model", "template"):
        req.required_resources[key].SetInParent()
    req.required_resources["template-cluster"].items.add().resource.update(tpl)
    req.required_resources["model-cluster"].items.add().resource.update(model)

    rsp = run(FunctionRunner(), req)

    # A new object: each of its first conditions is news, told as a Normal event; the missing
    # default runtime config as a Warning whose reason names it (seed 004).
    assert [(r.severity, r.reason, r.message.split(" ")[0]) for r in rsp.results] == [
        (
            (fnv1.SEVERITY_WARNING, "DefaultRuntimeConfigMissing", c.type)
            if c.reason == "DefaultRuntimeConfigMissing"
            else (fnv1.SEVERITY_NORMAL, "", c.type)
        )
        for c in rsp.conditions
    ]
    assert [c.reason for c in rsp.conditions if c.type == "RuntimeConfigReady"] == [
        "DefaultRuntimeConfigMissing"
    ]
    desired = rsp.desired.resources["inference-service"]
    assert desired.ready == fnv1.READY_FALSE
    assert resource.struct_to_dict(desired.resource)["kind"] == "InferenceService"
    status = resource.struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status["status"] == "Starting"
    assert rsp.desired.composite.ready == fnv1.READY_FALSE
    assert {c.type for c in rsp.conditions} == {
        "RuntimeConfigReady",
        "ModelReady",
        "TemplateReady",
        "InferenceServiceReady",
    }
    assert set(rsp.requirements.resources) == {
        "runtime-config",
        "runtime-config-cluster",
        "model",
        "model-cluster",
        "template",
        "template-cluster",
    }
    assert rsp.meta.tag == "t"


def test_a_missing_default_runtime_config_warns_once_and_composing_goes_on() -> None:
    """Seed 004: without a default runtime config the template still starts discovery, and the
    user gets one Warning event, with reason DefaultRuntimeConfigMissing, not one per call."""
    spec = {
        "modelName": "m",
        "modelSources": [{"modelId": "org/m", "sourceUri": "hf://org/m", "size": "1Gi"}],
    }
    req = request("AIMServiceTemplate", spec)
    model: dict[str, Any] = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMClusterModel",
        "metadata": {"name": "m"},
        "spec": {"image": "img"},
    }
    for key in ("runtime-config", "runtime-config-cluster", "model", "model-cluster"):
        req.required_resources[key].SetInParent()
    req.required_resources["model-cluster"].items.add().resource.update(model)

    rsp = run(FunctionRunner(), req)
    warned = [r for r in rsp.results if r.severity == fnv1.SEVERITY_WARNING]
    assert [r.reason for r in warned] == ["DefaultRuntimeConfigMissing"]
    assert "using the built-in defaults" in warned[0].message
    status = resource.struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status["status"] == "Available"

    # Crossplane writes the conditions back; the next call has nothing new to warn about.
    words = {
        fnv1.STATUS_CONDITION_TRUE: "True",
        fnv1.STATUS_CONDITION_FALSE: "False",
        fnv1.STATUS_CONDITION_UNKNOWN: "Unknown",
    }
    written = [
        {"type": c.type, "status": words[c.status], "reason": c.reason} for c in rsp.conditions
    ]
    req.observed.composite.resource.update({"status": {"conditions": written}})
    again = run(FunctionRunner(), req)
    assert [r for r in again.results if r.severity == fnv1.SEVERITY_WARNING] == []


def test_same_request_gives_byte_identical_response() -> None:
    """Deterministic output: no spurious diffs for Crossplane to apply."""
    req = request("AIMService", {"model": {"image": "img"}, "template": {"name": "tpl"}})
    runner = FunctionRunner()
    first = run(runner, req).SerializeToString(deterministic=True)
    assert first == run(runner, req).SerializeToString(deterministic=True)


@dataclass(frozen=True)
class ReadyCase(Case):
    composed: bool | None
    ready: int


READY_CASES = [
    ReadyCase(
        "ready",
        "a service that serves, a template that can be used",
        composed=True,
        ready=fnv1.READY_TRUE,
    ),
    ReadyCase(
        "not-ready",
        "everything composed may be ready, but the object is not",
        composed=False,
        ready=fnv1.READY_FALSE,
    ),
    ReadyCase("no-headline", "runtime configs: Crossplane decides", None, fnv1.READY_UNSPECIFIED),
]


@table(READY_CASES)
def test_the_xr_is_ready_only_when_its_composer_says_so(case: ReadyCase) -> None:
    """Crossplane's Ready follows the composer's answer (its AIM headline, function/compose/
    frame.py), not merely "everything composed is ready": a service that has composed nothing
    yet is not Ready. Without an answer (runtime configs) Crossplane decides from the composed
    resources."""

    def composer(_: Observed) -> Composition:
        return Composition(ready=case.composed)

    rsp = run(FunctionRunner({"K": composer}), request("K"))
    assert rsp.desired.composite.ready == case.ready, case.reason


@dataclass(frozen=True)
class KindCase(Case):
    kind: str
    spec: dict[str, Any]


CONFIG_CASES = [
    KindCase(
        "namespaced", "a team's config", "AIMRuntimeConfig", {"defaultStorageClassName": "fast"}
    ),
    KindCase(
        "cluster",
        "the platform's config",
        "AIMClusterRuntimeConfig",
        {"defaultStorageClassName": "fast"},
    ),
]


@table(CONFIG_CASES)
def test_runtime_configs_compose_nothing_and_report_no_error(case: KindCase) -> None:
    """Their Compositions call the function too; a valid config is simply accepted."""
    rsp = run(FunctionRunner(), request(case.kind, case.spec))
    assert list(rsp.results) == []
    assert dict(rsp.desired.resources) == {}


def test_a_runtime_config_with_a_bad_field_is_a_fatal_result_naming_it() -> None:
    """A runtime config that cannot be read is a fatal result naming its field."""
    rsp = run(FunctionRunner(), request("AIMRuntimeConfig", {"routing": {"enabled": "often"}}))
    result = only_result(rsp)
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "spec.routing.enabled" in result.message


def test_only_the_cluster_runtime_config_sets_the_discovery_cap() -> None:
    """maxConcurrentDiscoveryJobs caps the whole cluster, so a namespace cannot set it: its
    AIMRuntimeConfig is refused naming the field, the AIMClusterRuntimeConfig accepted."""
    cap = {"maxConcurrentDiscoveryJobs": 4}
    assert list(run(FunctionRunner(), request("AIMClusterRuntimeConfig", cap)).results) == []
    result = only_result(run(FunctionRunner(), request("AIMRuntimeConfig", cap)))
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "spec.maxConcurrentDiscoveryJobs" in result.message


def test_only_the_cluster_runtime_config_sets_the_route_policy() -> None:
    """The route policy keeps tenants' routes apart on a shared Gateway, so a namespace's own
    AIMRuntimeConfig cannot set it: it is refused naming the field, the cluster's accepted."""
    policy = {"routing": {"policy": {"pathPrefix": "/", "allowedAnnotations": ["example.com/"]}}}
    assert list(run(FunctionRunner(), request("AIMClusterRuntimeConfig", policy)).results) == []
    result = only_result(run(FunctionRunner(), request("AIMRuntimeConfig", policy)))
    assert result.severity == fnv1.SEVERITY_FATAL
    assert "spec.routing.policy" in result.message


GENERATION_CASES = [
    KindCase("service", "a composer with requirements", "AIMService", {"model": {"ref": "m"}}),
    KindCase(
        "model", "a composer that inspects", "AIMModel", {"image": "registry.example.com/m:1"}
    ),
    KindCase("template", "a composer with discovery", "AIMServiceTemplate", {"modelName": "m"}),
    KindCase("cache", "a composer with Jobs", "AIMModelCache", {"sourceUri": "hf://org/m"}),
    KindCase(
        "runtime-config", "a kind that composes nothing still has status", "AIMRuntimeConfig", {}
    ),
    KindCase(
        "cluster-model",
        "a cluster kind has no namespace, but a generation",
        "AIMClusterModel",
        {"image": "registry.example.com/m:1"},
    ),
    KindCase(
        "model-source",
        "a composer that lists a registry",
        "AIMClusterModelSource",
        {"registry": "docker.io", "filters": [{"image": "org/*"}]},
    ),
    KindCase(
        "cluster-template",
        "the cluster template shares the template's composer",
        "AIMClusterServiceTemplate",
        {"modelName": "m"},
    ),
    KindCase(
        "template-cache",
        "a composer of other AIM objects",
        "AIMTemplateCache",
        {"templateName": "t"},
    ),
    KindCase(
        "cluster-runtime-config",
        "a kind without a headline that composes cluster models",
        "AIMClusterRuntimeConfig",
        {},
    ),
]


def test_every_kind_is_checked_for_its_generation() -> None:
    """The server no longer writes observedGeneration: each composer does, through the frame's
    finish or stamp. A kind added without a case here could forget it unnoticed."""
    assert {case.kind for case in GENERATION_CASES} == set(COMPOSERS)


@table(GENERATION_CASES)
def test_status_says_which_generation_it_describes(case: KindCase) -> None:
    """Every kind writes status.observedGeneration, so GitOps tools can tell stale from current."""
    req = request(case.kind, case.spec, generation=7)
    rsp = run(FunctionRunner(), req)
    status = resource.struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status["observedGeneration"] == 7, case.reason


def test_a_claims_composite_says_which_generation_it_describes() -> None:
    """In the claims flavour the composite (XAIMService) is composed as its claim's XR; its
    status still names the generation, which Crossplane copies to the claim."""
    req = request("XAIMService", {"model": {"ref": "m"}})
    claim = {"crossplane.io/claim-name": "chat", "crossplane.io/claim-namespace": "team"}
    req.observed.composite.resource.update(
        {"metadata": {"name": "chat-x1", "generation": 7, "labels": claim}}
    )
    rsp = run(FunctionRunner(), req)
    assert [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL] == []
    status = resource.struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status["observedGeneration"] == 7


def test_a_fatal_result_leaves_the_observed_generation_behind() -> None:
    """A spec the function could not compose is not 'observed': no status is written at all."""
    req = request("AIMService", {"model": {"image": 3}}, generation=7)
    rsp = run(FunctionRunner(), req)
    assert "status" not in resource.struct_to_dict(rsp.desired.composite.resource)


@dataclass(frozen=True)
class TtlCase(Case):
    ready: bool | None
    ttl: int


TTL_CASES = [
    TtlCase(
        "not-ready",
        "waiting for another object, or failed until a fix to another: composed again soon",
        ready=False,
        ttl=3,
    ),
    TtlCase("ready", "settled: rechecked for what it reads changing, rarely", ready=True, ttl=30),
    TtlCase(
        "no-headline",
        "a runtime config waits for nothing: Crossplane decides its readiness",
        ready=None,
        ttl=30,
    ),
]


@table(TTL_CASES)
def test_an_object_that_waits_is_composed_again_soon(case: TtlCase) -> None:
    """Crossplane 2.3 does not watch looked-up objects, so the TTL is how a wait ends."""

    def composer(_: Observed) -> Composition:
        return Composition(ready=case.ready)

    settings = Settings(waiting_recheck_s=3, ready_recheck_s=30)
    runner = FunctionRunner({"AIMService": composer}, settings=settings)
    rsp = run(runner, request("AIMService"))
    assert rsp.meta.ttl.seconds == case.ttl, case.reason


NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class BackoffCase(Case):
    ready: JsonValue
    """Crossplane's `Ready` condition on the observed XR, None for none."""
    ttl: int
    waiting_recheck_s: int = 10
    ready_recheck_s: int = 600


def _ready(status: str, since: JsonValue) -> JsonValue:
    return {"type": "Ready", "status": status, "reason": "Creating", "lastTransitionTime": since}


def _ago(seconds: int) -> str:
    return rfc3339(NOW - timedelta(seconds=seconds))


BACKOFF_CASES = [
    BackoffCase("new", "never reconciled: no Ready condition, the wait just began", None, ttl=10),
    BackoffCase(
        "short-wait",
        "a quarter of 20 s is under the first recheck",
        _ready("False", _ago(20)),
        ttl=10,
    ),
    BackoffCase(
        "growing",
        "waited 2 minutes: rechecked after a quarter of that",
        _ready("False", _ago(120)),
        ttl=30,
    ),
    BackoffCase(
        "capped",
        "waited an hour: six first rechecks at the most",
        _ready("False", _ago(3600)),
        ttl=60,
    ),
    BackoffCase(
        "unknown",
        "Ready Unknown is no wait core started timing",
        _ready("Unknown", _ago(3600)),
        ttl=10,
    ),
    BackoffCase(
        "future",
        "a transition after this call (another clock) is a wait that just began",
        _ready("False", rfc3339(NOW + timedelta(hours=1))),
        ttl=10,
    ),
    BackoffCase("garbage", "a time that is no time", _ready("False", "yesterday" * 1000), ttl=10),
    BackoffCase("not-a-string", "a time of the wrong type", _ready("False", {"t": 1}), ttl=10),
    BackoffCase(
        "settled-cap",
        "a settled recheck shorter than six waiting ones (as the end-to-end tier sets them): "
        "a waiting object is never rechecked less often than a settled one",
        _ready("False", _ago(3600)),
        ttl=5,
        waiting_recheck_s=2,
        ready_recheck_s=5,
    ),
]


@table(BACKOFF_CASES)
def test_a_long_wait_is_rechecked_less_often(case: BackoffCase) -> None:
    """Thousands of services waiting for KServe were rechecked every 10 s each, three applies
    that changed nothing per recheck, crowding out the reconciles that end the waits: the
    recheck grows with the wait, up to a cap (function/server/recheck.py)."""

    def composer(_: Observed) -> Composition:
        return Composition(ready=False)

    settings = Settings(
        waiting_recheck_s=case.waiting_recheck_s, ready_recheck_s=case.ready_recheck_s
    )
    runner = FunctionRunner({"AIMService": composer}, settings=settings, clock=lambda: NOW)
    req = request("AIMService")
    if case.ready is not None:
        req.observed.composite.resource.update({"status": {"conditions": [case.ready]}})
    rsp = run(runner, req)
    assert rsp.meta.ttl.seconds == case.ttl, case.reason


def test_a_request_over_the_limit_is_refused_with_how_to_raise_it() -> None:
    """Large catalogs can pass the limit: the result says by how much and which flag to set."""
    req = request("AIMService", {"model": {"image": "img"}, "env": [{"name": "x" * 5000}]})
    rsp = run(FunctionRunner(max_request_bytes=1024), req)
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    assert "more than the function's limit" in rsp.results[0].message
    assert "--max-recv-message-size" in rsp.results[0].message
