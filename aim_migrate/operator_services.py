"""The AIM operator's AIMService: v1alpha1's spec (v1alpha2's profile path: `operator_v1alpha2`)."""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from aim_migrate.objects import field_at
from aim_migrate.operator import Fields, Obj, OperatorContext, Report, one_of, show, spec_fields
from aim_migrate.operator_configs import routing
from aim_migrate.operator_models import hardware_from_gpu_selector, model_sources
from aim_migrate.routepaths import ModelForm
from function.api.meta import Kind

_CACHING: Final = {
    "Always": True,
    "Shared": True,
    "Dedicated": True,
    "Never": False,
}


def service(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMService (v1alpha1; v1alpha2's profile path is handled in `operator_v1alpha2`)."""
    f = spec_fields(doc, report)
    f.out["model"] = service_model(f.take("model"), report)
    _template_ref(f, report)
    caching(f, report)
    for key in (
        "replicas",
        "minReplicas",
        "maxReplicas",
        "autoScaling",
        "runtimeConfigName",
        "resources",
        "env",
        "imagePullSecrets",
        "serviceAccountName",
        "adapterMode",
    ):
        f.carry(key)
    service_adapters(f, report)
    _overrides(f, report)
    model_form = _model_form(f.out["model"])
    route = routing(f.take("routing"), "spec.routing", report, model_form)
    if route is not None:
        f.out["routing"] = route
    f.drop(
        "storage",
        "services take storage defaults from their runtime config here: set "
        "defaultStorageClassName / pvcHeadroomPercent in the AIMRuntimeConfig the service uses",
    )
    f.drop(
        "priorityClassName",
        "inference pods take no priority class from the AIMService here",
    )
    if f.out["model"] is None:
        del f.out["model"]
        if not any(n.startswith("spec.model") for n in report.not_carried):
            report.not_carried.append(
                "spec.model: unset; a service here names its model (spec.model.ref, .image "
                "or .custom)"
            )
    doc["spec"] = f.finish("AIMService")
    return Kind.SERVICE


def _template_ref(f: Fields, report: Report) -> None:
    """`template`, and the older `templateName` as its `name`."""
    template_ref = f.take("template")
    template_name = f.take("templateName")
    if template_name is not None:
        template_ref = {**(template_ref if isinstance(template_ref, dict) else {})}
        template_ref["name"] = template_name
        report.changes.append("spec.templateName: became spec.template.name")
    if template_ref is not None:
        t = Fields(template_ref, "spec.template", report)
        t.carry("name")
        t.carry("allowUnoptimized")
        f.out["template"] = t.finish("spec.template")


def _overrides(f: Fields, report: Report) -> None:
    """`overrides`: the same fields, the older `gpuSelector` as `hardware.gpu`."""
    overrides = f.take("overrides")
    if overrides is not None:
        o = Fields(overrides, "spec.overrides", report)
        o.carry("metric")
        o.carry("precision")
        o.carry("hardware")
        hardware_from_gpu_selector(o, report)
        f.out["overrides"] = o.finish("spec.overrides")


def service_model(value: JsonValue, report: Report) -> Obj | None:
    """`spec.model`: `ref`/`name` (by name), `image`, or `custom` weights."""
    if value is None:
        return None
    f = Fields(value, "spec.model", report)
    f.carry("ref")
    f.carry("name", "ref")
    f.carry("image")
    custom = f.take("custom")
    if custom is not None:
        c = Fields(custom, "spec.model.custom", report)
        c.carry("baseImage")
        c.carry("hardware")
        hardware_from_gpu_selector(c, report)
        sources = c.take("modelSources")
        if sources is not None:
            c.out["modelSources"] = model_sources(sources, "spec.model.custom.modelSources", report)
        f.out["custom"] = c.finish("spec.model.custom")
    return f.finish("spec.model")


def _model_form(model: JsonValue) -> ModelForm:
    for form in (ModelForm.IMAGE, ModelForm.CUSTOM):
        if isinstance(model, dict) and form.value in model:
            return form
    return ModelForm.REF


_MODE_WARNINGS: Final = {
    "Dedicated": (
        "spec.caching.mode: Dedicated; a cache a service makes here is its own but is kept "
        "(with its PVCs) for the runtime config's caching.retention (24h by default) after the "
        "service is gone, so a successor can mount it"
    ),
    "Shared": (
        "spec.caching.mode: Shared; a cache a service makes here is deleted, with its PVCs, once "
        "no service has used it for the runtime config's caching.retention (24h by default); "
        "the operator kept shared caches forever. Create an AIMTemplateCache to keep one"
    ),
    "Never": (
        "spec.caching.mode: Never; the operator's newest releases cache such a service anyway "
        "(in a cache of its own); here it downloads its weights at start, uncached"
    ),
}
"""What a service converted with each mode does differently here."""


def caching(f: Fields, report: Report) -> None:
    """`caching.mode` and the deprecated `cacheModel` as `cacheModel` here.

    The operator's newest releases cache every service (Shared by default, Dedicated per
    service); older ones used an existing cache (Auto), made one (Always) or none (Never). Here a
    service caches when `cacheModel` is true or its runtime config's `caching.mode` is Always.
    """
    mode = _caching_mode(f.take("caching"), report)
    cache_model = f.take("cacheModel")
    if mode is not None and not isinstance(mode, str):
        report.not_carried.append(
            f"spec.caching.mode: {show(mode)}; not a mode: the operator's are Always, Shared, "
            "Dedicated and Never (Auto in older releases); set spec.cacheModel: true to cache"
        )
        if cache_model is not None:
            f.out["cacheModel"] = cache_model
    elif one_of(mode, _CACHING):
        value = _CACHING[str(mode)]
        f.out["cacheModel"] = value
        report.changes.append(
            f"spec.caching.mode: {mode} became spec.cacheModel: {str(value).lower()}"
        )
        if str(mode) in _MODE_WARNINGS:
            report.warnings.append(_MODE_WARNINGS[str(mode)])
    elif mode is not None:
        if cache_model is not None:
            f.out["cacheModel"] = cache_model
        report.warnings.append(
            f"spec.caching.mode: {mode}; unset here: the service caches when its runtime "
            "config's caching.mode is Always or a cache-enabled template caches. The operator "
            "used a cache that existed (older releases) or always cached (newest): set "
            "spec.cacheModel: true to cache"
        )
    elif cache_model is not None:
        f.out["cacheModel"] = cache_model
        if cache_model is False:
            report.warnings.append(
                "spec.cacheModel: false; carried, but the operator's newest releases ignored it "
                "and cached anyway: here the service runs uncached"
            )
    else:
        report.warnings.append(
            "spec.caching: unset; the operator's newest releases cache every service, here a "
            "service caches when spec.cacheModel is true or its runtime config's caching.mode "
            "is Always: set one of them to keep caching"
        )


def _caching_mode(block: JsonValue, report: Report) -> JsonValue:
    """`spec.caching`'s mode (None when unset); what else the block holds is not carried."""
    if block is None:
        return None
    if not isinstance(block, dict):
        report.not_carried.append(
            f"spec.caching: {show(block)}; not a mapping: write spec.caching.mode, or "
            "spec.cacheModel: true to cache"
        )
        return None
    if set(block) - {"mode"}:
        report.not_carried.append(
            f"spec.caching: {show(block)}; only caching.mode has a counterpart (cacheModel)"
        )
    return field_at(block, "mode")


def service_adapters(f: Fields, report: Report) -> None:
    """A service's LoRA adapters, each by the name of its artifact (an adapter cache here).

    The rank cap carries over; the staging disk is the service's own here.
    """
    adapters = f.take("adapters")
    if isinstance(adapters, list):
        out: list[JsonValue] = []
        for i, item in enumerate(adapters):
            a = Fields(item, f"spec.adapters[{i}]", report)
            a.carry("name")
            a.warn_drop("kind", "an adapter here is always an AIMModelCache of type adapter")
            out.append(a.finish("an adapter"))
        f.out["adapters"] = out
    runtime = f.take("adapterRuntime")
    if runtime is not None:
        r = Fields(runtime, "spec.adapterRuntime", report)
        r.carry("maxRank")
        f.out["adapterRuntime"] = r.finish("spec.adapterRuntime")
