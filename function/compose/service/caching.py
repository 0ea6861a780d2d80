"""Model caches for a service: which PVCs its InferenceService mounts, and the cache it composes.

A service uses caches with `spec.cacheModel`, with a template that caches itself
(`caching.enabled`), and always for a custom model: its weights are not in any image, so a cache
is how they reach the runtime. Every model source of the template must then have an Available
AIMModelCache in the namespace before the InferenceService is created; each cache's PVC is
mounted read-only at `/workspace/cache/<modelId>`, where AIM images look for weights. When no
cache exists for the template, the service composes an AIMTemplateCache (owned by it) to fill
them, unless the template caches itself. A cache that stops being Available after the
InferenceService exists degrades the service; the InferenceService keeps its volumes (it is never
silently unmounted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from function import caching, labels, naming
from function.api.cache import ModelCacheStatus, TemplateCacheSpec, TemplateScope
from function.api.meta import API_VERSION, Kind
from function.api.model import ModelSpec
from function.api.service import AIMServiceSpec
from function.api.template import ServiceTemplateSpec, TemplateStatus
from function.build import Manifest
from function.build.kserve import CacheMount
from function.compose.service.inference import INFERENCE_SERVICE
from function.compose.service.template import Template
from function.resolve import Listing, Resolved, name_of
from function.state import Desired, Observed, Requirement, keep, parse_status
from function.status import ConditionType, Health, Reason, State, aim_status

TEMPLATE_CACHE: Final = "template-cache"
"""Composition-resource name of the AIMTemplateCache a service composes."""
_AVAILABLE: Final = "Available"


@dataclass(frozen=True)
class CacheOutcome:
    """Whether the caches allow the InferenceService, what it mounts, and what to compose."""

    health: Health | None = None
    mounts: tuple[CacheMount, ...] = ()
    desired: Desired | None = None

    @property
    def ready(self) -> bool:
        """Caching is off, or every source has an Available cache."""
        return self.health is None or self.health.state is State.READY


def _listing(namespace: str) -> Listing:
    return Listing("model-caches", Kind.MODEL_CACHE, namespace)


def _self_caching(template: Template | None) -> bool:
    spec = template.spec if template else None
    return isinstance(spec, ServiceTemplateSpec) and bool(spec.caching and spec.caching.enabled)


def uses_caches(
    spec: AIMServiceSpec, template: Template | None, model: Resolved[ModelSpec] | None
) -> bool:
    """Whether the service runs on caches: asked for, the template's own, or a custom model."""
    custom = model is not None and bool(model.spec.model_sources)
    return spec.cache_model or _self_caching(template) or custom


def requirements(
    spec: AIMServiceSpec,
    namespace: str,
    template: Template | None,
    model: Resolved[ModelSpec] | None,
) -> list[Requirement]:
    """The namespace's model caches, when the service uses caches."""
    if uses_caches(spec, template, model):
        return [_listing(namespace).requirement()]
    return []


def resolve(
    observed: Observed,
    spec: AIMServiceSpec,
    template: Template | None,
    model: Resolved[ModelSpec] | None,
    *,
    template_ready: bool,
) -> CacheOutcome:
    """The caches of the template's model sources, once the template is Available."""
    if not uses_caches(spec, template, model):
        return CacheOutcome()
    current = observed.resources.get(TEMPLATE_CACHE)
    kept = keep(current, ready=aim_status(current) == _AVAILABLE) if current else None
    if template is None or not template_ready:
        return CacheOutcome(
            _health(State.PENDING, Reason.CACHE_WAITING, "waiting for the template"), desired=kept
        )
    listed = _listing(observed.namespace).items(observed.required)
    if listed is None:
        return CacheOutcome(
            _health(State.PENDING, Reason.RESOLVING, "listing model caches"), desired=kept
        )
    status = parse_status(template.manifest, TemplateStatus) or TemplateStatus()
    mounts: list[CacheMount] = []
    missing: list[str] = []
    for source in status.model_sources or ():
        cache = _available_cache(listed, source.source_uri)
        if cache is None:
            missing.append(source.source_uri)
            continue
        name, pvc = cache
        mounts.append(
            CacheMount(
                volume=name,
                claim_name=pvc,
                mount_path=caching.mount_path(source.model_id, name),
                read_only=True,
            )
        )
    desired = kept
    if desired is None and not _self_caching(template) and (missing or not status.model_sources):
        desired = Desired(_template_cache(observed, spec, template), ready=False)
    if not missing:
        names = ", ".join(m.claim_name for m in mounts) or "none needed"
        return CacheOutcome(
            _health(State.READY, Reason.CACHES_READY, f"model caches mounted: {names}"),
            tuple(mounts),
            desired,
        )
    if INFERENCE_SERVICE in observed.resources:
        return CacheOutcome(
            _health(
                State.DEGRADED,
                Reason.CACHE_LOST,
                f"no Available model cache for {', '.join(missing)}; the InferenceService keeps "
                "its volumes until the cache is back",
            ),
            desired=desired,
        )
    return CacheOutcome(
        _health(
            State.PROGRESSING,
            Reason.CACHES_NOT_READY,
            f"waiting for model caches of {', '.join(missing)}; the InferenceService is created "
            "once they are Available",
        ),
        desired=desired,
    )


def _available_cache(listed: Sequence[Manifest], uri: str) -> tuple[str, str] | None:
    for cache in listed:
        spec = cache.get("spec")
        if not isinstance(spec, dict) or spec.get("sourceUri") != uri:
            continue
        status = parse_status(cache, ModelCacheStatus)
        if status and status.status.value == _AVAILABLE and status.persistent_volume_claim:
            return name_of(cache), status.persistent_volume_claim
    return None


def _template_cache(observed: Observed, spec: AIMServiceSpec, template: Template) -> Manifest:
    cluster = template.kind == Kind.CLUSTER_SERVICE_TEMPLATE
    own = template.spec.caching if isinstance(template.spec, ServiceTemplateSpec) else None
    cache = TemplateCacheSpec(
        template_name=template.name,
        template_scope=TemplateScope.CLUSTER if cluster else TemplateScope.NAMESPACE,
        # The downloads see what the runtime sees, with the template's caching env over it and
        # the service's over both.
        env=caching.merged_env(template.spec.env, own.env if own else None, spec.env) or None,
        runtime_config_name=spec.runtime_config_name,
    )
    return {
        "apiVersion": API_VERSION,
        "kind": Kind.TEMPLATE_CACHE.value,
        "metadata": {
            "name": naming.derived_name([template.name], [observed.namespace]),
            "namespace": observed.namespace,
            "labels": {**labels.MANAGED_BY, labels.SERVICE: labels.value(observed.name)},
        },
        "spec": cache.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def _health(state: State, reason: str, message: str) -> Health:
    return Health(ConditionType.CACHE_READY, state, reason, message)
