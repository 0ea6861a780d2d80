"""The AIM operator's models and service templates, and the blocks they share with services."""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from aim_migrate.objects import Head
from aim_migrate.operator import Fields, Obj, OperatorContext, Report, one_of, show, spec_fields
from function.api.meta import Kind

PROFILE_TYPES: Final = frozenset({"optimized", "preview", "unoptimized"})


def model(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMModel / AIMClusterModel."""
    f = spec_fields(doc, report)
    f.carry("image")
    if "image" not in f.out:
        report.not_carried.append(
            "spec.image: unset; a model here is an image (with modelSources for custom "
            "weights), so this one is left out: write it with spec.image, the image that "
            "serves it"
        )
        report.dropped = True
    discovery = Fields(f.take("discovery"), "spec.discovery", report)
    discovery.carry("enabled")
    discovery.carry("autoCreateTemplates")
    discovery.carry("extractMetadata", "enabled")
    discovery.carry("createServiceTemplates", "autoCreateTemplates")
    found = discovery.finish("spec.discovery")
    if found:
        f.out["discovery"] = found
    _carry_warning(
        f,
        "defaultServiceTemplate",
        "the operator stored it without using it, here a service on this model that names no "
        "template runs on it",
    )
    f.carry("runtimeConfigName")
    f.carry("imagePullSecrets")
    f.carry("env")
    f.carry("serviceAccountName")
    _carry_warning(
        f,
        "resources",
        "the operator's newest releases did not apply a model's resources, here they are the "
        "baseline of every inference container (templates and services override them)",
    )
    f.carry("imageMetadata")
    sources = f.take("modelSources")
    if sources is not None:
        f.out["modelSources"] = model_sources(sources, "spec.modelSources", report)
    custom = _custom(f, report)
    if custom:
        if "modelSources" in f.out:
            f.out["custom"] = custom
        else:
            report.not_carried.append(
                f"spec.custom: {show(custom)}; hardware and templates belong to custom models "
                "here (models with spec.modelSources); an image's templates come from its "
                "labels, or write AIMServiceTemplates for it"
            )
    why = (
        "profile-based onboarding has no counterpart here: set spec.image, and spec.modelSources "
        "with spec.custom for custom weights"
    )
    for key in ("aimId", "profiles", "derivedFrom", "profileCopy"):
        f.drop(key, why)
    doc["spec"] = f.finish(Head.read(doc).kind)
    return Kind.CLUSTER_MODEL if Head.read(doc).kind == "AIMClusterModel" else Kind.MODEL


def _custom(f: Fields, report: Report) -> Obj:
    """The custom-model block, from `custom` or the older top-level `hardware`/`type`."""
    block = Fields(f.take("custom"), "spec.custom", report)
    out: Obj = {}
    # `is None`, not `or`: an empty value in spec.custom is reported, not replaced by the older
    # top-level field.
    hardware = block.take("hardware")
    hardware = f.take("hardware") if hardware is None else hardware
    if hardware is not None:
        out["hardware"] = hardware
    kind = block.take("type")
    kind = f.take("type") if kind is None else kind
    if kind is not None:
        if one_of(kind, PROFILE_TYPES):
            out["type"] = kind
        else:
            report.not_carried.append(
                f"spec.custom.type: {show(kind)}; types here are optimized, preview or "
                "unoptimized (the default)"
            )
    block.drop(
        "versionPolicy", "aimId-based template matching has no counterpart here (see spec.aimId)"
    )
    block.finish("spec.custom")
    templates = f.take("customTemplates")
    if isinstance(templates, list):
        out["templates"] = [
            _custom_template(t, f"spec.customTemplates[{i}]", report)
            for i, t in enumerate(templates)
        ]
        report.changes.append("spec.customTemplates: became spec.custom.templates")
    return out


def _custom_template(value: JsonValue, path: str, report: Report) -> Obj:
    f = Fields(value, path, report)
    for key in ("name", "env", "hardware", "profile"):
        f.carry(key)
    kind = f.take("type")
    if one_of(kind, PROFILE_TYPES):
        f.out["type"] = kind
    elif kind is not None:
        report.not_carried.append(
            f"{path}.type: {show(kind)}; types here are optimized, preview or unoptimized"
        )
    for key in ("aimId", "modelId", "customProfile"):
        f.drop(key, "inline engine profiles have no counterpart; the image's profiles are used")
    return f.finish("a custom template")


def model_sources(value: JsonValue, path: str, report: Report) -> JsonValue:
    """Model sources: `modelId`, `sourceUri`, `size`, `env`; the oldest wrote `name`."""
    if not isinstance(value, list):
        return value
    out: list[JsonValue] = []
    for i, item in enumerate(value):
        f = Fields(item, f"{path}[{i}]", report)
        for key in ("modelId", "sourceUri", "size", "env"):
            f.carry(key)
        if "modelId" not in f.out:
            f.carry("name", "modelId")
        else:
            f.warn_drop("name", "modelId names the source here")
        f.warn_drop(
            "precision",
            "it matched sources to profiles for custom weights, which has no counterpart here",
        )
        out.append(f.finish("a model source"))
    return out


# --- templates ---------------------------------------------------------------------------------


def template(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMServiceTemplate / AIMClusterServiceTemplate."""
    cluster = Head.read(doc).kind == "AIMClusterServiceTemplate"
    f = spec_fields(doc, report)
    for key in (
        "modelName",
        "metric",
        "precision",
        "hardware",
        "profileId",
        "runtimeConfigName",
        "env",
        "resources",
        "imagePullSecrets",
        "serviceAccountName",
    ):
        f.carry(key)
    hardware_from_gpu_selector(f, report, " (count → requests)")
    profile_type(f, report)
    sources = f.take("modelSources")
    if sources is not None:
        f.out["modelSources"] = model_sources(sources, "spec.modelSources", report)
    if cluster:
        f.drop(
            "caching",
            "caching is a namespace concern here: set caching on an AIMServiceTemplate, or "
            "create AIMTemplateCaches in the namespaces that need the weights",
        )
    else:
        f.carry("caching")
    doc["spec"] = f.finish(Head.read(doc).kind)
    return Kind.CLUSTER_SERVICE_TEMPLATE if cluster else Kind.SERVICE_TEMPLATE


def profile_type(f: Fields, report: Report) -> None:
    """`type`: the same three values here; the operator's `general` has no counterpart."""
    kind = f.take("type")
    if one_of(kind, PROFILE_TYPES):
        f.out["type"] = kind
    elif kind is not None:
        report.not_carried.append(
            f"{f.path}.type: {show(kind)}; types here are optimized, preview or unoptimized; "
            "left unset, discovery's answer is used"
        )


def _carry_warning(f: Fields, key: str, why: str) -> None:
    """Carry `key`, and when it is set warn that it now does what it did not (`why`)."""
    if f.peek(key):
        f.report.warnings.append(f"{f.path}.{key}: carried; {why}")
    f.carry(key)


def hardware_from_gpu_selector(f: Fields, report: Report, note: str = "") -> None:
    """The older `gpuSelector` of the object `f` reads, become its `hardware.gpu`."""
    selector = f.take("gpuSelector")
    if selector is not None:
        f.out["hardware"] = {"gpu": gpu_selector(selector, f"{f.path}.gpuSelector", report)}
        report.changes.append(f"{f.path}.gpuSelector: became {f.path}.hardware.gpu{note}")


def gpu_selector(value: JsonValue, path: str, report: Report) -> Obj:
    """The older `gpuSelector{count, model, resourceName}` as `hardware.gpu`."""
    f = Fields(value, path, report)
    f.carry("count", "requests")
    f.carry("model")
    f.carry("resourceName")
    return f.finish("hardware.gpu")
