"""AIMService → KServe InferenceService on AMD GPU nodes.

This is the first slice of the AIMService behaviour: a model image plus a named template. Model
resolution by reference, template auto-selection, overrides, caching and routing build on the
same steps (resolve, merge, build) in later issues.
"""

from __future__ import annotations

from function import naming
from function.api.common import ResolvedReference
from function.api.hardware import DEFAULT_GPU_RESOURCE, GpuRequirements
from function.api.meta import Kind
from function.api.service import AIMServiceSpec, AIMServiceStatus, ServiceStatusValue
from function.api.template import ServiceTemplateSpec
from function.build import Manifest
from function.build.kserve import build_inference_service
from function.errors import InvalidSpecError
from function.gpu import UnknownGpuModelError, device_ids
from function.merge import gpu_default_resources, merge_env, merge_resources
from function.resolve import Absent, Found, Lookup, Pending
from function.state import (
    Composition,
    Condition,
    ConditionStatus,
    Desired,
    Observed,
    parse_spec,
)
from function.status import ConditionType, Reason, inference_service_ready

INFERENCE_SERVICE = "inference-service"
"""Composition-resource name of the InferenceService."""


def compose_service(observed: Observed) -> Composition:
    """Resolve the service's template and compose its InferenceService once it can."""
    spec = parse_spec(observed.composite, AIMServiceSpec)
    isvc_name = _inference_service_name(observed)
    comp = Composition()

    if spec.model.image is None:
        # TODO(issue 4): resolve spec.model.ref through AIMModel, then AIMClusterModel, and
        # compose the AIMModel of spec.model.custom.
        field = "spec.model.ref" if spec.model.ref is not None else "spec.model.custom"
        return _failed(
            comp,
            ConditionType.MODEL_READY,
            Reason.UNSUPPORTED,
            f"{field}: serving a model this way is not supported by this version of "
            "function-aim; set spec.model.image to the model's container image",
        )
    if spec.template is None or spec.template.name is None:
        # TODO(issue 4): auto-select among the model's Available templates.
        return _failed(
            comp,
            ConditionType.TEMPLATE_READY,
            Reason.TEMPLATE_NOT_SPECIFIED,
            "spec.template.name: template auto-selection is not supported by this version of "
            "function-aim; name an AIMServiceTemplate or AIMClusterServiceTemplate",
        )

    lookup = Lookup(
        key="template",
        name=spec.template.name,
        namespace=observed.namespace,
        namespaced_kind=Kind.SERVICE_TEMPLATE,
        cluster_kind=Kind.CLUSTER_SERVICE_TEMPLATE,
    )
    comp.requirements.extend(lookup.requirements())
    match lookup.resolve(observed.required):
        case Pending():
            comp.status = _status(ServiceStatusValue.PENDING)
            comp.conditions.append(
                Condition(
                    ConditionType.TEMPLATE_READY,
                    ConditionStatus.UNKNOWN,
                    Reason.RESOLVING,
                    f"looking up template {spec.template.name!r}",
                )
            )
            return comp
        case Absent():
            # TODO(issue 4): keep an InferenceService that already exists (gate, never tear down).
            return _failed(
                comp,
                ConditionType.TEMPLATE_READY,
                Reason.TEMPLATE_NOT_FOUND,
                f"spec.template.name: neither AIMServiceTemplate {spec.template.name!r} in "
                f"namespace {observed.namespace!r} nor AIMClusterServiceTemplate "
                f"{spec.template.name!r} exists; create it or name an existing template",
            )
        case Found() as found:
            return _compose_inference_service(observed, spec, found, isvc_name, comp)


