"""The typed boundary between the gRPC request/response and the pure composers.

`read_observed` turns a RunFunctionRequest into an `Observed` value; `apply_composition` writes a
composer's `Composition` onto the response. With `convert` (the conversions themselves) and the
server this is the only code that touches protobuf, so composers deal in plain dicts and
dataclasses and are trivially testable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from pydantic import BaseModel, JsonValue, ValidationError

from function.api.meta import Manifest
from function.api.model import ModelStatusValue
from function.api.service import ServiceStatusValue
from function.api.template import TemplateStatusValue
from function.errors import InvalidSpecError
from function.kube.claims import as_claim, is_composite_of_claim, strip_legacy_machinery
from function.kube.convert import (
    OBJECTS,
    ObjectCache,
    RequiredObjects,
    struct_to_dict,
    update_struct,
)
from function.kube.counted import Counted
from function.registry.inspect import InspectionOutcome, InspectionRequest
from function.registry.listing import ListingAnswer, ListingRequest
from function.registry.question import Answer, Question
from function.rules.status import Condition, ConditionStatus
from function.settings import Settings

SpecT = TypeVar("SpecT", bound=BaseModel)
T = TypeVar("T")


@dataclass(frozen=True)
class Observed:
    """What Crossplane tells a composer about the world on this call.

    `required` holds only the requirements Crossplane has resolved: a name that is absent was not
    fetched yet, a name mapped to `()` was fetched and matched nothing. The two must never be
    confused (the first means "wait", the second can mean "the user named something missing").
    """

    composite: Manifest
    resources: Mapping[str, Manifest] = field(default_factory=dict)
    required: Mapping[str, tuple[Manifest, ...]] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    """The time of this call: backoff windows are measured against it (tests pin it)."""
    settings: Settings = field(default_factory=Settings)
    inspection: InspectionOutcome | None = None
    """The registry's answer, when `fn.py` inspected an image for this call."""
    listing: ListingAnswer | None = None
    """The registry's repositories and tags, when `fn.py` listed them for this call."""
    claims: bool = False
    """The XR is a claim's composite (the claims flavour): `composite` shows it as the namespaced
    XR it stands for (function/kube/claims.py)."""

    def answered(self, answer: Answer | None) -> Observed:
        """This call with the registry's answer where the composer that asked reads it."""
        if isinstance(answer, ListingAnswer):
            return dataclasses.replace(self, listing=answer)
        return dataclasses.replace(self, inspection=answer)

    @property
    def kind(self) -> str:
        """Kind of the composite resource (XR)."""
        return str(self.composite.get("kind", ""))

    @property
    def metadata(self) -> Mapping[str, JsonValue]:
        """The XR's metadata, empty if absent."""
        meta = self.composite.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        """The XR's name."""
        return str(self.metadata.get("name", ""))

    @property
    def namespace(self) -> str:
        """The XR's namespace; empty for cluster-scoped XRs."""
        return str(self.metadata.get("namespace", ""))


READY_HEADLINES = frozenset(
    {ServiceStatusValue.RUNNING, ModelStatusValue.READY, TemplateStatusValue.AVAILABLE}
)
"""AIM headlines (status.status) that make the XR's Ready condition True; any other is False."""


@dataclass(frozen=True)
class Notice:
    """An event for a condition that changed (function/kube/transitions.py)."""

    message: str
    warning_reason: str | None = None
    """Set for a condition that warns (`Condition.warn`): a Warning event with this reason."""


@dataclass(frozen=True)
class Requirement:
    """Objects the composer needs Crossplane to fetch: one by name, or every one of a kind.

    With `match_name` unset Crossplane lists every object of the kind (in `namespace`, or in the
    whole cluster for cluster-scoped kinds).
    """

    name: str
    api_version: str
    kind: str
    match_name: str | None = None
    namespace: str | None = None
    match_labels: Mapping[str, str] | None = None


@dataclass(frozen=True)
class AskRegistry:
    """A composer's answer when it needs a registry's answer first (`function.registry.question`).

    The function asks the registry (its only network calls, made outside the composer) and
    calls the composer again with the answer in `Observed.inspection` or `Observed.listing`.
    """

    request: Question


