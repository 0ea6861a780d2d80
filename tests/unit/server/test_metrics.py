"""Prometheus metrics: what the server counts of each call, and the endpoint Prometheus scrapes."""

from __future__ import annotations

import asyncio
import urllib.request

import grpc
from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from prometheus_client.parser import text_string_to_metric_families
from pydantic import JsonValue

from devtools.render.harness import serve_function
from devtools.tools import free_port
from function.api.meta import Manifest
from function.compose.template import DISCOVERY_JOB
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Desired, Inspect, ListRegistry, Observed
from function.kube.counted import Counted, DiscoveryStarted, TemplateSelected
from function.registry.inspect import (
    FailureKind,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.listing import (
    ListingAnswer,
    ListingRequest,
    QueryAnswer,
    RepositoryQuery,
    RepositoryTags,
)
from function.registry.reference import parse
from function.rules.status import Condition, ConditionStatus, ConditionType
from function.server.fn import FunctionRunner
from tests.unit.server.test_fn import request

IMAGE = "ghcr.io/org/m:1"


def selecting(observed: Observed) -> Composition:
    """A service whose template selection ends in a tie."""
    del observed
    tie = Condition(
        ConditionType.TEMPLATE_READY, ConditionStatus.FALSE, "TemplateSelectionAmbiguous"
    )
    return Composition(
        conditions=[tie], status={"status": "Pending"}, counted=[TemplateSelected(tie.reason)]
    )


def discovering(observed: Observed) -> Composition:
    """A template that composes its discovery Job (a new one unless it is observed)."""
    job: Manifest = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": observed.name}}
    anew: list[Counted] = [DiscoveryStarted()] if DISCOVERY_JOB not in observed.resources else []
    return Composition(resources={DISCOVERY_JOB: Desired(job, ready=False)}, counted=anew)


def inspecting(observed: Observed) -> Composition | Inspect:
    """A model that needs its image's labels, then has them (or the registry's refusal)."""
    if observed.inspection is None:
        return Inspect(InspectionRequest(IMAGE, parse(IMAGE)))
    return Composition(status={"status": "Ready"})


def listing(observed: Observed) -> Composition | ListRegistry:
    """A model source that needs two repositories listed, then reports what it found."""
    if observed.listing is None:
        queries = (RepositoryQuery("r.example", "org/a"), RepositoryQuery("r.example", "org/b"))
        return ListRegistry(ListingRequest(observed.name, queries))
    found: list[JsonValue] = [len(a.repositories) for a in observed.listing.answers]
    return Composition(status={"status": "Ready", "found": found})


class HalfRefusing:
    """A registry that lists org/a and refuses org/b."""

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Answer the first query, refuse the others."""
        first, *rest = request.queries
        answers = [QueryAnswer(first, (RepositoryTags(first.repository, ("1.0",)),))]
        answers += [QueryAnswer(q, failure=FailureKind.NOT_FOUND, message="no") for q in rest]
        return ListingAnswer(request.source, tuple(answers))


class TooLarge:
    """A registry whose listing grows past the lister's bound: given up, no answers."""

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Give the listing up after a few calls."""
        listed = ListingAnswer(request.source, (), calls=3)
        return listed.given_up("the 10 tags one sync reads", "--registry-listing-max-tags")


def invalid(observed: Observed) -> Composition:
    """A model whose spec cannot be composed."""
    raise InvalidSpecError(field="spec.image", problem=f"{observed.name}: no image reference")


class Refusing:
    """A registry that refuses every login."""

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """Refuse."""
        return RegistryFailure(str(request.reference), FailureKind.UNAUTHORIZED, "denied")


def sample(runner: FunctionRunner, name: str, **labels: str) -> float:
    """A sample's value (0 when it was never recorded)."""
    return runner.metrics.registry.get_sample_value(name, labels) or 0.0


def test_each_call_is_counted_by_kind_and_outcome_with_what_it_reported() -> None:
    """Calls by kind and outcome, a service's selection reason, discovery Jobs composed anew (not
    those that already exist) and registry inspections by outcome."""
    runner = FunctionRunner(
        {
            "AIMService": selecting,
            "AIMServiceTemplate": discovering,
            "AIMModel": inspecting,
            "AIMClusterModel": invalid,
        },
        inspector=Refusing(),
    )
    observed_job = request("AIMServiceTemplate")
    observed_job.observed.resources[DISCOVERY_JOB].resource.update(
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}}
    )
    for req in (
        request("AIMService"),
        request("AIMService"),
        request("AIMServiceTemplate"),
        observed_job,
        request("AIMModel"),
        request("AIMClusterModel"),
        request("Unknown"),
    ):
        asyncio.run(runner.RunFunction(req))

    calls = "function_aim_run_function_seconds_count"
    assert sample(runner, calls, kind="AIMService", outcome="composed") == 2
    assert sample(runner, calls, kind="AIMServiceTemplate", outcome="composed") == 2
    assert sample(runner, calls, kind="AIMModel", outcome="composed") == 1
    assert sample(runner, calls, kind="AIMClusterModel", outcome="invalid") == 1
    assert sample(runner, calls, kind="other", outcome="refused") == 1
    selections = "function_aim_template_selections_total"
    assert sample(runner, selections, reason="TemplateSelectionAmbiguous") == 2
    assert sample(runner, "function_aim_discovery_jobs_started_total") == 1
    inspections = "function_aim_registry_inspections_total"
    assert sample(runner, inspections, outcome="RegistryUnauthorized") == 1