def _compose_inference_service(
    observed: Observed,
    spec: AIMServiceSpec,
    found: Found,
    isvc_name: str,
    comp: Composition,
) -> Composition:
    template_name = str(_get(found.manifest, "metadata", "name"))
    template_ref = ResolvedReference(
        name=template_name,
        namespace=observed.namespace if found.kind == Kind.SERVICE_TEMPLATE else None,
        scope=found.scope,
        kind=found.kind,
    )
    try:
        template = parse_spec(found.manifest, ServiceTemplateSpec)
        gpu = template.hardware.gpu if template.hardware else None
        ids = _device_ids(gpu)
    except (InvalidSpecError, UnknownGpuModelError) as e:
        return _failed(
            comp,
            ConditionType.TEMPLATE_READY,
            Reason.TEMPLATE_INVALID,
            f"{found.kind} {template_name!r} cannot be used: {e}",
        )

    gpu_resource = gpu.resource_name if gpu else DEFAULT_GPU_RESOURCE
    gpu_count = gpu.requests if gpu and gpu.requests is not None else 0
    manifest = build_inference_service(
        name=isvc_name,
        namespace=observed.namespace,
        labels={
            "app.kubernetes.io/name": "aim",
            "app.kubernetes.io/component": "inference",
            "app.kubernetes.io/managed-by": "aim-crossplane",
            "aim.silogen.ai/service": naming.sanitize_part(observed.name),
            "aim.silogen.ai/template": naming.sanitize_part(template_name),
        },
        image=str(spec.model.image),
        replicas=spec.replicas,
        resources=merge_resources(
            gpu_default_resources(gpu_resource, gpu_count), template.resources, spec.resources
        ),
        env=merge_env(template, spec.env),
        gpu_device_ids=ids,
        image_pull_secrets=[s.name for s in spec.image_pull_secrets or ()],
        service_account_name=spec.service_account_name,
    )
    ready = inference_service_ready(observed.resources.get(INFERENCE_SERVICE))
    comp.resources[INFERENCE_SERVICE] = Desired(manifest, ready=ready)
    comp.status = _status(
        ServiceStatusValue.RUNNING if ready else ServiceStatusValue.STARTING,
        resolved_template=template_ref,
        inference_service=isvc_name,
    )
    comp.conditions += [
        Condition(
            ConditionType.TEMPLATE_READY,
            ConditionStatus.TRUE,
            Reason.RESOLVED,
            f"using {found.kind} {template_name!r}",
        ),
        Condition(
            ConditionType.INFERENCE_SERVICE_READY,
            ConditionStatus.TRUE if ready else ConditionStatus.FALSE,
            Reason.READY if ready else Reason.CREATING,
            f"InferenceService {isvc_name!r} "
            + ("is ready" if ready else "is not ready yet (KServe has not reported Ready)"),
        ),
    ]
    return comp


def _device_ids(gpu: GpuRequirements | None) -> tuple[str, ...]:
    """Device ids of every GPU model the template accepts; none pins no GPU model."""
    if gpu is None:
        return ()
    models = [gpu.model] if gpu.model else list(gpu.models or ())
    return tuple(sorted({i for m in models for i in device_ids(m)}))


def _inference_service_name(observed: Observed) -> str:
    try:
        return naming.inference_service_name(observed.name, observed.namespace)
    except naming.NameTooLongError as e:
        raise InvalidSpecError(field="metadata.namespace", problem=str(e)) from e


def _failed(
    comp: Composition, condition: ConditionType, reason: Reason, message: str
) -> Composition:
    """The user must change something: say what in a condition and a warning event."""
    comp.status = _status(ServiceStatusValue.FAILED)
    comp.conditions.append(Condition(condition, ConditionStatus.FALSE, reason, message))
    comp.warnings.append(message)
    return comp


def _status(
    value: ServiceStatusValue,
    *,
    resolved_template: ResolvedReference | None = None,
    inference_service: str | None = None,
) -> Manifest:
    status = AIMServiceStatus(
        status=value, resolved_template=resolved_template, inference_service=inference_service
    )
    return status.model_dump(mode="json", exclude_none=True)


def _get(manifest: Manifest, *path: str) -> object:
    node: object = manifest
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node
