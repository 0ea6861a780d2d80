"""The KServe InferenceService of a service: its model's image with the template's profile.

Precedence, lowest first. Resources: per-GPU defaults, the model's, the template's, the
template's `hardware.cpu` (a derived template's carries the service's `overrides.hardware.cpu`),
the service's; a CPU or memory request without a limit is its own limit (`function.rules.merge`).
Environment: AIM defaults, the runtime config's, the template's profile, the template's env, an
image model's env, the custom model's id, the adapters' `AIM_ADAPTER_*`, the service's. A custom
model's env goes under the template's instead: the templates it generates carry it already, each
custom template's own env over it, and repeating it above them would undo those. The profile
(GPU count, metric, precision) is the template's effective one (`function.rules.profile`). Pull
secrets: the service's, the template's, the model's and the runtime config's; the service
account: the service's, else the template's, else the config's.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from function.api.hardware import DEFAULT_GPU_RESOURCE
from function.api.meta import Manifest
from function.api.runtimeconfig import InferenceSecurity
from function.api.service import AIMServiceSpec
from function.api.template import ResolvedProfile, ServiceTemplateSpec
from function.build.kserve import CacheMount, RunAs, build_inference_service
from function.compose.refs import Model, Template
from function.compose.service import scaling
from function.compose.service.adapters import AdapterRun
from function.errors import InvalidSpecError
from function.kube.contract import Observed
from function.rules import labels
from function.rules.merge import (
    DEFAULT_ENV,
    ResourceMap,
    cpu_resources,
    gpu_default_resources,
    limit_requests,
    literal_env,
    merge_env,
    merge_resources,
    request_limit_conflicts,
    secret_names,
)
from function.rules.placement import placement
from function.rules.profile import effective_profile
from function.rules.runtimeconfig import RuntimeConfig

INFERENCE_SERVICE = "inference-service"
"""Composition-resource name of the InferenceService."""


def build(  # noqa: PLR0913 - everything an InferenceService is made of
    observed: Observed,
    *,
    spec: AIMServiceSpec,
    name: str,
    model: Model,
    template: Template[ServiceTemplateSpec],
    config: RuntimeConfig,
    caches: Sequence[CacheMount] = (),
    adapters: AdapterRun | None = None,
) -> Manifest:
    """The InferenceService manifest.

    The template must have passed `function.rules.placement` (template resolution checks it), or
    this raises ValueError for a GPU no AMD device id matches.
    """
    tpl = template.spec
    profile = effective_profile(tpl, template.status.profile, template.labels)
    gpu = tpl.hardware.gpu if tpl.hardware else None
    gpu_count = profile.gpu_count or 0
    isvc_labels = _labels(observed, template, model, profile.metric, profile.precision)
    resources = _resources(
        spec, model, tpl, gpu.resource_name if gpu else DEFAULT_GPU_RESOURCE, gpu_count
    )
    return build_inference_service(
        name=name,
        namespace=observed.namespace,
        labels=isvc_labels,
        image=model.spec.image,
        scaling=scaling.bounds(spec),
        resources=resources,
        env=_env(spec, model, tpl, config, profile, adapters=adapters),
        gpu_device_ids=placement(gpu, profile.gpu),
        # The image is the model's, so every object that names secrets for it contributes.
        image_pull_secrets=secret_names(
            spec.image_pull_secrets,
            tpl.image_pull_secrets,
            model.spec.image_pull_secrets,
            config.spec.image_pull_secrets,
        ),
        service_account_name=spec.service_account_name
        or tpl.service_account_name
        or config.spec.service_account_name,
        caches=[*caches, adapters.mount] if adapters else caches,
        run_as=_run_as(config),
    )


def _env(  # noqa: PLR0913 - every source of the runtime's environment
    spec: AIMServiceSpec,
    model: Model,
    tpl: ServiceTemplateSpec,
    config: RuntimeConfig,
    profile: ResolvedProfile,
    *,
    adapters: AdapterRun | None,
) -> list[dict[str, JsonValue]]:
    """The runtime's environment, in the precedence of the module docstring."""
    model_id = next(
        (s.model_id for s in (tpl.model_sources or model.spec.model_sources or ())), None
    )
    model_env = model.spec.env or ()
    custom = bool(model.spec.model_sources)
    metric, precision = profile.metric, profile.precision
    return merge_env(
        literal_env(dict(DEFAULT_ENV)),
        config.spec.env or (),
        literal_env(
            {"AIM_PROFILE_ID": tpl.profile_id, "AIM_METRIC": metric, "AIM_PRECISION": precision}
        ),
        model_env if custom else (),
        tpl.env or (),
        () if custom else model_env,
        literal_env({"AIM_MODEL_ID": model_id}),
        literal_env(adapters.env if adapters else {}),
        spec.env or (),
    )


def _labels(
    observed: Observed,
    template: Template[ServiceTemplateSpec],
    model: Model,
    metric: str | None,
    precision: str | None,
) -> dict[str, str]:
    isvc_labels = {
        "app.kubernetes.io/name": "aim",
        "app.kubernetes.io/component": "inference",
        **labels.MANAGED_BY,
        labels.SERVICE: labels.value(observed.name),
        labels.TEMPLATE: labels.value(template.name),
        labels.MODEL: labels.value(model.name),
    }
    if metric:
        isvc_labels[labels.METRIC] = labels.value(metric)
    if precision:
        isvc_labels[labels.PRECISION] = labels.value(precision)
    return isvc_labels


def _resources(
    spec: AIMServiceSpec,
    model: Model,
    tpl: ServiceTemplateSpec,
    gpu_resource: str,
    gpu_count: int,
) -> ResourceMap:
    """The merged resources, in the precedence of the module docstring; refused on a conflict."""
    resources = limit_requests(
        merge_resources(
            gpu_default_resources(gpu_resource, gpu_count),
            model.spec.resources,
            tpl.resources,
            cpu_resources(tpl.hardware.cpu if tpl.hardware else None),
            spec.resources,
        )
    )
    if conflicts := request_limit_conflicts(resources):
        problem = (
            f"{'; '.join(conflicts)} once the GPU defaults, the model's and template's "
            "resources, the template's hardware.cpu and the service's resources are merged: "
            "give both the request and the limit in spec.resources"
        )
        raise InvalidSpecError(field="spec.resources", problem=problem)
    return resources


def _run_as(config: RuntimeConfig) -> RunAs:
    security = config.spec.inference_security or InferenceSecurity()
    groups = tuple(security.supplemental_groups or ())
    return RunAs(security.run_as_user, security.run_as_group, groups)
