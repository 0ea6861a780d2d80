"""The gRPC servicer: receive a request, have it composed off the event loop, send the response.

Composing happens in `function.server.call`, run by an executor (`function.server.workers`):
worker processes with a time budget when served, in process for tests. This module owns what
needs the event loop or protects it: the request size limit, the registry calls (the function's
only network calls: a model's image inspection, a model source's listing) between two steps of
composing, turning a call that ran out of time or lost its worker into a result that names the
XR, and which events a composed call sends (function/server/told.py: only the server's process
sees every call of an XR).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

import grpc
from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf.message import DecodeError

from function.compose import COMPOSERS, Composer
from function.kube.contract import AskRegistry
from function.kube.wire import results
from function.registry.inspect import InspectionRequest, Inspector, RegistryFailure
from function.registry.listing import Lister, ListingAnswer
from function.registry.oras import OrasInspector
from function.registry.oras_listing import OrasLister
from function.registry.question import Answer, Question
from function.rules.status import Reason
from function.server.call import (
    FUNCTION_NAME,
    Call,
    Composed,
    Composers,
    Step,
    Undecodable,
)
from function.server.metrics import Metrics
from function.server.told import Told
from function.server.workers import BudgetExceeded, Executor, InProcess, WorkerLost
from function.settings import Settings

Context = grpc.aio.ServicerContext[fnv1.RunFunctionRequest, fnv1.RunFunctionResponse]

DEFAULT_MAX_REQUEST_MIB = 32
"""Requests larger than this are refused with a result saying how to raise the limit."""
_MIB = 1 << 20


class UndecodableRequestError(Exception):
    """The bytes received are no RunFunctionRequest: a caller's fault, answered INVALID_ARGUMENT."""


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Serves RunFunction for every AIM kind."""

    def __init__(  # noqa: PLR0913 - each is a seam tests or the command line set
        self,
        composers: Mapping[str, Composer] = COMPOSERS,
        *,
        settings: Settings | None = None,
        inspector: Inspector | None = None,
        lister: Lister | None = None,
        executor: Executor | None = None,
        clock: Callable[[], datetime] | None = None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_MIB * _MIB,
        metrics: Metrics | None = None,
        told: Told | None = None,
    ) -> None:
        """Serve the given composers, by XR kind.

        Without an executor, composing runs in process (tests may pass their own table, with
        composers that could not be sent to a worker); `function-aim` passes a `WorkerPool`.
        `settings` also say how often events may be sent (`told`, made from them by default).
        """
        settings = settings or Settings()
        self._executor: Executor = executor or InProcess(Composers(dict(composers), settings))
        if told is None:  # not `told or ...`: a Told that remembers nobody yet is falsy
            told = Told(
                warning_repeat_s=settings.warning_repeat_s,
                events_per_minute=settings.events_per_minute,
                capacity=settings.event_memory,
            )
        self._told = told
        self._inspector: Inspector = inspector or OrasInspector()
        self._lister: Lister = lister or OrasLister(OrasInspector())
        self._clock = clock or (lambda: datetime.now(UTC))
        self._max_request_bytes = max_request_bytes
        self._log = logging.get_logger()
        self.metrics = metrics or Metrics()

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: Context | None = None
    ) -> fnv1.RunFunctionResponse:
        """Compose one XR (the servicer's interface; the server itself calls `run_bytes`)."""
        return fnv1.RunFunctionResponse.FromString(await self.run_bytes(req.SerializeToString()))

    async def run_bytes(self, request: bytes) -> bytes:
        """Compose the XR of a serialized RunFunctionRequest into a serialized response.

        The request is parsed here only to answer with an error; composing parses it in the
        worker, where the time it takes is the worker's.

        Raises:
            UndecodableRequestError: the bytes are no RunFunctionRequest.
        """
        if len(request) > self._max_request_bytes:
            req, who = _parse(request)
            self._log.warning(
                "refused a request larger than --max-recv-message-size", bytes=len(request), **who
            )
            self.metrics.call(who["kind"], "too-large", 0.0)
            return _fatal(
                req,
                f"cannot compose {who['kind']} {who['xr']}: the request is "
                f"{len(request) / _MIB:.1f} MiB, more than the function's limit of "
                f"{self._max_request_bytes / _MIB:g} MiB; raise it with --max-recv-message-size "
                "(MiB) in the function's DeploymentRuntimeConfig",
            )
        call = Call(request, self._clock())
        started = time.perf_counter()
        try:
            outcome = await self._executor.run(call)
            if isinstance(outcome, Undecodable):
                raise UndecodableRequestError(outcome.error)
            if isinstance(outcome, AskRegistry):
                answer = await self._ask_registry(call, outcome.request)
                outcome = await self._answered(call, answer)
        except BudgetExceeded:
            self._count_failed(request, "timeout", started)
            return self._internal_error(
                request,
                "composing ran out of time; its worker was replaced",
                "composing took longer than the function's budget (--compose-budget) and was "
                "stopped (this is a bug; please report it with the XR's manifest)",
            )
        except WorkerLost:
            self._count_failed(request, "worker-lost", started)
            return self._internal_error(
                request,
                "the worker composing this XR died; it was replaced",
                "the worker process died (out of memory?) and was replaced; the next reconcile "
                "tries again",
            )
        if not isinstance(outcome, Composed):  # a step must not ask twice
            self._count_failed(request, "error", started)
            return self._internal_error(request, "inspected twice", "it asked to inspect twice")
        elapsed = time.perf_counter() - started
        self.metrics.call(outcome.kind, outcome.outcome, elapsed, outcome.events)
        return self._with_events(outcome, call.now)

    def _with_events(self, composed: Composed, now: datetime) -> bytes:
        """The response with the events worth sending (function/server/told.py) added."""
        news = composed.news
        if news is None:
            return composed.response
        telling = self._told.tell(news, now.timestamp())
        for reason, count in telling.suppressed.items():
            self.metrics.suppressed(reason, count)
        if telling.suppressed:
            self._log.debug(
                "events held back", kind=composed.kind, xr=news.xr, **dict(telling.suppressed)
            )
        told = results(telling.notices, telling.warnings)
        if not told:
            return composed.response
        # Serialized protobuf messages concatenated parse as one message merged from both, and
        # a repeated field's entries append: so the results join the worker's response without
        # parsing it again (the worker wrote none of its own on this path).
        more = fnv1.RunFunctionResponse(results=told).SerializeToString(deterministic=True)
        return composed.response + more

    async def _answered(self, call: Call, answer: Answer) -> Step:
        """The call's step with the registry's answer in.

        A listing too large to compose within the budget is no bug of the source: the step runs
        again with the listing given up (`ListingAnswer.given_up`), so the source says how far
        it got and how to narrow it (RegistryTooLarge) and records when it tried, instead of an
        error result that records nothing, after which every reconcile would list again.

        Raises:
            BudgetExceeded: a step ran out of time with no listing to give up.
            WorkerLost: the worker died.
        """
        try:
            return await self._executor.run(dataclasses.replace(call, answer=answer))
        except BudgetExceeded:
            if not isinstance(answer, ListingAnswer) or answer.stopped is not None:
                raise
        who = _parse(call.request)[1]
        self._log.warning("listing too large to compose within --compose-budget", **who)
        for _ in answer.answers:  # counted "ok" when listed; given up now, as the help says
            self.metrics.listing(Reason.REGISTRY_TOO_LARGE)
        given_up = answer.given_up(
            "what one call composes within the function's compose budget", "--compose-budget"
        )
        return await self._executor.run(dataclasses.replace(call, answer=given_up))

    async def _ask_registry(self, call: Call, question: Question) -> Answer:
        """The registry's answer to what the call's first step asked, counted and logged."""
        who = _parse(call.request)[1]
        if isinstance(question, InspectionRequest):
            inspection = await self._inspector.inspect(question)
            self.metrics.inspection(
                inspection.kind.value if isinstance(inspection, RegistryFailure) else "ok"
            )
            self._log.info(
                "inspected image",
                image=str(question.reference),
                outcome=type(inspection).__name__,
                **who,
            )
            return inspection
        listing = await self._lister.list_images(question)
        for answer in listing.answers:
            self.metrics.listing(answer.failure.value if answer.failure else "ok")
        if listing.stopped is not None:  # given up as a whole: every query with it
            for _ in question.queries:
                self.metrics.listing(Reason.REGISTRY_TOO_LARGE)
        self._log.info(
            "listed registry",
            queries=len(question.queries),
            failed=sum(a.failure is not None for a in listing.answers),
            calls=listing.calls,
            given_up=listing.stopped is not None,
            **who,
        )
        return listing

    def _count_failed(self, request: bytes, outcome: str, started: float) -> None:
        self.metrics.call(_parse(request)[1]["kind"], outcome, time.perf_counter() - started)

    def _internal_error(self, request: bytes, log_line: str, what: str) -> bytes:
        """A fatal result naming the XR, for a call the function itself failed."""
        req, who = _parse(request)
        self._log.error(log_line, **who)
        return _fatal(
            req,
            f"internal error in {FUNCTION_NAME} while composing {who['kind']} {who['xr']}: {what}",
        )

    def close(self) -> None:
        """Stop the executor's workers."""
        self._executor.close()


def _identity(req: fnv1.RunFunctionRequest) -> tuple[str, str]:
    """The XR's kind and `namespace/name`, read without converting the whole request."""
    fields = req.observed.composite.resource.fields
    meta = fields["metadata"].struct_value.fields if "metadata" in fields else {}
    name = meta["name"].string_value if "name" in meta else ""
    namespace = meta["namespace"].string_value if "namespace" in meta else ""
    kind = fields["kind"].string_value if "kind" in fields else ""
    return kind, f"{namespace}/{name}" if namespace else name


def _parse(request: bytes) -> tuple[fnv1.RunFunctionRequest, dict[str, str]]:
    """The request, and what a log line says of it (for the rare answers that need them)."""
    try:
        req = fnv1.RunFunctionRequest.FromString(request)
    except DecodeError as e:
        raise UndecodableRequestError(str(e)) from e
    kind, name = _identity(req)
    return req, {"tag": req.meta.tag, "kind": kind, "xr": name}


def _fatal(req: fnv1.RunFunctionRequest, message: str) -> bytes:
    rsp = response.to(req)
    response.fatal(rsp, message)
    return rsp.SerializeToString()
