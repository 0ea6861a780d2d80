"""Whether a service uses model caches, what it asks Crossplane to list, and what it can mount.

The model caches a service mounts may be any template cache's (or standalone ones); those of a
template cache past its retention are being deleted, and are not mounted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from function.api.cache import (
    CacheStatusValue,
    ModelCacheStatus,
    ModelCacheType,
    TemplateCacheStatus,
)
from function.api.meta import Kind, Manifest
from function.api.runtimeconfig import CachingMode
from function.api.service import AIMServiceSpec
from function.api.template import ServiceTemplateSpec
from function.build.kserve import CacheMount
from function.compose.refs import Model
from function.compose.service.composed_model import services
from function.compose.service.outcome import Template
from function.kube.claims import COMPOSITE_PREFIX
from function.kube.contract import Observed, Requirement
from function.kube.lookup import Listing
from function.kube.objects import (
    controller_ref,
    name_of,
)
from function.kube.parse import parse_status
from function.kube.views import string_at
from function.rules import caching, labels
from function.rules.discovery import timestamp
from function.rules.runtimeconfig import RuntimeConfig

NAMESPACE: Final = "namespace"
"""Requirement name of the service's Namespace, which keeps the caches services make."""


def uses_caches(
    spec: AIMServiceSpec,
    template: Template | None,
    model: Model | None,
    config: RuntimeConfig | None,
) -> bool:
    """Whether the service runs on caches: the template's own, a custom model, or asked for.

    The service's `cacheModel` asks when it is set, its runtime config's `caching.mode` when not.
    """
    if self_caching(template) or (model is not None and bool(model.spec.model_sources)):
        return True
    if spec.cache_model is not None:
        return spec.cache_model
    caching = config.spec.caching if config else None
    return caching is not None and caching.mode is CachingMode.ALWAYS


def self_caching(template: Template | None) -> bool:
    """Whether the template caches itself (`caching.enabled`): its own cache is the one used."""
    spec = template.spec if template else None
    return isinstance(spec, ServiceTemplateSpec) and bool(spec.caching and spec.caching.enabled)


def requirements(
    spec: AIMServiceSpec,
    namespace: str,
    template: Template | None,
    model: Model | None,
    config: RuntimeConfig | None,
) -> list[Requirement]:
    """The namespace's model caches, template caches and services, when the service uses caches.

    The template caches and services decide whether a template cache is shared, and with whom;
    the Namespace object is the owner that keeps a template cache after its last service.
    """
    if uses_caches(spec, template, model, config):
        return [
            listing(namespace).requirement(),
            template_caches(namespace).requirement(),
            services(namespace).requirement(),
            Requirement(NAMESPACE, "v1", "Namespace", match_name=namespace),
        ]
    return []


def listing(namespace: str) -> Listing:
    """The namespace's model caches (the adapters' too: Crossplane lists them once)."""
    return Listing("model-caches", Kind.MODEL_CACHE, namespace)


def template_caches(namespace: str) -> Listing:
    """The namespace's template caches, whose services share them."""
    return Listing("template-caches", Kind.TEMPLATE_CACHE, namespace)


def mounts_of(
    template: Template, listed: Sequence[Manifest], expiring: frozenset[str]
) -> tuple[list[CacheMount], list[str], set[str]]:
    """A read-only mount per model source with an Available cache.

    Also the sources without one, and the template caches that filled those mounted.
    """
    mounts: list[CacheMount] = []
    missing: list[str] = []
    filled_by: set[str] = set()
    for source in template.status.model_sources or ():
        cache = _available_cache(listed, source.source_uri, expiring)
        if cache is None:
            missing.append(source.source_uri)
            continue
        name, pvc, owner = cache
        if owner:
            filled_by.add(owner)
        mounts.append(
            CacheMount(
                volume=name,
                claim_name=pvc,
                mount_path=caching.mount_path(source.model_id, name),
                read_only=True,
            )
        )
    return mounts, missing, filled_by


def past_retention(shared: Sequence[Manifest], observed: Observed) -> frozenset[str]:
    """Template caches past their retention: their model caches are being deleted.

    Mounting one would start a service on a PVC that is going; the service waits instead, and
    relying on the template cache brings its model caches back.
    """
    names = set()
    for cache in shared:
        status = parse_status(cache, TemplateCacheStatus)
        until = timestamp(status.retained_until) if status and status.retained_until else None
        if until is not None and until <= observed.now:
            names.add(name_of(cache))
    return frozenset(names)


def _available_cache(
    listed: Sequence[Manifest], uri: str, expiring: frozenset[str]
) -> tuple[str, str, str | None] | None:
    """An Available cache of `uri`: its name, its PVC, and the template cache that composed it.

    Model caches of a template cache past its retention do not count.
    """
    for cache in listed:
        # An adapter of the same source is no model's weights.
        if string_at(cache, "spec", "sourceUri") != uri or (
            string_at(cache, "spec", "type") == ModelCacheType.ADAPTER
        ):
            continue
        status = parse_status(cache, ModelCacheStatus)
        if (
            status
            and status.status is CacheStatusValue.AVAILABLE
            and status.persistent_volume_claim
            and _filled_by(cache) not in expiring
        ):
            return name_of(cache), status.persistent_volume_claim, _filled_by(cache)
    return None


def _filled_by(cache: Manifest) -> str | None:
    """The template cache that composed a model cache, if one did.

    In the claims flavour the controller is the template cache's composite, named by Crossplane;
    the template cache's own name is in the label it puts on what it composes.
    """
    ref = controller_ref(cache) or {}
    kind = string_at(ref, "kind")
    if kind == Kind.TEMPLATE_CACHE:
        return string_at(ref, "name")
    if kind == COMPOSITE_PREFIX + Kind.TEMPLATE_CACHE:
        return string_at(cache, "metadata", "labels", labels.TEMPLATE_CACHE) or None
    return None
