"""The conversion rules, one per old kind, as pure functions over manifests.

Each rule records what it changed and what it could not carry, so a person can review the result
the way they would review `kubectl convert` output. Rules never guess: a value that has no place
in the canonical API is reported, not invented around.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from aim_migrate import operator, operator_v1alpha1, operator_v1alpha2
from aim_migrate.operator import OperatorContext
from aim_migrate.routepaths import ModelForm, rewrite_template
from function.api.meta import API_VERSION, GROUP, Kind

Manifest = dict[str, JsonValue]

_DNS_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


@dataclass
class Migration:
    """One manifest's conversion: the result and what a reviewer should know about it."""

    source: str
    manifest: JsonValue
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Carried over, but it behaves differently from before or not for every object."""
    not_carried: list[str] = field(default_factory=list)
    dropped: bool = False
    """No counterpart: the object is left out of the output (not_carried says why)."""

    @property
    def target(self) -> str:
        """`Kind/name` of the result."""
        return _describe(self.manifest)


@dataclass(frozen=True)
class Context:
    """What the other manifests of the same run tell about model ids (seed 000)."""

    model_ids: dict[str, str] = field(default_factory=dict)
    """Old `spec.modelId` of an AIMImage → that image's `metadata.name`."""
    operator: OperatorContext = field(default_factory=OperatorContext)
    """Models and profiles among the AIM operator's manifests of the run."""


def migrate(doc: JsonValue, context: Context) -> Migration:
    """Convert one manifest; anything that is not an AIM manifest passes through unchanged.

    The API group picks the rules: `aim.silogen.ai` (this API and its older generations) here,
    `aim.eai.amd.com` (the AIM operator's v1alpha1 and v1alpha2) in `operator`.
    """
    m = Migration(source=_describe(doc), manifest=copy.deepcopy(doc))
    if not isinstance(m.manifest, dict):
        return m
    if operator.is_operator(m.manifest):
        _from_operator(m.manifest, m, context)
    elif is_aim(m.manifest):
        rule = _RULES.get(str(m.manifest.get("kind")))
        if rule is not None:
            rule(m.manifest, m, context)
    else:
        return m
    if "status" in m.manifest and not m.dropped:
        del m.manifest["status"]
        m.changes.append("status: dropped; the function writes status")
    return m


def _from_operator(doc: Manifest, m: Migration, context: Context) -> None:
    version = str(doc.get("apiVersion", "")).partition("/")[2]
    rules: dict[str, operator.Rule] = dict(operator_v1alpha1.RULES)
    if version == "v1alpha2":
        rules |= operator_v1alpha2.RULES
    elif version != "v1alpha1":
        rules = {}
    report = operator.Report(m.changes, m.warnings, m.not_carried)
    refused = {**operator_v1alpha1.REFUSED, **operator_v1alpha2.REFUSED}
    if not rules:
        refused = dict.fromkeys(
            [str(doc.get("kind"))], f"{doc.get('apiVersion')} is not a version this converter knows"
        )
    operator.convert(doc, report, context.operator, rules, refused)
    m.dropped = report.dropped


def collect_context(docs: list[JsonValue]) -> Context:
    """What references between the manifests of a run need.

    Seed-000 AIMImages' model ids, and the operator's models (by image) and profiles (by name).
    """
    ids: dict[str, str] = {}
    for doc in docs:
        if isinstance(doc, dict) and is_aim(doc) and doc.get("kind") == "AIMImage":
            spec, meta = doc.get("spec"), doc.get("metadata")
            if isinstance(spec, dict) and isinstance(meta, dict):
                model_id, name = spec.get("modelId"), meta.get("name")
                if isinstance(model_id, str) and isinstance(name, str):
                    ids[model_id] = name
    return Context(model_ids=ids, operator=operator.collect(docs))


