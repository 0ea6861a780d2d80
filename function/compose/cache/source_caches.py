"""The model caches of a template cache: one per model source of its template, and their health.

A standalone AIMModelCache in the namespace for the same source and storage class (one nobody
composed) is reused instead of composing a duplicate: it belongs to the platform team and
outlives every template cache that uses it. Otherwise the template cache composes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from function.api.cache import (
    CacheStatusValue,
    ModelCacheSpec,
    ModelCacheStatus,
    ModelCacheType,
    TemplateCacheSpec,
)
from function.api.common import ModelSource
from function.api.meta import Kind, Manifest
from function.api.template import ClusterServiceTemplateSpec, DiscoveredSource
from function.build.aim import build_aim_object
from function.kube.contract import Composition, Desired, Observed
from function.kube.lookup import Listing
from function.kube.objects import name_of, owner_references
from function.kube.parse import has_headline, parse_headline, parse_status
from function.kube.views import field_at, string_at
from function.rules import caching, labels
from function.rules.merge import merged_env
from function.rules.status import ConditionType, Health, Reason

MODEL_CACHE_PREFIX: Final = "model-cache-"
MODEL_CACHES: Final = Listing("model-caches", Kind.MODEL_CACHE)


@dataclass(frozen=True)
class Cache:
    """One model cache this template cache uses: composed by it, or reused."""

    name: str
    source_uri: str
    status: CacheStatusValue | None
    pvc: str | None


def cache_for(  # noqa: PLR0913 - one source's decision needs all of these
    observed: Observed,
    *,
    spec: TemplateCacheSpec,
    template: ClusterServiceTemplateSpec,
    source: DiscoveredSource,
    listed: tuple[Manifest, ...],
    comp: Composition,
) -> Cache:
    """Reuse a standalone cache of this source, or compose one."""
    for candidate in listed:
        owners = owner_references(candidate)
        if (
            string_at(candidate, "spec", "sourceUri") == source.source_uri
            and string_at(candidate, "spec", "type") != ModelCacheType.ADAPTER
            and field_at(candidate, "spec", "storageClassName") == spec.storage_class_name
            and not owners
        ):
            previous = parse_status(candidate, ModelCacheStatus)
            return Cache(
                name_of(candidate),
                source.source_uri,
                parse_headline(candidate, CacheStatusValue),
                previous.persistent_volume_claim if previous else None,
            )
    inline = _inline_source(template.model_sources, source.source_uri)
    env = merged_env(spec.env, inline.env if inline else None)
    name = caching.model_cache_name(source.source_uri, env, spec.storage_class_name)
    key = MODEL_CACHE_PREFIX + name
    current = observed.resources.get(key)
    model_cache = ModelCacheSpec(
        source_uri=source.source_uri,
        model_id=source.model_id,
        storage_class_name=spec.storage_class_name,
        size=source.size,
        env=env or None,
        image_pull_secrets=spec.image_pull_secrets,
        runtime_config_name=spec.runtime_config_name,
    )
    comp.resources[key] = Desired(
        build_aim_object(
            Kind.MODEL_CACHE,
            name=name,
            namespace=observed.namespace,
            labels={
                **labels.MANAGED_BY,
                labels.TEMPLATE_CACHE: labels.value(observed.name),
                labels.TEMPLATE: labels.value(spec.template_name),
            },
            spec=model_cache,
        ),
        ready=has_headline(current, CacheStatusValue.AVAILABLE),
    )
    previous = parse_status(current, ModelCacheStatus) if current is not None else None
    return Cache(
        name,
        source.source_uri,
        parse_headline(current, CacheStatusValue),
        previous.persistent_volume_claim if previous else None,
    )


def _inline_source(sources: Sequence[ModelSource] | None, uri: str) -> ModelSource | None:
    return next((s for s in sources or () if s.source_uri == uri), None)


def caches_health(caches: Sequence[Cache], *, waiting: bool) -> Health:
    """The template cache's CacheReady: its model caches as one component."""
    if waiting:
        return ConditionType.CACHE_READY.pending(Reason.CACHE_WAITING, "waiting for the template")
    if not caches:
        return ConditionType.CACHE_READY.pending(
            Reason.CACHES_CREATING, "no model sources listed yet"
        )
    failed = [c.name for c in caches if c.status == CacheStatusValue.FAILED]
    if failed:
        return ConditionType.CACHE_READY.failed(
            Reason.CACHE_FAILED, f"model caches failed: {', '.join(failed)}"
        )
    waiting_for = [
        f"{c.name} ({c.status or 'new'})" for c in caches if c.status != CacheStatusValue.AVAILABLE
    ]
    if waiting_for:
        return ConditionType.CACHE_READY.progressing(
            Reason.CACHES_NOT_READY,
            f"{len(caches) - len(waiting_for)}/{len(caches)} model caches Available; waiting for "
            + ", ".join(waiting_for),
        )
    return ConditionType.CACHE_READY.ready(
        Reason.CACHES_READY, f"{len(caches)} model caches Available"
    )
