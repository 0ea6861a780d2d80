"""The rules for this API's older generations (`aim.silogen.ai`): one per old kind, in place."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Final

from pydantic import JsonValue

from aim_migrate.migration import Context, Migration
from aim_migrate.objects import Head, mapping_at
from aim_migrate.routepaths import ModelForm, rewrite_template
from function.api.meta import API_VERSION, Kind

Manifest = dict[str, JsonValue]

_DNS_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def _image(doc: Manifest, m: Migration, _: Context) -> None:
    spec = _spec(doc)
    # Seed 000's AIMImage is cluster-scoped and keyed by spec.modelId; 001/002's is namespaced.
    if "modelId" in spec or Head.read(doc).kind == "AIMClusterImage":
        new_kind = Kind.CLUSTER_MODEL
    else:
        new_kind = Kind.MODEL
    _rename_kind(doc, new_kind, m)
    if new_kind == Kind.CLUSTER_MODEL and _namespace(doc):
        del _meta(doc)["namespace"]
        m.changes.append("metadata.namespace: dropped; AIMClusterModel is cluster-scoped")
    # AIMImages read their labels only when asked; the canonical models do unless told not to.
    discovery = mapping_at(spec, "discovery")
    if discovery is None:
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
            f"({Head.read(doc).name or None!r}), and references to {model_id!r} in this run were "
            "rewritten to it"
        )


def _cluster_config(doc: Manifest, m: Migration, _: Context) -> None:
    _rename_kind(doc, Kind.CLUSTER_RUNTIME_CONFIG, m)
    spec = _spec(doc)
    routing = mapping_at(spec, "routing")
    if routing is not None:
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
    if Head.read(doc).kind == Kind.CLUSTER_RUNTIME_CONFIG:
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
    overrides = mapping_at(spec, "overrides")
    if overrides is not None:
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
    routing = mapping_at(spec, "routing")
    if routing is None or "routeTemplate" not in routing:
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
    model = mapping_at(spec, "model")
    for form in (ModelForm.IMAGE, ModelForm.CUSTOM):
        if model is not None and form.value in model:
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
    m.changes.append(f"kind: {Head.read(doc).kind or None} became {kind}")
    doc["kind"] = kind.value
    doc["apiVersion"] = API_VERSION


def _spec(doc: Manifest) -> dict[str, JsonValue]:
    spec = doc.setdefault("spec", {})
    return spec if isinstance(spec, dict) else {}


def _meta(doc: Manifest) -> dict[str, JsonValue]:
    meta = doc.setdefault("metadata", {})
    return meta if isinstance(meta, dict) else {}


def _namespace(doc: Manifest) -> str | None:
    return Head.read(doc).namespace or None


RULES: Final[dict[str, Callable[[Manifest, Migration, Context], None]]] = {
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