def _image(doc: Manifest, m: Migration, _: Context) -> None:
    spec = _spec(doc)
    # Seed 000's AIMImage is cluster-scoped and keyed by spec.modelId; 001/002's is namespaced.
    if "modelId" in spec or doc.get("kind") == "AIMClusterImage":
        new_kind = Kind.CLUSTER_MODEL
    else:
        new_kind = Kind.MODEL
    _rename_kind(doc, new_kind, m)
    if new_kind == Kind.CLUSTER_MODEL and _namespace(doc):
        del _meta(doc)["namespace"]
        m.changes.append("metadata.namespace: dropped; AIMClusterModel is cluster-scoped")
    # AIMImages read their labels only when asked; the canonical models do unless told not to.
    discovery = spec.get("discovery")
    if not isinstance(discovery, dict):
        discovery = spec["discovery"] = {}
    if "enabled" not in discovery:
        discovery["enabled"] = False
        m.changes.append(
            "spec.discovery.enabled: set to false, the AIMImage default; models discover by "
            "default, so remove it to have the image's labels read"
        )
    model_id = spec.pop("modelId", None)
    if model_id is not None:
        m.changes.append(
            f"spec.modelId: dropped; models are referenced by metadata.name "
            f"({_meta(doc).get('name')!r}), and references to {model_id!r} in this run were "
            "rewritten to it"
        )


def _cluster_config(doc: Manifest, m: Migration, _: Context) -> None:
    _rename_kind(doc, Kind.CLUSTER_RUNTIME_CONFIG, m)
    spec = _spec(doc)
    routing = spec.get("routing")
    if isinstance(routing, dict):
        if "gateway" in routing:
            routing["gatewayRef"] = routing.pop("gateway")
            m.changes.append("spec.routing.gateway: renamed spec.routing.gatewayRef")
        # Seed 000 created routes unless told not to; the canonical default is off.
        enabled = routing.pop("autoCreateRoute", True)
        routing["enabled"] = enabled
        m.changes.append(
            f"spec.routing.autoCreateRoute: became spec.routing.enabled: {str(enabled).lower()}"
        )
    if "cacheStorageClassName" in spec:
        spec["defaultStorageClassName"] = spec.pop("cacheStorageClassName")
        m.changes.append("spec.cacheStorageClassName: renamed spec.defaultStorageClassName")
    _drop_credentials(spec, m)


def _runtime_config(doc: Manifest, m: Migration, _: Context) -> None:
    spec = _spec(doc)
    _route_template(spec, "spec.routing", m, ModelForm.ANY)
    if doc.get("kind") == Kind.CLUSTER_RUNTIME_CONFIG:
        _drop_credentials(spec, m)


def _canonical(doc: Manifest, m: Migration, _: Context) -> None:
    """Kinds whose every field is canonical already."""


def _template(doc: Manifest, m: Migration, context: Context) -> None:
    spec = _spec(doc)
    for old in ("aimImageName", "modelId"):
        if old in spec:
            spec["modelName"] = _model_ref(spec.pop(old), f"spec.{old}", m, context)
            m.changes.append(f"spec.{old}: renamed spec.modelName")
    _gpu_selector(spec, "spec", m)


def _service(doc: Manifest, m: Migration, context: Context) -> None:
    spec = _spec(doc)
    for old in ("aimImageName", "aimModelId"):
        if old in spec:
            spec["model"] = {"ref": _model_ref(spec.pop(old), f"spec.{old}", m, context)}
            m.changes.append(f"spec.{old}: became spec.model.ref")
    if "templateRef" in spec:
        spec["template"] = {"name": spec.pop("templateRef")}
        m.changes.append("spec.templateRef: became spec.template.name")
    if "configRef" in spec:
        spec["runtimeConfigName"] = spec.pop("configRef")
        m.changes.append(
            "spec.configRef: renamed spec.runtimeConfigName (the AIMClusterConfig it named "
            "migrates to the AIMClusterRuntimeConfig of the same name)"
        )
    overrides = spec.get("overrides")
    if isinstance(overrides, dict):
        _gpu_selector(overrides, "spec.overrides", m)
    _route_template(spec, "spec.routing", m, _model_form(spec))


def _template_cache(doc: Manifest, m: Migration, _: Context) -> None:
    spec = _spec(doc)
    if "templateRef" in spec:
        spec["templateName"] = spec.pop("templateRef")
        m.changes.append("spec.templateRef: renamed spec.templateName")


def _model_cache(doc: Manifest, m: Migration, _: Context) -> None:
    _rename_kind(doc, Kind.MODEL_CACHE, m)


