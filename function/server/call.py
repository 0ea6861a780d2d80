"""One RunFunction call from request bytes to response bytes: the part that runs in a worker.

Everything here is synchronous and CPU-bound (parsing the request, composing, writing the
response), and everything crossing in or out is plain bytes and picklable values, so `fn.py` can
run it in a worker process with a time budget. The single network call of the function, the
registry inspection or listing, is not made here: a step that needs it returns the composer's
question (`AskRegistry`), `fn.py` awaits the registry, and the step runs again with the answer.

This is also the single place where a composer's errors become results, so a bad XR (or a bug)
costs only that XR's reconcile and never the server or any other XR.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError

from function.api.definitions import DEFINITIONS
from function.compose import Composer
from function.errors import FunctionError, Severity
from function.kube.claims import COMPOSITE_PREFIX
from function.kube.contract import AskRegistry, Composition, Observed
from function.kube.convert import OBJECTS
from function.kube.counted import Counted
from function.kube.objects import uid_of
from function.kube.transitions import carried
from function.kube.wire import apply_composition, read_observed
from function.registry.question import Answer
from function.rules.text import cut
from function.server.recheck import recheck_after
from function.server.told import News
from function.settings import Settings

FUNCTION_NAME: Final = "function-aim"
"""The Function package name Compositions refer to."""


@dataclass(frozen=True)
class Call:
    """One call's inputs: the request as received, the time of the call, the registry's answer."""

    request: bytes
    now: datetime
    answer: Answer | None = None


@dataclass(frozen=True)
class Composed:
    """A composed (or refused) call: its response, what the server counts and what it may tell.

    `response` is the serialized RunFunctionResponse; the server adds the events it chooses from
    `news` to it, and counts the call in its `metrics`.
    """

    response: bytes
    kind: str = ""
    outcome: str = "composed"
    """composed; invalid (a FunctionError); refused (no such kind or claim, or the wrong scope);
    error (a bug)."""
    events: tuple[Counted, ...] = ()
    """What the composer reported for the metrics (`Composition.counted`)."""
    news: News | None = None
    """What the composed XR may be told, for the server to choose from and add to `response`;
    None when the call failed or was refused (its results are in `response` already), or when
    Crossplane will call again and drop this response (`kept`)."""


@dataclass(frozen=True)
class Undecodable:
    """The bytes are no RunFunctionRequest (gRPC hands them over unparsed)."""

    error: str


Step = AskRegistry | Composed | Undecodable


@dataclass(frozen=True)
class Composers:
    """What a worker composes with: the table of composers by XR kind, and the settings."""

    by_kind: dict[str, Composer]
    """A plain dict: the MappingProxyType of `COMPOSERS` cannot be pickled into a worker."""
    settings: Settings


def step(composers: Composers, call: Call) -> Step:
    """Compose the XR in `call.request`, or say what the registry must be asked first."""
    try:
        req = fnv1.RunFunctionRequest.FromString(call.request)
    except DecodeError as e:
        return Undecodable(str(e))
    return _compose(composers, call, req)


def _compose(composers: Composers, call: Call, req: fnv1.RunFunctionRequest) -> Step:
    rsp = response.to(req)
    observed = dataclasses.replace(
        read_observed(req, composers.settings, OBJECTS), now=call.now
    ).answered(call.answer)
    log = logging.get_logger().bind(tag=req.meta.tag, kind=observed.kind, xr=display_name(observed))

    composer = composers.by_kind.get(observed.kind)
    refusal = orphan_composite(observed) or scope_mismatch(observed)
    if refusal:
        response.fatal(rsp, refusal)
        return Composed(rsp.SerializeToString(deterministic=True), observed.kind, "refused")
    if composer is None:
        known = ", ".join(sorted(composers.by_kind))
        response.fatal(
            rsp,
            f"cannot compose kind {observed.kind!r}: {FUNCTION_NAME} composes {known}; "
            "check the Composition's compositeTypeRef",
        )
        return Composed(rsp.SerializeToString(deterministic=True), observed.kind, "refused")
    try:
        composition = composer(observed)
        if isinstance(composition, AskRegistry):
            return composition
    except FunctionError as e:
        log.info("cannot compose", error=str(e))
        report = response.fatal if e.severity is Severity.FATAL else response.warning
        report(rsp, f"cannot compose {observed.kind} {display_name(observed)}: {e}")
        return Composed(rsp.SerializeToString(deterministic=True), observed.kind, "invalid")
    except Exception as e:  # a bug must fail this XR's reconcile only, not the call or server
        log.exception("bug while composing")
        response.fatal(
            rsp,
            f"internal error in {FUNCTION_NAME} while composing {observed.kind} "
            f"{display_name(observed)}: {type(e).__name__}: {e} (this is a bug; please "
            "report it with the function's log)",
        )
        return Composed(rsp.SerializeToString(deterministic=True), observed.kind, "error")

    if composition.ttl_seconds is None:
        composition.ttl_seconds = recheck_after(
            observed, composers.settings, ready=composition.ready
        )
    guarded = apply_composition(rsp, composition, observed)
    log.debug(
        "composed",
        resources=sorted(composition.resources),
        required=len(req.required_resources),
        headline=composition.status.get("status"),
    )
    # The events are the server's to choose (function/server/told.py): what the XR was told
    # before is remembered there, as no worker sees every call of an XR.
    news = (
        News(
            uid=uid_of(observed.composite) or "",
            xr=display_name(observed),
            conditions=tuple(composition.conditions),
            carried=carried(observed.composite),
            warnings=tuple(composition.warnings),
            guarded=guarded,
        )
        if kept(req, composition)
        else None
    )
    return Composed(
        rsp.SerializeToString(deterministic=True),
        observed.kind,
        events=tuple(composition.counted),
        news=news,
    )


def kept(req: fnv1.RunFunctionRequest, composition: Composition) -> bool:
    """Whether Crossplane keeps this call's response, rather than calling again.

    Crossplane calls until what the function requires is what the call was given, and uses only
    the last response: the results of one that asks for anything else are never events. So such
    a call tells nothing, and nothing of it is remembered as told. Names are compared, not
    contents: core 2.4 also calls again when an object it seeded the call with changed before it
    fetched it anew, and that rare call's events are then held back as told.
    """
    return set(req.required_resources) == {r.name for r in composition.requirements}


def orphan_composite(observed: Observed) -> str | None:
    """Why a claims-flavour composite cannot be composed: it names no claim (so no namespace)."""
    if not (observed.claims and not observed.namespace):
        return None
    return (
        f"{COMPOSITE_PREFIX}{observed.kind} {observed.name} belongs to no claim (its "
        f"crossplane.io/claim-name and -namespace labels and spec.claimRef name none): in the "
        f"claims flavour create an {observed.kind} in a namespace, and Crossplane makes its "
        "composite"
    )


_NAME_MAX: Final = 253
"""What a message shows of a name or namespace (an object name's limit): they come from users."""
SCOPES: Final = {d.kind.value: d.scope for d in DEFINITIONS}
"""Each AIM kind's scope, as its XRD declares it."""


def scope_mismatch(observed: Observed) -> str | None:
    """Why the XR's metadata contradicts its kind's scope; None when it agrees (or no AIM kind).

    Composers read `Observed.namespace` as where the XR lives: the namespace whose Secrets,
    runtime config and templates it may use. The kind decides that, not the object, so a
    cluster-scoped kind carrying a namespace (or a namespaced one without) is refused rather than
    composed with another namespace's objects. A claim's composite is checked as the namespaced
    XR it stands for, whose namespace is its claim's (function/kube/claims.py).
    """
    scope = SCOPES.get(observed.kind)
    kind, name, namespace = (
        observed.kind,
        cut(observed.name, _NAME_MAX),
        cut(observed.namespace, _NAME_MAX),
    )
    if scope == "Cluster" and namespace:
        twin = kind.replace("AIMCluster", "AIM", 1)
        other = f", or make it an {twin} in namespace {namespace}" if twin in SCOPES else ""
        return (
            f"{kind} {name} carries metadata.namespace {namespace!r}, but {kind} is "
            f"cluster-scoped (scope Cluster in its XRD): remove metadata.namespace{other}"
        )
    if scope == "Namespaced" and not namespace:
        twin = kind.replace("AIM", "AIMCluster", 1)
        other = f", or make it an {twin} for the whole cluster" if twin in SCOPES else ""
        return (
            f"{kind} {name} has no metadata.namespace, but {kind} is namespaced (scope "
            f"Namespaced in its XRD): set metadata.namespace to the namespace it serves{other}"
        )
    return None


def display_name(observed: Observed) -> str:
    """`namespace/name` of a namespaced XR, `name` of a cluster-scoped one."""
    return f"{observed.namespace}/{observed.name}" if observed.namespace else observed.name
