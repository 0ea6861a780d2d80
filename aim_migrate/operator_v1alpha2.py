"""The kinds and fields only the AIM operator's `aim.eai.amd.com/v1alpha2` has.

v1alpha2 keeps v1alpha1's AIMService and AIMModel specs (the rules `operator_v1alpha1` lists
convert them) and adds profiles: an AIMProfile is one runtime configuration of one image on one
accelerator, which is what a service template is here, except that a template runs a model (an
image in the catalog) rather than naming the image itself. A profile therefore converts to a
template when the same run holds a model with its image; a service on a profile to a service on
that template and model. Profile sets (generators of profiles) and base profiles (material for
deriving them) have no counterpart and are refused with the reason.
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from aim_migrate.objects import Head, field_at, mapping_at
from aim_migrate.operator import Fields, Obj, OperatorContext, Report, Rule, spec_fields
from aim_migrate.operator_caches import cache_mode, scope
from aim_migrate.operator_models import model_sources, profile_type
from aim_migrate.operator_services import service
from function.api.meta import Kind


def profile(doc: Obj, report: Report, ctx: OperatorContext) -> Kind:
    """AIMProfile / AIMClusterProfile → AIMServiceTemplate / AIMClusterServiceTemplate."""
    head = Head.read(doc)
    cluster = head.kind == "AIMClusterProfile"
    f = spec_fields(doc, report)
    _model_of_image(f, report, ctx, head)
    for key in ("profileId", "metric", "precision", "resources", "imagePullSecrets"):
        f.carry(key)
    f.carry("serviceAccountName")
    f.carry("containerEnv", "env")
    profile_type(f, report)
    aim_id = f.take("aimId")
    if aim_id is not None:
        report.changes.append(
            f"spec.aimId: {aim_id!r} dropped; spec.modelName ties the template to its model"
        )
    f.warn_drop("modelId", "each model source's modelId sets its cache path here")
    f.warn_drop("engine", "the image's profile (spec.profileId) decides the engine")
    sources = f.take("modelSources")
    if sources is not None:
        f.out["modelSources"] = model_sources(sources, "spec.modelSources", report)
    elif aim_id is None:
        report.not_carried.append(
            "the whole profile's purpose: a base profile (no aimId, no modelSources) is material "
            "for deriving profiles for custom weights, which has no counterpart; serve custom "
            "weights with an AIMModel with spec.modelSources and spec.custom.hardware"
        )
        report.dropped = True
    hardware = _accelerator(f, report)
    if hardware:
        f.out["hardware"] = hardware
    _drop_engine_and_selection(f, report)
    if cluster:
        f.drop(
            "caching",
            "caching is a namespace concern here: set caching on an AIMServiceTemplate",
        )
    else:
        f.carry("caching")
    doc["spec"] = f.finish(head.kind)
    return Kind.CLUSTER_SERVICE_TEMPLATE if cluster else Kind.SERVICE_TEMPLATE


def _model_of_image(f: Fields, report: Report, ctx: OperatorContext, head: Head) -> None:
    """`image` as `modelName`: the run's model with that image, its namespace's first."""
    cluster = head.kind == "AIMClusterProfile"
    namespace = None if cluster else head.namespace or None
    image = f.take("image")
    model = ctx.model_for_image(image, namespace) if isinstance(image, str) else None
    if model is not None:
        f.out["modelName"] = model
        report.changes.append(
            f"spec.image: became spec.modelName {model!r}, the model in this run with that image"
        )
    else:
        scope_text = "an AIMClusterModel" if cluster else "an AIMModel or AIMClusterModel"
        report.not_carried.append(
            f"spec.image: {image!r}; a template here runs a model, and this run has no "
            f"{scope_text} with that image: migrate the model with it, or create one and set "
            "spec.modelName to its name"
        )


def _drop_engine_and_selection(f: Fields, report: Report) -> None:
    """The engine's arguments and environment, and the operator's selection flags: no place here."""
    f.drop(
        "engineArgs",
        "engine arguments have no place on a template here: the image's profile "
        "(spec.profileId) brings its own",
    )
    f.drop(
        "engineEnv",
        "the engine's environment has no place here; spec.env sets the container's, which the "
        "engine inherits unless the image's profile sets the same variable",
    )
    primary = f.take("primary")
    if primary:
        report.warnings.append(
            "spec.primary: true left out; auto-selection here ranks a model's templates by "
            "type, then the service's overrides, and does not mark one as the default (set "
            "spec.defaultServiceTemplate on the model to make this one the default)"
        )
    f.drop(
        "manualSelectionOnly",
        "auto-selection here considers every template of the model; name templates in "
        "spec.template.name to choose",
    )


def _accelerator(f: Fields, report: Report) -> Obj:
    """`acceleratorType/Model/Count` as `hardware.gpu` or `hardware.cpu`."""
    kind = f.take("acceleratorType")
    model = f.take("acceleratorModel")
    count = f.take("acceleratorCount")
    if kind == "cpu":
        cpu = field_at(f.out, "resources", "requests", "cpu")
        if model is not None:
            report.not_carried.append(
                f"spec.acceleratorModel: {model!r}; CPU profiles here are not pinned to a CPU "
                "model: add a node selector through the namespace or drop the requirement"
            )
        if cpu is None:
            report.not_carried.append(
                "spec.acceleratorType: cpu; a CPU-only template here needs "
                "spec.hardware.cpu.requests: set it (the operator derived it from its "
                "cluster settings)"
            )
            return {}
        report.changes.append("spec.acceleratorType: cpu became spec.hardware.cpu")
        return {"cpu": {"requests": cpu}}
    if kind is None and model is None and count is None:
        return {}
    gpu: Obj = {}
    if count is not None:
        gpu["requests"] = count
    if model is not None:
        gpu["model"] = model
        report.warnings.append(
            f"spec.acceleratorModel: {model!r} became spec.hardware.gpu.model; nodes are chosen "
            "here by the AMD GPU operator's labels (amd.com/gpu.device-id), not by the "
            "operator's feature.node.kubernetes.io/aim-accelerator.* labels, so only AMD "
            "Instinct models (MI300X, MI325X, ...) place pods; architecture names do not"
        )
    report.changes.append("spec.accelerator*: became spec.hardware.gpu")
    return {"gpu": gpu}


def profile_cache(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMProfileCache → AIMTemplateCache of the template the profile became (same name)."""
    f = spec_fields(doc, report)
    name = f.take("profileName")
    if name is not None:
        f.out["templateName"] = name
        report.changes.append(
            "spec.profileName: became spec.templateName (the profile converts to the template "
            "of the same name)"
        )
    scope(f, "profileScope", report)
    f.carry("storageClassName")
    f.carry("env")
    cache_mode(f, report)
    doc["spec"] = f.finish("AIMTemplateCache")
    return Kind.TEMPLATE_CACHE