def _gpu_selector(parent: dict[str, JsonValue], path: str, m: Migration) -> None:
    selector = parent.pop("gpuSelector", None)
    if not isinstance(selector, dict):
        return
    gpu: dict[str, JsonValue] = {}
    if "count" in selector:
        gpu["requests"] = selector.pop("count")
    if "model" in selector:
        gpu["model"] = selector.pop("model")
    for leftover in selector:
        m.not_carried.append(f"{path}.gpuSelector.{leftover}: no canonical field")
    hardware = parent.setdefault("hardware", {})
    if isinstance(hardware, dict):
        hardware["gpu"] = gpu
    m.changes.append(f"{path}.gpuSelector: became {path}.hardware.gpu (count → requests)")


def _route_template(spec: dict[str, JsonValue], path: str, m: Migration, model: ModelForm) -> None:
    routing = spec.get("routing")
    if not isinstance(routing, dict) or "routeTemplate" not in routing:
        return
    template = routing.pop("routeTemplate")
    m.changes.append(f"{path}.routeTemplate: renamed {path}.pathTemplate")
    if isinstance(template, str):
        rewrite = rewrite_template(template, f"{path}.pathTemplate", model)
        template = rewrite.template
        m.changes += rewrite.changes
        m.warnings += rewrite.warnings
        m.not_carried += rewrite.unmapped
    routing["pathTemplate"] = template


def _model_form(spec: dict[str, JsonValue]) -> ModelForm:
    """How the converted service names its model (the old generations: always by name)."""
    model = spec.get("model")
    for form in (ModelForm.IMAGE, ModelForm.CUSTOM):
        if isinstance(model, dict) and form.value in model:
            return form
    return ModelForm.REF


def _drop_credentials(spec: dict[str, JsonValue], m: Migration) -> None:
    for key in ("imagePullSecrets", "serviceAccountName"):
        if key in spec:
            value = spec.pop(key)
            m.not_carried.append(
                f"spec.{key}: {json.dumps(value)}; cluster runtime configs hold no credentials: "
                f"set them in each namespace's AIMRuntimeConfig (spec.{key}) or on the models"
            )


def _model_ref(value: JsonValue, path: str, m: Migration, context: Context) -> JsonValue:
    if isinstance(value, str) and value in context.model_ids:
        name = context.model_ids[value]
        m.changes.append(f"{path}: model id {value!r} is the model named {name!r}")
        return name
    if not (isinstance(value, str) and _DNS_SUBDOMAIN.match(value)):
        m.not_carried.append(
            f"{path}: {value!r} is a model id, not a model name; set it to the metadata.name of "
            "the AIMModel/AIMClusterModel (migrate the AIMImage in the same run to map it)"
        )
    return value


def _rename_kind(doc: Manifest, kind: Kind, m: Migration) -> None:
    m.changes.append(f"kind: {doc.get('kind')} became {kind}")
    doc["kind"] = kind.value
    doc["apiVersion"] = API_VERSION


def _spec(doc: Manifest) -> dict[str, JsonValue]:
    spec = doc.setdefault("spec", {})
    return spec if isinstance(spec, dict) else {}


def _meta(doc: Manifest) -> dict[str, JsonValue]:
    meta = doc.setdefault("metadata", {})
    return meta if isinstance(meta, dict) else {}


def _namespace(doc: Manifest) -> str | None:
    ns = _meta(doc).get("namespace")
    return ns if isinstance(ns, str) and ns else None


def is_aim(doc: Manifest) -> bool:
    """Whether the object belongs to the AIM API group (any generation)."""
    return str(doc.get("apiVersion", "")).split("/", 1)[0] == GROUP


def _describe(doc: JsonValue) -> str:
    if not isinstance(doc, dict):
        return "(not an object)"
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{doc.get('kind', '(no kind)')}/{name or '(no name)'}"


_RULES: Final[dict[str, Callable[[Manifest, Migration, Context], None]]] = {
    "AIMImage": _image,
    "AIMClusterImage": _image,
    "AIMClusterConfig": _cluster_config,
    "ModelCache": _model_cache,
    Kind.RUNTIME_CONFIG: _runtime_config,
    Kind.CLUSTER_RUNTIME_CONFIG: _runtime_config,
    Kind.MODEL: _canonical,
    Kind.CLUSTER_MODEL: _canonical,
    Kind.MODEL_CACHE: _canonical,
    Kind.SERVICE_TEMPLATE: _template,
    Kind.CLUSTER_SERVICE_TEMPLATE: _template,
    Kind.SERVICE: _service,
    Kind.TEMPLATE_CACHE: _template_cache,
}
