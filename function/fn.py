"""The gRPC servicer: read the request, hand the XR to its kind's composer, write the response.

This is the single place where a composer's errors become results, so a bad XR (or a bug) costs
only that XR's reconcile and never the server or any other XR.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import grpc
import structlog
from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from function.compose import COMPOSERS, Composer
from function.compose.model import MODEL_KINDS, inspection_request
from function.errors import FunctionError, Severity
from function.registry.inspect import Inspector
from function.registry.oras import OrasInspector
from function.settings import Settings
from function.state import Observed, apply_composition, read_observed

FUNCTION_NAME: Final = "function-aim"
"""The Function package name Compositions refer to."""

Context = grpc.aio.ServicerContext[fnv1.RunFunctionRequest, fnv1.RunFunctionResponse]


class FunctionRunner(grpcv1.FunctionRunnerServiceServicer):
    """Serves RunFunction for every AIM kind."""

    def __init__(
        self,
        composers: Mapping[str, Composer] = COMPOSERS,
        *,
        settings: Settings | None = None,
        inspector: Inspector | None = None,
    ) -> None:
        """Serve the given composers, by XR kind (tests may pass their own table and inspector)."""
        self._composers = composers
        self._settings = settings or Settings()
        self._inspector: Inspector = inspector or OrasInspector()
        self._log = logging.get_logger()

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: Context | None = None
    ) -> fnv1.RunFunctionResponse:
        """Compose one XR."""
        rsp = response.to(req)
        observed = read_observed(req, self._settings)
        log = self._log.bind(tag=req.meta.tag, kind=observed.kind, xr=_display_name(observed))

        composer = self._composers.get(observed.kind)
        if composer is None:
            known = ", ".join(sorted(self._composers))
            response.fatal(
                rsp,
                f"cannot compose kind {observed.kind!r}: {FUNCTION_NAME} composes {known}; "
                "check the Composition's compositeTypeRef",
            )
            return rsp
        try:
            observed = await self._inspect(observed, log)
            composition = composer(observed)
        except FunctionError as e:
            log.info("cannot compose", error=str(e))
            report = response.fatal if e.severity is Severity.FATAL else response.warning
            report(rsp, f"cannot compose {observed.kind} {_display_name(observed)}: {e}")
            return rsp
        except Exception as e:  # a bug must fail this XR's reconcile only, not the call or server
            log.exception("bug while composing")
            response.fatal(
                rsp,
                f"internal error in {FUNCTION_NAME} while composing {observed.kind} "
                f"{_display_name(observed)}: {type(e).__name__}: {e} (this is a bug; please "
                "report it with the function's log)",
            )
            return rsp

        if composition.ttl_seconds is None:
            # Kinds without a headline (runtime configs) wait for nothing.
            composition.ttl_seconds = (
                self._settings.waiting_recheck_s
                if composition.ready is False
                else self._settings.ready_recheck_s
            )
        generation = observed.metadata.get("generation")
        if isinstance(generation, int):
            # Every kind says which spec its status describes, so GitOps tools can tell a status
            # that is not caught up yet from a current one.
            composition.status["observedGeneration"] = generation
        apply_composition(rsp, composition)
        log.debug("composed", resources=sorted(composition.resources))
        return rsp

    async def _inspect(self, observed: Observed, log: structlog.stdlib.BoundLogger) -> Observed:
        """Read a model image's labels from its registry, if this call needs them.

        The one network call of the function: awaited here, off the composers, with the
        inspector's own timeout, so a slow registry holds up only this XR's reconcile.
        """
        if observed.kind not in MODEL_KINDS:
            return observed
        request = inspection_request(observed)
        if request is None:
            return observed
        outcome = await self._inspector.inspect(request)
        log.info("inspected image", image=str(request.reference), outcome=type(outcome).__name__)
        return dataclasses.replace(observed, inspection=outcome)


def _display_name(observed: Observed) -> str:
    return f"{observed.namespace}/{observed.name}" if observed.namespace else observed.name
