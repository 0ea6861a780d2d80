"""The AIM operator's runtime configs, and the routing block runtime configs and services share."""

from __future__ import annotations

from pydantic import JsonValue

from aim_migrate.objects import Head
from aim_migrate.operator import Fields, Obj, OperatorContext, Report, spec_fields
from aim_migrate.routepaths import ModelForm, rewrite_template
from function.api.meta import Kind


def runtime_config(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMRuntimeConfig / AIMClusterRuntimeConfig: storage flattened, the rest the same."""
    cluster = Head.read(doc).kind == "AIMClusterRuntimeConfig"
    f = spec_fields(doc, report)
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
    doc["spec"] = f.finish(Head.read(doc).kind)
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
