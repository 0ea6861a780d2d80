"""The AIM operator's caches (template, model and artifact caches) and model sources."""

from __future__ import annotations

from pydantic import JsonValue

from aim_migrate.operator import Fields, Obj, OperatorContext, Report, show, spec_fields
from function.api.meta import Kind


def template_cache(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMTemplateCache."""
    f = spec_fields(doc, report)
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
            f"spec.{key}: {show(value)}; a scope is Namespace or Cluster, or unset (the "
            "namespace's template first, then the cluster's)"
        )
    elif value in ("Namespace", "Cluster"):
        f.out[new] = value
        if key != new:
            report.changes.append(f"spec.{key}: renamed spec.{new}")
    elif value is not None:
        report.changes.append(
            f"spec.{key}: {show(value)} dropped; unset, the namespace's template is looked "
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
        report.not_carried.append(f"spec.mode: {show(mode)}; no counterpart")


def model_cache(doc: Obj, report: Report, _: OperatorContext) -> Kind:
    """AIMModelCache (older releases) and AIMArtifact (newer): both become AIMModelCache."""
    f = spec_fields(doc, report)
    if f.peek("type") == "adapter":
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
    f = spec_fields(doc, report)
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
