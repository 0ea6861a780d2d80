"""Composing off the event loop: a worker pool with a budget per call.

The pool is what `function-aim` serves with. These tests start real worker processes (spawned,
as in production) with composers that misbehave on purpose, and check that only the call that
misbehaved is affected.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.compose import COMPOSERS
from function.kube.contract import Composition, ListRegistry, Observed
from function.kube.convert import struct_to_dict
from function.registry.listing import (
    ListingAnswer,
    ListingRequest,
    QueryAnswer,
    RepositoryQuery,
    RepositoryTags,
)
from function.server.call import Composers
from function.server.fn import FunctionRunner, UndecodableRequestError
from function.server.workers import WorkerPool
from function.settings import Settings

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def spin(observed: Observed) -> Composition:
    """A composer stuck in CPU work (sent to workers by reference, so it lives at module level)."""
    deadline = time.monotonic() + float(observed.name.split("-")[-1])
    while time.monotonic() < deadline:
        pass
    return Composition(status={"status": f"spun {observed.name}"})


def spin_over_listings(observed: Observed) -> Composition | ListRegistry:
    """A model source whose listing takes longer to compose than any budget: it asks for one,
    spins over it, and reports a listing given up (`ListingAnswer.given_up`) by what it says."""
    if observed.listing is None:
        query = RepositoryQuery("r.example", "org/*", wildcard=True)
        return ListRegistry(ListingRequest(observed.name, (query,)))
    stopped = observed.listing.stopped
    if stopped is None:
        return spin(observed)
    said = f"{stopped.repositories} repositories, {stopped.tags} tags, {stopped.calls} calls"
    return Composition(
        status={"status": f"given up past {stopped.past} ({stopped.setting}): {said}"}
    )


class Listing:
    """A registry answering every wildcard with two repositories of three tags."""

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Two repositories, read in three calls (the catalog, two tag lists)."""
        tags = ("1.0.0", "1.1.0", "2.0.0")
        answers = tuple(
            QueryAnswer(q, (RepositoryTags("org/a", tags), RepositoryTags("org/b", tags)))
            for q in request.queries
        )
        return ListingAnswer(request.source, answers, calls=3)


def quick(observed: Observed) -> Composition:
    """A composer that answers at once with the XR's name."""
    return Composition(status={"status": f"composed {observed.name}"})


