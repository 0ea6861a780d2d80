"""The AIM operator's manifests (`aim.eai.amd.com/v1alpha1`) converted to this package's API.

The operator (github.com/amd-enterprise-ai/aim-engine) serves the same kinds under another API
group, and its v1alpha1 schema changed shape over its releases (`templateName` became
`template.name`, `gpuSelector` became `hardware`, `model.ref` became `model.name`, ...). Each rule
here takes a spec field by field: what has a place here is moved to it, and whatever is left is
reported by name, so nothing is dropped without saying. The kinds only v1alpha2 has live in
`operator_v1alpha2`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from aim_migrate.routepaths import ModelForm, rewrite_template
from function.api.meta import API_VERSION, Kind

OPERATOR_GROUP: Final = "aim.eai.amd.com"

Obj = dict[str, JsonValue]

_SERVER_FIELDS: Final = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
)
_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
_CLUSTER_KINDS: Final = frozenset(
    {
        Kind.CLUSTER_MODEL,
        Kind.CLUSTER_SERVICE_TEMPLATE,
        Kind.CLUSTER_RUNTIME_CONFIG,
        Kind.CLUSTER_MODEL_SOURCE,
    }
)
_PROFILE_TYPES: Final = frozenset({"optimized", "preview", "unoptimized"})


@dataclass
class Report:
    """What one conversion changed, warns of, and could not carry (a Migration's lists)."""

    changes: list[str]
    warnings: list[str]
    not_carried: list[str]
    dropped: bool = False
    """The object has no counterpart: it is left out of the output."""


@dataclass(frozen=True)
class OperatorContext:
    """What the other operator manifests of the same run say, for references between them."""

    models: dict[tuple[str | None, str], str] = field(default_factory=dict)
    """(namespace, or None for AIMClusterModel; spec.image) → the model's name."""
    profiles: dict[tuple[str | None, str], str] = field(default_factory=dict)
    """(namespace, or None for AIMClusterProfile; name) → the profile's spec.image."""

    def model_for_image(self, image: str, namespace: str | None) -> str | None:
        """The model in the run serving `image`: the namespace's, else a cluster one."""
        if namespace is not None and (namespace, image) in self.models:
            return self.models[namespace, image]
        return self.models.get((None, image))


Rule = Callable[[Obj, Report, OperatorContext], Kind]
"""Converts one manifest in place and returns the kind it became."""


def is_operator(doc: Obj) -> bool:
    """Whether the object belongs to the AIM operator's API group (any version)."""
    return str(doc.get("apiVersion", "")).split("/", 1)[0] == OPERATOR_GROUP


def collect(docs: list[JsonValue]) -> OperatorContext:
    """Models by image and profiles by name among the operator manifests of a run."""
    ctx = OperatorContext()
    for doc in docs:
        if not (isinstance(doc, dict) and is_operator(doc)):
            continue
        spec, meta, kind = doc.get("spec"), doc.get("metadata"), doc.get("kind")
        if not (isinstance(spec, dict) and isinstance(meta, dict)):
            continue
        name, image, ns = meta.get("name"), spec.get("image"), meta.get("namespace")
        if not (isinstance(name, str) and isinstance(image, str)):
            continue
        namespace = ns if isinstance(ns, str) and ns else None
        if kind in ("AIMModel", "AIMClusterModel"):
            ctx.models.setdefault((namespace if kind == "AIMModel" else None, image), name)
        elif kind in ("AIMProfile", "AIMClusterProfile"):
            ctx.profiles[namespace if kind == "AIMProfile" else None, name] = image
    return ctx


class Fields:
    """An operator spec being taken apart: fields move to the new spec, the rest is reported."""

    def __init__(self, src: JsonValue, path: str, report: Report) -> None:
        """Take apart `src` (the object at `path`), reporting into `report`."""
        self.src: Obj = dict(src) if isinstance(src, dict) else {}
        self.out: Obj = {}
        self.path = path
        self.report = report

    def take(self, key: str) -> JsonValue:
        """Remove `key` from what is left and return its value (None when absent)."""
        return self.src.pop(key, None)

    def carry(self, key: str, new: str | None = None) -> None:
        """Move `key` unchanged (same meaning here), under `new` when renamed."""
        if key in self.src:
            value = self.src.pop(key)
            self.out[new or key] = value
            if new is not None:
                self.report.changes.append(f"{self.path}.{key}: renamed {self.path}.{new}")

    def drop(self, key: str, why: str) -> None:
        """Not carried: `key` has no place here; `why` says what to do instead."""
        if key in self.src:
            value = self.src.pop(key)
            self.report.not_carried.append(f"{self.path}.{key}: {_show(value)}; {why}")

    def warn_drop(self, key: str, why: str) -> None:
        """Left out, with no loss to report as not carried (the operator did not use it)."""
        if key in self.src:
            value = self.src.pop(key)
            self.report.warnings.append(f"{self.path}.{key}: {_show(value)} left out; {why}")

    def finish(self, kind: str) -> Obj:
        """The new spec; every field still left is reported as having no counterpart."""
        for key, value in self.src.items():
            self.report.not_carried.append(
                f"{self.path}.{key}: {_show(value)}; {kind} here has no such field "
                "(see docs/api.md for what it offers)"
            )
        self.src = {}
        return self.out


_SHOWN: Final = 120
"""Longest value quoted in a report line."""


def _show(value: JsonValue) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _one_of(value: JsonValue, choices: Collection[str]) -> bool:
    """Whether `value` is one of the strings `choices`.

    False for a list or a mapping, which a hostile or mistaken manifest may hold where a string
    belongs (they are not hashable: `in` a set would raise).
    """
    return isinstance(value, str) and value in choices


def convert(
    doc: Obj,
    report: Report,
    ctx: OperatorContext,
    rules: Mapping[str, Rule],
    refused: Mapping[str, str],
) -> None:
    """Convert one `aim.eai.amd.com` manifest in place with the rule for its kind and version."""
    kind = str(doc.get("kind"))
    rule = rules.get(kind)
    if rule is None:
        report.not_carried.append(
            f"the whole {kind}: "
            + refused.get(kind, "an operator kind this converter does not know; nothing carried")
        )
        report.dropped = True
        return
    _metadata(doc, report)
    new_kind = rule(doc, report, ctx)
    report.changes.append(f"apiVersion: {doc.get('apiVersion')} became {API_VERSION}")
    doc["apiVersion"] = API_VERSION
    if new_kind != kind:
        report.changes.append(f"kind: {kind} became {new_kind}")
    doc["kind"] = new_kind.value
    meta = doc.get("metadata")
    if new_kind in _CLUSTER_KINDS and isinstance(meta, dict) and meta.pop("namespace", None):
        report.changes.append(f"metadata.namespace: dropped; {new_kind} is cluster-scoped")


def _metadata(doc: Obj, report: Report) -> None:
    """Drop what the API server and the operator wrote; keep names, labels and annotations."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        return
    server = [k for k in _SERVER_FIELDS if meta.pop(k, None) is not None]
    if server:
        report.changes.append(f"metadata.{{{','.join(server)}}}: dropped; the API server sets them")
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and annotations.pop(_LAST_APPLIED, None) is not None:
        report.changes.append(f"metadata.annotations[{_LAST_APPLIED}]: dropped")
        if not annotations:
            del meta["annotations"]
    if meta.pop("finalizers", None):
        report.changes.append(
            "metadata.finalizers: dropped; they are the operator's, and no controller here "
            "would remove them"
        )
    owners = meta.pop("ownerReferences", None)
    if isinstance(owners, list) and owners:
        names = ", ".join(f"{o.get('kind')}/{o.get('name')}" for o in owners if isinstance(o, dict))
        report.warnings.append(
            f"metadata.ownerReferences: dropped; the operator created this object for {names}. "
            "Converted, that owner creates its own here, so leave this one out unless you want "
            "it kept as a hand-written object"
        )


def _spec(doc: Obj, report: Report) -> Fields:
    return Fields(doc.get("spec"), "spec", report)


# --- runtime configs ---------------------------------------------------------------------------


def runtime_config(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMRuntimeConfig / AIMClusterRuntimeConfig: storage flattened, the rest the same."""
    cluster = doc.get("kind") == "AIMClusterRuntimeConfig"
    f = _spec(doc, report)
    storage = Fields(f.take("storage"), "spec.storage", report)
    storage.carry("defaultStorageClassName")
    storage.carry("pvcHeadroomPercent")
    flat = storage.finish("the runtime config's storage")
    for key, value in flat.items():
        f.out[key] = value
        report.changes.append(f"spec.storage.{key}: became spec.{key}")
    for key in ("defaultStorageClassName", "pvcHeadroomPercent"):
        # The deprecated top-level fields count only where spec.storage leaves them unset.
        if key in f.out:
            f.warn_drop(key, f"deprecated, and spec.storage.{key} is set")
        else:
            f.carry(key)
    f.out["routing"] = routing(f.take("routing"), "spec.routing", report, ModelForm.ANY)
    if f.out["routing"] is None:
        del f.out["routing"]
    f.carry("env")
    f.carry("labelPropagation")
    model = Fields(f.take("model"), "spec.model", report)
    model.warn_drop(
        "autoDiscovery",
        "discovery is a model's own switch here (spec.discovery.enabled, on unless false); "
        "spec.model.autoDiscovery here applies only to models services create for "
        "spec.model.image",
    )
    model.finish("the runtime config's model block")
    if cluster:
        for key in ("imagePullSecrets", "serviceAccountName"):
            f.drop(
                key,
                "cluster runtime configs hold no credentials here: set it in each namespace's "
                f"AIMRuntimeConfig (spec.{key}) or on the models",
            )
    else:
        f.carry("imagePullSecrets")
        f.carry("serviceAccountName")
    doc["spec"] = f.finish(str(doc.get("kind")))
    return Kind.CLUSTER_RUNTIME_CONFIG if cluster else Kind.RUNTIME_CONFIG


def routing(value: JsonValue, path: str, report: Report, model: ModelForm) -> Obj | None:
    """A routing block: the same fields, with the path template read against this AIMService."""
    if value is None:
        return None
    f = Fields(value, path, report)
    for key in ("enabled", "gatewayRef", "hostnames", "requestTimeout", "annotations"):
        f.carry(key)
    template = f.take("pathTemplate")
    if isinstance(template, str):
        rewrite = rewrite_template(template, f"{path}.pathTemplate", model)
        f.out["pathTemplate"] = rewrite.template
        report.changes.extend(rewrite.changes)
        report.warnings.extend(rewrite.warnings)
        report.not_carried.extend(rewrite.unmapped)
    elif template is not None:
        f.out["pathTemplate"] = template
    return f.finish("routing")


# --- models ------------------------------------------------------------------------------------


def model(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMModel / AIMClusterModel."""
    f = _spec(doc, report)
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
    default_template = f.src.get("defaultServiceTemplate")
    f.carry("defaultServiceTemplate")
    if default_template:
        report.warnings.append(
            "spec.defaultServiceTemplate: carried; the operator stored it without using it, "
            "here a service on this model that names no template runs on it"
        )
    f.carry("runtimeConfigName")
    f.carry("imagePullSecrets")
    f.carry("env")
    f.carry("serviceAccountName")
    resources = f.src.get("resources")
    f.carry("resources")
    if resources:
        report.warnings.append(
            "spec.resources: carried; the operator's newest releases did not apply a model's "
            "resources, here they are the baseline of every inference container "
            "(templates and services override them)"
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
                f"spec.custom: {_show(custom)}; hardware and templates belong to custom models "
                "here (models with spec.modelSources); an image's templates come from its "
                "labels, or write AIMServiceTemplates for it"
            )
    why = (
        "profile-based onboarding has no counterpart here: set spec.image, and spec.modelSources "
        "with spec.custom for custom weights"
    )
    for key in ("aimId", "profiles", "derivedFrom", "profileCopy"):
        f.drop(key, why)
    doc["spec"] = f.finish(str(doc.get("kind")))
    return Kind.CLUSTER_MODEL if doc.get("kind") == "AIMClusterModel" else Kind.MODEL


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
        if _one_of(kind, _PROFILE_TYPES):
            out["type"] = kind
        else:
            report.not_carried.append(
                f"spec.custom.type: {_show(kind)}; types here are optimized, preview or "
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
    if _one_of(kind, _PROFILE_TYPES):
        f.out["type"] = kind
    elif kind is not None:
        report.not_carried.append(
            f"{path}.type: {_show(kind)}; types here are optimized, preview or unoptimized"
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
    cluster = doc.get("kind") == "AIMClusterServiceTemplate"
    f = _spec(doc, report)
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
    selector = f.take("gpuSelector")
    if selector is not None:
        f.out["hardware"] = {"gpu": gpu_selector(selector, "spec.gpuSelector", report)}
        report.changes.append("spec.gpuSelector: became spec.hardware.gpu (count → requests)")
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
    doc["spec"] = f.finish(str(doc.get("kind")))
    return Kind.CLUSTER_SERVICE_TEMPLATE if cluster else Kind.SERVICE_TEMPLATE


def profile_type(f: Fields, report: Report) -> None:
    """`type`: the same three values here; the operator's `general` has no counterpart."""
    kind = f.take("type")
    if _one_of(kind, _PROFILE_TYPES):
        f.out["type"] = kind
    elif kind is not None:
        report.not_carried.append(
            f"{f.path}.type: {_show(kind)}; types here are optimized, preview or unoptimized; "
            "left unset, discovery's answer is used"
        )


def gpu_selector(value: JsonValue, path: str, report: Report) -> Obj:
    """The older `gpuSelector{count, model, resourceName}` as `hardware.gpu`."""
    f = Fields(value, path, report)
    f.carry("count", "requests")
    f.carry("model")
    f.carry("resourceName")
    return f.finish("hardware.gpu")


# --- services ----------------------------------------------------------------------------------

_CACHING: Final = {
    "Always": True,
    "Shared": True,
    "Dedicated": True,
    "Never": False,
}


def service(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMService (v1alpha1; v1alpha2's profile path is handled in `operator_v1alpha2`)."""
    f = _spec(doc, report)
    f.out["model"] = service_model(f.take("model"), report)
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
    overrides = f.take("overrides")
    if overrides is not None:
        o = Fields(overrides, "spec.overrides", report)
        o.carry("metric")
        o.carry("precision")
        o.carry("hardware")
        selector = o.take("gpuSelector")
        if selector is not None:
            o.out["hardware"] = {
                "gpu": gpu_selector(selector, "spec.overrides.gpuSelector", report)
            }
            report.changes.append("spec.overrides.gpuSelector: became spec.overrides.hardware.gpu")
        f.out["overrides"] = o.finish("spec.overrides")
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
    if f.out.get("model") is None:
        del f.out["model"]
        if not any(n.startswith("spec.model") for n in report.not_carried):
            report.not_carried.append(
                "spec.model: unset; a service here names its model (spec.model.ref, .image "
                "or .custom)"
            )
    doc["spec"] = f.finish("AIMService")
    return Kind.SERVICE


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
        selector = c.take("gpuSelector")
        if selector is not None:
            c.out["hardware"] = {
                "gpu": gpu_selector(selector, "spec.model.custom.gpuSelector", report)
            }
            report.changes.append(
                "spec.model.custom.gpuSelector: became spec.model.custom.hardware.gpu"
            )
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
            f"spec.caching.mode: {_show(mode)}; not a mode: the operator's are Always, Shared, "
            "Dedicated and Never (Auto in older releases); set spec.cacheModel: true to cache"
        )
        if cache_model is not None:
            f.out["cacheModel"] = cache_model
    elif _one_of(mode, _CACHING):
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
            f"spec.caching: {_show(block)}; not a mapping: write spec.caching.mode, or "
            "spec.cacheModel: true to cache"
        )
        return None
    if set(block) - {"mode"}:
        report.not_carried.append(
            f"spec.caching: {_show(block)}; only caching.mode has a counterpart (cacheModel)"
        )
    return block.get("mode")


# --- caches ------------------------------------------------------------------------------------


def template_cache(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMTemplateCache."""
    f = _spec(doc, report)
    for key in ("templateName", "storageClassName", "env", "imagePullSecrets", "runtimeConfigName"):
        f.carry(key)
    scope(f, "templateScope", report)
    cache_mode(f, report)
    f.warn_drop(
        "downloadImage", "the operator did not use it; downloads run the model caches' image"
    )
    f.warn_drop(
        "modelSources",
        "the operator read the sources from the template's status, and so does this package",
    )
    doc["spec"] = f.finish("AIMTemplateCache")
    return Kind.TEMPLATE_CACHE


def scope(f: Fields, key: str, report: Report, new: str = "templateScope") -> None:
    """A template (or profile) scope: Namespace or Cluster; the operator's Unknown is dropped."""
    value = f.take(key)
    if value is not None and not isinstance(value, str):
        report.not_carried.append(
            f"spec.{key}: {_show(value)}; a scope is Namespace or Cluster, or unset (the "
            "namespace's template first, then the cluster's)"
        )
    elif value in ("Namespace", "Cluster"):
        f.out[new] = value
        if key != new:
            report.changes.append(f"spec.{key}: renamed spec.{new}")
    elif value is not None:
        report.changes.append(
            f"spec.{key}: {_show(value)} dropped; unset, the namespace's template is looked "
            "up first, then the cluster's"
        )


def cache_mode(f: Fields, report: Report, *, default_shared: bool = True) -> None:
    """`mode`: Shared (the operator's default for template caches) or Dedicated."""
    mode = f.take("mode")
    if mode is None and default_shared:
        mode = "Shared"
    if mode == "Shared":
        report.warnings.append(
            "spec.mode: Shared (also when unset); the model caches of a template cache here "
            "are its own: deleting it deletes them and their PVCs (the operator left shared "
            "artifacts behind)"
        )
    elif mode == "Dedicated":
        report.changes.append(
            "spec.mode: Dedicated dropped; a template cache here always owns its model caches"
        )
    elif mode is not None:
        report.not_carried.append(f"spec.mode: {_show(mode)}; no counterpart")


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


def model_cache(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMModelCache (older releases) and AIMArtifact (newer): both become AIMModelCache."""
    f = _spec(doc, report)
    if f.src.get("type") == "adapter":
        f.drop(
            "modelId",
            "clients ask for an adapter here by its cache's name (the service's "
            "spec.adapters[].name)",
        )
    for key in (
        "sourceUri",
        "modelId",
        "storageClassName",
        "size",
        "env",
        "imagePullSecrets",
        "runtimeConfigName",
        "type",
        "compatibleWith",
        "rank",
    ):
        f.carry(key)
    f.drop(
        "parentArtifact",
        "an adapter here names the base models it fits: set spec.compatibleWith to the "
        "parent's modelId",
    )
    f.warn_drop(
        "adapterDisk",
        "each service here stages its adapters onto a disk of its own (size it with the "
        "service's spec.adapterRuntime.diskSize)",
    )
    f.warn_drop(
        "modelDownloadImage",
        "the operator's downloader image runs its own scripts; model caches here run their "
        "download and size-check scripts in the default image (set spec.modelDownloadImage "
        "only to a mirror of it)",
    )
    cache_mode(f, report, default_shared=False)
    doc["spec"] = f.finish("AIMModelCache")
    return Kind.MODEL_CACHE


def model_source(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMClusterModelSource: the same fields."""
    f = _spec(doc, report)
    for key in ("registry", "imagePullSecrets", "versions", "maxModels", "syncInterval"):
        f.carry(key)
    filters = f.take("filters")
    if isinstance(filters, list):
        out: list[JsonValue] = []
        for i, item in enumerate(filters):
            g = Fields(item, f"spec.filters[{i}]", report)
            for key in ("image", "exclude", "versions"):
                g.carry(key)
            out.append(g.finish("a filter"))
        f.out["filters"] = out
    doc["spec"] = f.finish("AIMClusterModelSource")
    return Kind.CLUSTER_MODEL_SOURCE


RULES: Final[dict[str, Rule]] = {
    "AIMRuntimeConfig": runtime_config,
    "AIMClusterRuntimeConfig": runtime_config,
    "AIMModel": model,
    "AIMClusterModel": model,
    "AIMServiceTemplate": template,
    "AIMClusterServiceTemplate": template,
    "AIMService": service,
    "AIMTemplateCache": template_cache,
    "AIMModelCache": model_cache,
    "AIMArtifact": model_cache,
    "AIMClusterModelSource": model_source,
}

REFUSED: Final[dict[str, str]] = {
    "AIMKVCache": (
        "KV caches have no counterpart here; services run with the inference engine's own "
        "in-memory KV cache"
    ),
}
