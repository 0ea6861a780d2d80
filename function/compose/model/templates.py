"""The service templates a model creates from its image's labels or its custom spec.

An image model gets one per recommended deployment of its image; a custom model one per
`spec.custom.templates` entry (one from `spec.custom.hardware` if there are none).

A namespaced model creates AIMServiceTemplates beside it; a cluster model creates
AIMClusterServiceTemplates. Names are the AIM operator's, so catalogs move between the two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from function.api.hardware import ProfileType
from function.api.meta import Kind, Manifest
from function.api.model import CustomTemplate, ModelSpec, RecommendedDeployment
from function.api.template import ClusterServiceTemplateSpec
from function.build.aim import build_aim_object
from function.rules import labels, naming
from function.rules.merge import cpu_resources, merge_hardware, merged_env


@dataclass(frozen=True)
class Planned:
    """Templates to compose (by name), and deployments that could not become one, with why."""

    templates: dict[str, Manifest]
    skipped: tuple[str, ...] = ()


def plan(
    model: str, spec: ModelSpec, namespace: str | None, deployments: Sequence[RecommendedDeployment]
) -> Planned:
    """The templates of this model."""
    if spec.model_sources:
        return Planned(_custom(model, spec, namespace))
    templates: dict[str, Manifest] = {}
    skipped: list[str] = []
    for index, deployment in enumerate(deployments):
        try:
            name, tpl = _recommended(model, spec, namespace, deployment)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            skipped.append(f"recommended deployment [{index}]: {where}: {first['msg']}")
            continue
        templates[name] = tpl
    return Planned(templates, tuple(skipped))


def _recommended(
    model: str, spec: ModelSpec, namespace: str | None, deployment: RecommendedDeployment
) -> tuple[str, Manifest]:
    gpu, count = deployment.gpu_model, deployment.gpu_count
    name = naming.recommended_template_name(
        model,
        spec.image,
        gpu=gpu,
        count=count,
        metric=deployment.metric,
        precision=deployment.precision,
    )
    tpl = ClusterServiceTemplateSpec.model_validate(
        {
            "modelName": model,
            "metric": deployment.metric or None,
            "precision": deployment.precision or None,
            "profileId": deployment.profile_id or None,
            "hardware": {"gpu": {"requests": count, "model": gpu}} if gpu and count else None,
            "imagePullSecrets": spec.image_pull_secrets,
            "serviceAccountName": spec.service_account_name,
        }
    )
    declared = {labels.PROFILE_TYPE: labels.value(deployment.type)} if deployment.type else {}
    return name, _manifest(name, namespace, model, tpl, declared)


def _custom(model: str, spec: ModelSpec, namespace: str | None) -> dict[str, Manifest]:
    custom = spec.custom
    base = custom.hardware if custom else None
    entries: Sequence[CustomTemplate | None] = (custom.templates if custom else None) or [None]
    templates: dict[str, Manifest] = {}
    for index, entry in enumerate(entries):
        hardware = merge_hardware(base, entry.hardware if entry else None)
        profile = entry.profile if entry else None
        precision = profile.precision if profile else None
        metric = profile.metric if profile else None
        gpu = hardware.gpu if hardware else None
        if entry is None:
            name = naming.custom_template_name(
                model, 0, alias=None, precision=None, metric=None, gpu_count=None, gpu=None
            )
        else:
            name = naming.custom_template_name(
                model,
                index,
                alias=entry.name,
                precision=precision,
                metric=metric,
                gpu_count=gpu.requests if gpu else None,
                gpu=gpu.model if gpu else None,
            )
        kind = (entry.type if entry and "type" in entry.model_fields_set else None) or (
            custom.type if custom else None
        )
        tpl = ClusterServiceTemplateSpec(
            model_name=model,
            metric=metric,
            precision=precision,
            hardware=hardware,
            type=kind or ProfileType.UNOPTIMIZED,
            model_sources=spec.model_sources,
            env=merged_env(spec.env, entry.env if entry else None) or None,
            resources=cpu_resources(hardware.cpu if hardware else None),
            image_pull_secrets=spec.image_pull_secrets,
            service_account_name=spec.service_account_name,
        )
        alias = {labels.TEMPLATE_ALIAS: labels.value(entry.name)} if entry and entry.name else {}
        templates[name] = _manifest(name, namespace, model, tpl, alias)
    return templates


def _manifest(
    name: str,
    namespace: str | None,
    model: str,
    spec: ClusterServiceTemplateSpec,
    extra_labels: Mapping[str, str] | None = None,
) -> Manifest:
    return build_aim_object(
        Kind.SERVICE_TEMPLATE if namespace else Kind.CLUSTER_SERVICE_TEMPLATE,
        name=name,
        namespace=namespace or None,
        labels={
            labels.MODEL: labels.value(model),
            labels.ORIGIN: labels.AUTO_GENERATED,
            **(extra_labels or {}),
        },
        spec=spec,
    )