def test_a_model_source_s_registry_queries_are_counted_and_answered() -> None:
    """A source's listing runs between two steps of one call: the composer gets the answers, and
    each query is counted by outcome."""
    runner = FunctionRunner({"AIMClusterModelSource": listing}, lister=HalfRefusing())
    rsp = asyncio.run(runner.RunFunction(request("AIMClusterModelSource")))

    status = resource.struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status["found"] == [1, 0]
    listings = "function_aim_registry_listings_total"
    assert sample(runner, listings, outcome="ok") == 1
    assert sample(runner, listings, outcome="ImageNotFound") == 1


def test_a_listing_given_up_counts_each_of_its_queries_as_too_large() -> None:
    """A sync given up as a whole answers no query; each is counted RegistryTooLarge, so a
    source that keeps outgrowing the bound shows in the metrics, not as missing listings."""
    runner = FunctionRunner({"AIMClusterModelSource": listing}, lister=TooLarge())
    asyncio.run(runner.RunFunction(request("AIMClusterModelSource")))

    listings = "function_aim_registry_listings_total"
    assert sample(runner, listings, outcome="RegistryTooLarge") == 2
    assert sample(runner, listings, outcome="ok") == 0


def test_kinds_the_function_does_not_compose_share_one_series() -> None:
    """A request's kind is whatever its sender wrote: a thousand made-up kinds are one `other`
    series, not a thousand, so the metrics cannot be made to grow without bound."""
    runner = FunctionRunner({})
    for i in range(1000):
        asyncio.run(runner.RunFunction(request(f"Made{i}")))
    calls = "function_aim_run_function_seconds_count"
    assert sample(runner, calls, kind="other", outcome="refused") == 1000
    kinds = {
        s.labels["kind"]
        for family in runner.metrics.registry.collect()
        for s in family.samples
        if "kind" in s.labels
    }
    assert kinds == {"other"}


def test_the_served_function_exposes_its_metrics_for_prometheus() -> None:
    """`function-aim --metrics-address` serves the text format Prometheus scrapes, with the calls
    it answered over gRPC."""
    port = free_port()
    with serve_function(f"--metrics-address=127.0.0.1:{port}", "--workers=1") as server:
        with grpc.insecure_channel(server.target) as channel:
            stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
            rsp: fnv1.RunFunctionResponse = stub.RunFunction(
                request("AIMRuntimeConfig"), timeout=30
            )
        assert not rsp.results
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            assert answer.headers["Content-Type"].startswith("text/plain")
            text = answer.read().decode()

    families = {f.name: f for f in text_string_to_metric_families(text)}
    histogram = families["function_aim_run_function_seconds"]
    [count] = [
        s
        for s in histogram.samples
        if s.name.endswith("_count")
        and s.labels == {"kind": "AIMRuntimeConfig", "outcome": "composed"}
    ]
    assert count.value == 1
    for name in (
        "function_aim_registry_inspections",
        "function_aim_template_selections",
        "function_aim_discovery_jobs_started",
        "function_aim_events_suppressed",
    ):
        assert families[name].type == "counter"