@dataclass(frozen=True)
class Inspect(AskRegistry):
    """Asking for an image's labels (a model's); the answer is `Observed.inspection`."""

    request: InspectionRequest


@dataclass(frozen=True)
class ListRegistry(AskRegistry):
    """Asking for a registry's repositories and tags (a model source's): `Observed.listing`."""

    request: ListingRequest


@dataclass(frozen=True)
class Desired:
    """A composed resource the composer wants to exist, and whether it is ready."""

    manifest: Manifest
    ready: bool


@dataclass
class Composition:
    """Everything one composer call decides. Built up by the composer, applied by `fn.py`."""

    resources: dict[str, Desired] = field(default_factory=dict)
    status: Manifest = field(default_factory=dict)
    conditions: list[Condition] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    """Events for conditions that changed (function/kube/transitions.py)."""
    ttl_seconds: int | None = None
    """Call again after this long (a backoff window ending, nodes to re-check); None: default."""
    propagated_labels: dict[str, str] = field(default_factory=dict)
    """Labels of the XR to add to every composed object (and Jobs' pods) that lacks them."""
    counted: list[Counted] = field(default_factory=list)
    """What the function's metrics count of this call (function/kube/counted.py)."""

    @property
    def ready(self) -> bool | None:
        """Whether the AIM headline (`status.status`) is a ready one; None for kinds without one."""
        headline = self.status.get("status")
        return headline in READY_HEADLINES if isinstance(headline, str) else None


def keep(current: Manifest, *, ready: bool) -> Desired:
    """An existing composed object as it is (identity and spec), to keep it from being deleted.

    Dropping an object from the desired state deletes it; composers use this when an object's
    inputs went missing but the object itself must survive until they are back.
    """
    meta = current.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    kept_meta: Manifest = {
        k: meta[k] for k in ("name", "namespace", "labels", "annotations") if k in meta
    }
    manifest: Manifest = {
        "apiVersion": current.get("apiVersion"),
        "kind": current.get("kind"),
        "metadata": kept_meta,
    }
    if "spec" in current:
        manifest["spec"] = current["spec"]
    return Desired(manifest, ready=ready)


def read_observed(
    req: fnv1.RunFunctionRequest,
    settings: Settings | None = None,
    objects: ObjectCache | None = None,
) -> Observed:
    """Convert the request's observed state to plain values; required objects convert on use."""
    composite = struct_to_dict(req.observed.composite.resource)
    return Observed(
        settings=settings or Settings(),
        composite=as_claim(composite),
        resources={
            name: objects.convert(r.resource) if objects else struct_to_dict(r.resource)
            for name, r in req.observed.resources.items()
        },
        required=RequiredObjects(req.required_resources, objects),
        claims=is_composite_of_claim(composite),
    )


_STATUS = {
    ConditionStatus.TRUE: fnv1.STATUS_CONDITION_TRUE,
    ConditionStatus.FALSE: fnv1.STATUS_CONDITION_FALSE,
    ConditionStatus.UNKNOWN: fnv1.STATUS_CONDITION_UNKNOWN,
}


def _with_labels(manifest: Manifest, extra: Mapping[str, str]) -> Manifest:
    """`manifest` with `extra` labels it does not already have (a Job's pod template too)."""
    if not extra:
        return manifest
    out = dict(manifest)
    out["metadata"] = _labelled(out.get("metadata"), extra)
    spec = out.get("spec")
    template = spec.get("template") if out.get("kind") == "Job" and isinstance(spec, dict) else None
    if isinstance(spec, dict) and isinstance(template, dict):
        out["spec"] = {
            **spec,
            "template": {**template, "metadata": _labelled(template.get("metadata"), extra)},
        }
    return out


def _labelled(metadata: JsonValue, extra: Mapping[str, str]) -> Manifest:
    meta = dict(metadata) if isinstance(metadata, dict) else {}
    labels = meta.get("labels")
    own = labels if isinstance(labels, dict) else {}
    meta["labels"] = {**extra, **own}
    return meta