def request(kind: str, name: str) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(
        {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": kind, "metadata": {"name": name}}
    )
    return req


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    composers = Composers({"Spin": spin, "Quick": quick}, Settings())
    pool = WorkerPool(composers, size=2, budget_s=1.0)
    yield pool
    pool.close()


def status_of(rsp: fnv1.RunFunctionResponse) -> Any:
    status = struct_to_dict(rsp.desired.composite.resource)["status"]
    assert isinstance(status, dict)
    return status["status"]


def test_a_call_over_budget_gets_a_result_naming_the_xr_and_others_go_on(
    pool: WorkerPool,
) -> None:
    """One XR stuck in CPU work costs its own call the budget, and nobody else anything."""
    runner = FunctionRunner(executor=pool)

    async def both() -> tuple[fnv1.RunFunctionResponse, list[fnv1.RunFunctionResponse]]:
        stuck = asyncio.ensure_future(runner.RunFunction(request("Spin", "stuck-30")))
        quick_ones = [await runner.RunFunction(request("Quick", f"q{i}")) for i in range(20)]
        return await stuck, quick_ones

    before = pool.pids
    stuck, quick_ones = asyncio.run(both())

    assert [r.severity for r in stuck.results] == [fnv1.SEVERITY_FATAL]
    assert "composing Spin stuck-30: composing took longer than" in stuck.results[0].message
    assert [status_of(r) for r in quick_ones] == [f"composed q{i}" for i in range(20)]
    assert len(set(pool.pids) - set(before)) == 1  # the stuck worker was replaced
    again = asyncio.run(runner.RunFunction(request("Quick", "after")))
    assert status_of(again) == "composed after"


def test_a_listing_too_large_to_compose_in_the_budget_is_given_up_not_an_error() -> None:
    """A model source whose listing cannot be composed within the budget is no bug: its step
    runs again with the listing given up, and the source reports how far the listing got and
    the flag that raises the budget, instead of an internal error that records nothing."""
    pool = WorkerPool(Composers({"Source": spin_over_listings}, Settings()), size=1, budget_s=1.0)
    runner = FunctionRunner(executor=pool, lister=Listing())
    try:
        rsp = asyncio.run(runner.RunFunction(request("Source", "catalog-30")))
    finally:
        runner.close()

    assert [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL] == []
    assert status_of(rsp) == (
        "given up past what one call composes within the function's compose budget "
        "(--compose-budget): 2 repositories, 6 tags, 3 calls"
    )
    # Its one query is counted given up, as a sync past the tag bound's are.
    listings = [
        s.value
        for family in runner.metrics.registry.collect()
        for s in family.samples
        if s.name == "function_aim_registry_listings_total"
        and s.labels.get("outcome") == "RegistryTooLarge"
    ]
    assert listings == [1]


def test_a_worker_that_dies_gives_a_result_and_is_replaced(pool: WorkerPool) -> None:
    """A worker killed mid-call (the OOM killer, say) fails that call only."""
    runner = FunctionRunner(executor=pool)

    async def killed() -> fnv1.RunFunctionResponse:
        call = asyncio.ensure_future(runner.RunFunction(request("Spin", "victim-0.8")))
        await asyncio.sleep(0.3)
        for pid in pool.pids:  # the idle one dies too: it is replaced when next used, not now
            os.kill(pid, signal.SIGKILL)
        return await call

    rsp = asyncio.run(killed())
    assert "the worker process died" in rsp.results[0].message
    assert "Spin victim-0.8" in rsp.results[0].message


def test_a_caller_that_gives_up_does_not_receive_or_leave_behind_an_answer(
    pool: WorkerPool,
) -> None:
    """A cancelled call (a gRPC deadline) keeps its worker until the answer is read, so the
    next call through that worker gets its own answer, not the abandoned one."""
    runner = FunctionRunner(executor=WorkerPool(pool._composers, size=1, budget_s=5.0))  # noqa: SLF001

    async def cancel_then_ask() -> fnv1.RunFunctionResponse:
        abandoned = asyncio.ensure_future(runner.RunFunction(request("Spin", "slow-0.5")))
        await asyncio.sleep(0.1)
        abandoned.cancel()
        return await runner.RunFunction(request("Quick", "next"))

    try:
        assert status_of(asyncio.run(cancel_then_ask())) == "composed next"
    finally:
        runner.close()


def test_workers_compose_exactly_as_in_process() -> None:
    """The real composers through the pool: byte-identical to composing in process."""
    req = request("AIMService", "svc")
    req.observed.composite.resource.update(
        {"metadata": {"name": "svc", "namespace": "team"}, "spec": {"model": {"image": "i"}}}
    )
    pool = WorkerPool(Composers(dict(COMPOSERS), Settings()), size=1)
    try:
        served = asyncio.run(FunctionRunner(executor=pool, clock=lambda: NOW).RunFunction(req))
    finally:
        pool.close()
    local = asyncio.run(FunctionRunner(clock=lambda: NOW).RunFunction(req))
    assert served.SerializeToString(deterministic=True) == local.SerializeToString(
        deterministic=True
    )
    assert served.requirements.resources  # it composed, rather than failing the same way


def test_bytes_that_are_no_request_are_refused_without_costing_a_worker(pool: WorkerPool) -> None:
    """gRPC hands the server a request's bytes unparsed, so the worker is the first to read
    them: bytes that are no RunFunctionRequest are the caller's error, not a dead worker."""
    runner = FunctionRunner(executor=pool)
    before = pool.pids

    async def garbage_then_ask() -> fnv1.RunFunctionResponse:
        for _ in range(2):  # both workers see one
            with pytest.raises(UndecodableRequestError, match="Error parsing message"):
                await runner.run_bytes(b"\xff\xff\xff not protobuf")
        return await runner.RunFunction(request("Quick", "after"))

    assert status_of(asyncio.run(garbage_then_ask())) == "composed after"
    assert pool.pids == before