def service_v1alpha2(doc: Obj, report: Report, ctx: OperatorContext) -> Kind:
    """AIMService: v1alpha1's spec, or the profile path (`spec.profile`, `profileOverrides`)."""
    spec = mapping_at(doc, "spec")
    if spec is None:
        return service(doc, report, ctx)
    chosen = spec.pop("profile", None)
    overrides = spec.pop("profileOverrides", None)
    if chosen is not None:
        _on_profile(doc, spec, chosen, report, ctx)
    if overrides is not None:
        o = Fields(overrides, "spec.profileOverrides", report)
        env = o.take("containerEnv")
        if isinstance(env, list):
            own = field_at(spec, "env")
            spec["env"] = [*(own if isinstance(own, list) else []), *env]
            report.changes.append(
                "spec.profileOverrides.containerEnv: appended to spec.env (the service's "
                "environment wins over the template's here too)"
            )
        o.drop("engineArgs", "engine arguments have no place here; the image's profile sets them")
        o.finish("spec.profileOverrides")
    return service(doc, report, ctx)


def _on_profile(
    doc: Obj, spec: dict[str, JsonValue], chosen: JsonValue, report: Report, ctx: OperatorContext
) -> None:
    name = field_at(chosen, "name")
    if not isinstance(name, str):
        report.not_carried.append(f"spec.profile: {chosen!r}; it names no profile")
        return
    spec["template"] = {"name": name}
    report.changes.append(
        "spec.profile.name: became spec.template.name (the profile converts to the template of "
        "the same name)"
    )
    if field_at(spec, "model") is not None:
        return
    namespace = Head.read(doc).namespace or None
    image = ctx.profiles.get((namespace, name)) or ctx.profiles.get((None, name))
    model = ctx.model_for_image(image, namespace) if image else None
    if model is None:
        report.not_carried.append(
            f"spec.model: unset, and the model of profile {name!r} is not in this run; a "
            "service here names its model: migrate the profile and a model with its image "
            "together, or set spec.model.ref"
        )
        return
    spec["model"] = {"ref": model}
    report.changes.append(
        f"spec.model.ref: set to {model!r}, the model in this run with profile {name!r}'s image"
    )


RULES: Final[dict[str, Rule]] = {
    "AIMProfile": profile,
    "AIMClusterProfile": profile,
    "AIMProfileCache": profile_cache,
    "AIMService": service_v1alpha2,
}
"""v1alpha2's own rules; its AIMModel/AIMClusterModel use v1alpha1's (`operator_v1alpha1.RULES`)."""

REFUSED: Final[dict[str, str]] = {
    "AIMProfileSet": (
        "profile sets generate profiles by copying and overriding others; nothing here "
        "generates templates but a model's discovery: write the AIMServiceTemplates, or let the "
        "model's image labels create them"
    ),
    "AIMClusterProfileSet": (
        "profile sets generate profiles by copying and overriding others; nothing here "
        "generates templates but a model's discovery: write the AIMClusterServiceTemplates, or "
        "let the model's image labels create them"
    ),
}