def apply_composition(rsp: fnv1.RunFunctionResponse, composition: Composition) -> None:
    """Write a composer's decisions onto the response, leaving other steps' resources alone."""
    for req in composition.requirements:
        response.require_resources(
            rsp,
            req.name,
            req.api_version,
            req.kind,
            match_name=req.match_name,
            match_labels=dict(req.match_labels) if req.match_labels else None,
            namespace=req.namespace,
        )
    for name, desired in sorted(composition.resources.items()):
        target = rsp.desired.resources[name]
        update_struct(
            target.resource, _with_labels(desired.manifest, composition.propagated_labels)
        )
        target.ready = fnv1.READY_TRUE if desired.ready else fnv1.READY_FALSE
    if composition.status:
        update_struct(rsp.desired.composite.resource, {"status": composition.status})
    ready = composition.ready
    if ready is not None:
        # Without this Crossplane calls an XR Ready as soon as everything it composed is ready,
        # so a Pending service that has composed nothing yet would read Ready=True.
        rsp.desired.composite.ready = fnv1.READY_TRUE if ready else fnv1.READY_FALSE
    for condition in composition.conditions:
        c = fnv1.Condition(
            type=condition.type, status=_STATUS[condition.status], reason=condition.reason
        )
        if condition.message:
            c.message = condition.message
        rsp.conditions.append(c)
    _results(rsp, composition)
    if composition.ttl_seconds is not None:
        rsp.meta.ttl.FromSeconds(max(composition.ttl_seconds, 1))


def _results(rsp: fnv1.RunFunctionResponse, composition: Composition) -> None:
    """The events: what changed, then what failed or degraded."""
    for notice in composition.notices:
        if notice.warning_reason is None:
            response.normal(rsp, notice.message)
        else:
            # Crossplane makes a result's reason the event's (else ComposeResources).
            rsp.results.append(
                fnv1.Result(
                    severity=fnv1.SEVERITY_WARNING,
                    message=notice.message,
                    reason=notice.warning_reason,
                )
            )
    for message in composition.warnings:
        response.warning(rsp, message)


def parse_spec(manifest: Manifest, model: type[SpecT]) -> SpecT:
    """Parse an AIM object's spec, reporting the first problem with its field path.

    Used for the XR and for the AIM objects it refers to. The API server has already validated
    them against their XRDs, so this fails only when the two disagree or an object bypassed
    admission (render, tests); the message still names the field.
    """
    return OBJECTS.derived(
        manifest, f"spec:{model.__qualname__}", lambda: _parse_spec(manifest, model)
    )


def _parse_spec(manifest: Manifest, model: type[SpecT]) -> SpecT:
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        raise InvalidSpecError(field="spec", problem="is missing or not an object")
    # Every XR carries Crossplane's own machinery (compositionRef, resourceRefs, ...) under
    # spec.crossplane, or at the top of the spec for v1 composites and claims; it is not part
    # of the AIM API.
    ours = strip_legacy_machinery({k: v for k, v in spec.items() if k != "crossplane"})
    try:
        return model.model_validate(ours)
    except ValidationError as e:
        first = e.errors()[0]
        path = ".".join(["spec", *(str(p) for p in first["loc"])])
        problem = first["msg"].removeprefix("Value error, ")  # our own validators' messages
        raise InvalidSpecError(field=path, problem=problem[:1].lower() + problem[1:]) from e


def parse_status(manifest: Manifest, model: type[SpecT]) -> SpecT | None:
    """An AIM object's status as far as this function wrote it; None when it cannot be read.

    Crossplane and other writers add fields (conditions, for one) that the model does not know;
    those are left out rather than failing the parse.
    """
    return OBJECTS.derived(
        manifest, f"status:{model.__qualname__}", lambda: _parse_status(manifest, model)
    )


def _parse_status(manifest: Manifest, model: type[SpecT]) -> SpecT | None:
    status = manifest.get("status")
    if not isinstance(status, dict):
        return None
    known = {f.alias or name for name, f in model.model_fields.items()}
    try:
        return model.model_validate({k: v for k, v in status.items() if k in known})
    except ValidationError:
        return None
