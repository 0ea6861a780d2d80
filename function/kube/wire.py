"""The protobuf adapter: a RunFunctionRequest in as `Observed`, a `Composition` onto the response.

With `convert` (the conversions themselves) and the server this is the only code that touches
protobuf.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from pydantic import JsonValue

from function.api.meta import Manifest
from function.kube.claims import as_claim, is_composite_of_claim
from function.kube.contract import Composition, Notice, Observed
from function.kube.convert import ObjectCache, RequiredObjects, struct_to_dict, update_struct
from function.kube.precondition import Identity, status_precondition
from function.rules.status import ConditionStatus
from function.settings import Settings


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


def apply_composition(
    rsp: fnv1.RunFunctionResponse, composition: Composition, observed: Observed | None = None
) -> bool:
    """Write a composer's decisions onto the response, leaving other steps' resources alone.

    Its events (`results`) are the server's to add. Given the call's `observed` state, the
    XR's status write is made conditional on the version observed where that is safe
    (function/kube/precondition.py), so a reconcile of a stale copy writes nothing; whether it
    was is returned.
    """
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
    guarded = observed is not None and require_observed_version(rsp, observed)
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
    if composition.ttl_seconds is not None:
        rsp.meta.ttl.FromSeconds(max(composition.ttl_seconds, 1))
    return guarded


def require_observed_version(rsp: fnv1.RunFunctionResponse, observed: Observed) -> bool:
    """Make the XR's status write conditional on the observed version, where that is safe.

    Judged from every resource the response composes, other steps' too
    (function/kube/precondition.py); whether it was made conditional.
    """
    desired = {name: _identity(r.resource) for name, r in rsp.desired.resources.items()}
    version = status_precondition(observed, desired)
    if version is None:
        return False
    update_struct(rsp.desired.composite.resource, {"metadata": {"resourceVersion": version}})
    return True


def _identity(resource: struct_pb2.Struct) -> Identity:
    """A desired resource's apiVersion, kind, name and namespace, read without converting it."""
    fields = resource.fields
    meta = fields["metadata"].struct_value.fields if "metadata" in fields else {}
    return (
        _string(fields, "apiVersion"),
        _string(fields, "kind"),
        _string(meta, "name"),
        _string(meta, "namespace"),
    )


def _string(fields: Mapping[str, struct_pb2.Value], key: str) -> str | None:
    value = fields.get(key)
    return value.string_value if value is not None and value.HasField("string_value") else None


def results(notices: Sequence[Notice], warnings: Sequence[str]) -> list[fnv1.Result]:
    """The events: what changed, then what failed or degraded.

    Not part of `apply_composition`: which of them a call tells depends on what the server told
    the XR before (function/server/told.py), which only the server's process remembers.
    """
    told = [
        # Crossplane makes a result's reason the event's (else ComposeResources).
        fnv1.Result(severity=fnv1.SEVERITY_NORMAL, message=n.message)
        if n.warning_reason is None
        else fnv1.Result(severity=fnv1.SEVERITY_WARNING, message=n.message, reason=n.warning_reason)
        for n in notices
    ]
    # `response.warning`'s shape: no reason, so the event's is ComposeResources.
    return told + [fnv1.Result(severity=fnv1.SEVERITY_WARNING, message=m) for m in warnings]
