"""Model caches for a service: which PVCs its InferenceService mounts, and the cache it composes.

A service uses caches with `spec.cacheModel: true` (or, when it leaves the field unset, with its
runtime config's `caching.mode: Always`), with a template that caches itself (`caching.enabled`),
and always for a custom model: its weights are not in any image, so a cache is how they reach the
runtime. Every model source of the template must then have an Available
AIMModelCache in the namespace before the InferenceService is created; each cache's PVC is
mounted read-only at `/workspace/cache/<modelId>`, where AIM images look for weights. When no
cache exists for the template, the service composes an AIMTemplateCache (owned by it) to fill
them, unless the template caches itself. A cache that stops being Available after the
InferenceService exists degrades the service; the InferenceService keeps its volumes (it is never
silently unmounted).

Services of one namespace on one template share that AIMTemplateCache, as they share models
(`function.kube.owners`): it has one name per template and namespace, the service that composed it
lists the others that rely on it (`status.templateCache`) as owners, and when that service is
deleted the next one adopts it, with its model caches and their PVCs. For an image model the
namespace is an owner too (a shared cache), so the cache outlives the last of its services: it
keeps its weights for the runtime config's `caching.retention`
(`function.compose.cache.template_cache`), and a service that comes back within that time adopts
it and mounts them without downloading. A custom model's cache is dedicated to it, and goes with
its last service.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from pydantic import JsonValue

from function.api.cache import (
    CacheStatusValue,
    ModelCacheStatus,
    ModelCacheType,
    TemplateCacheSpec,
    TemplateCacheStatus,
    TemplateScope,
)
from function.api.meta import Kind, Manifest
from function.api.runtimeconfig import CachingMode
from function.api.service import AIMServiceSpec
from function.api.template import ServiceTemplateSpec
from function.build.aim import build_aim_object
from function.build.kserve import CacheMount
from function.compose.cache.usage import relied_on
from function.compose.refs import Model
from function.compose.service.inference import INFERENCE_SERVICE
from function.compose.service.model import services
from function.compose.service.template import Template
from function.kube.claims import COMPOSITE_PREFIX
from function.kube.contract import Desired, Observed, Requirement, keep
from function.kube.lookup import Listing
from function.kube.objects import (
    controller_ref,
    controller_uid,
    labels_of,
    metadata_of,
    name_of,
    owner_references,
    uid_of,
)
from function.kube.owners import with_co_owners
from function.kube.parse import has_headline, parse_status
from function.kube.views import string_at
from function.rules import caching, labels, naming
from function.rules.discovery import timestamp
from function.rules.merge import merged_env
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State

TEMPLATE_CACHE: Final = "template-cache"
"""Composition-resource name of the AIMTemplateCache a service composes."""
NAMESPACE: Final = "namespace"
"""Requirement name of the service's Namespace, which keeps the caches services make."""


@dataclass(frozen=True)
class CacheOutcome:
    """Whether the caches allow the InferenceService, what it mounts, and what to compose."""

    health: Health | None = None
    mounts: tuple[CacheMount, ...] = ()
    desired: Desired | None = None
    template_cache: str | None = None
    """The AIMTemplateCache the service relies on: its own, the template's or a shared one."""

    @property
    def ready(self) -> bool:
        """Caching is off, or every source has an Available cache."""
        return self.health is None or self.health.state is State.READY


def _listing(namespace: str) -> Listing:
    return Listing("model-caches", Kind.MODEL_CACHE, namespace)


def _template_caches(namespace: str) -> Listing:
    return Listing("template-caches", Kind.TEMPLATE_CACHE, namespace)


def _self_caching(template: Template | None) -> bool:
    spec = template.spec if template else None
    return isinstance(spec, ServiceTemplateSpec) and bool(spec.caching and spec.caching.enabled)


def uses_caches(
    spec: AIMServiceSpec,
    template: Template | None,
    model: Model | None,
    config: RuntimeConfig | None,
) -> bool:
    """Whether the service runs on caches: the template's own, a custom model, or asked for.

    The service's `cacheModel` asks when it is set, its runtime config's `caching.mode` when not.
    """
    if _self_caching(template) or (model is not None and bool(model.spec.model_sources)):
        return True
    if spec.cache_model is not None:
        return spec.cache_model
    caching = config.spec.caching if config else None
    return caching is not None and caching.mode is CachingMode.ALWAYS


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
            _listing(namespace).requirement(),
            _template_caches(namespace).requirement(),
            services(namespace).requirement(),
            Requirement(NAMESPACE, "v1", "Namespace", match_name=namespace),
        ]
    return []


def resolve(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    spec: AIMServiceSpec,
    template: Template | None,
    model: Model | None,
    config: RuntimeConfig | None,
    *,
    template_ready: bool,
) -> CacheOutcome:
    """The caches of the template's model sources, once the template is Available.

    Whatever the path, a template cache the service keeps composing keeps the Namespace among
    its owners (for an image model), so no call leaves it to die with the service.
    """
    outcome = _resolve(observed, spec, template, model, config, template_ready=template_ready)
    if outcome.desired is None:
        return outcome
    # Image models share their caches, and keep them past their services; a custom model's
    # cache is its own (dedicated) and goes with it. A model not resolved yet adds no keeper
    # but keeps the one the cache has.
    shared = model is not None and not model.spec.model_sources
    current = observed.resources.get(TEMPLATE_CACHE) or outcome.desired.manifest
    manifest = _kept_by_namespace(observed, outcome.desired.manifest, current, add=shared)
    return replace(outcome, desired=Desired(manifest, ready=outcome.desired.ready))


def _resolve(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    spec: AIMServiceSpec,
    template: Template | None,
    model: Model | None,
    config: RuntimeConfig | None,
    *,
    template_ready: bool,
) -> CacheOutcome:
    current = observed.resources.get(TEMPLATE_CACHE)
    if not uses_caches(spec, template, model, config):
        if current is None:
            return CacheOutcome()
        # Caching turned off (or the runtime config that turned it on is not known now): the
        # cache this service made is not dropped, which would delete the weights at once. It
        # is kept; once the service no longer relies on it, it counts down its retention.
        unknown = config is None and spec.cache_model is None
        return CacheOutcome(
            desired=_ours(observed, current, current),
            template_cache=name_of(current) if unknown else None,
        )
    kept = _ours(observed, current, current) if current else None
    relied_on = name_of(current) if current else None
    if template is None or not template_ready:
        return CacheOutcome(
            ConditionType.CACHE_READY.pending(Reason.CACHE_WAITING, "waiting for the template"),
            desired=kept,
            template_cache=relied_on,
        )
    listed = _listing(observed.namespace).items(observed.required)
    shared = _template_caches(observed.namespace).items(observed.required)
    if listed is None or shared is None or NAMESPACE not in observed.required:
        return CacheOutcome(
            ConditionType.CACHE_READY.pending(Reason.RESOLVING, "listing model caches"),
            desired=kept,
            template_cache=relied_on,
        )
    mounts: list[CacheMount] = []
    missing: list[str] = []
    filled_by: set[str] = set()
    expiring = _past_retention(shared, observed)
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
    desired, relied_on = _template_cache_to_use(
        observed,
        spec,
        template,
        current=kept,
        shared=shared,
        needed=bool(missing) or not template.status.model_sources,
        filled_by=filled_by,
    )
    return _outcome(observed, mounts, missing, desired, relied_on)


def _template_cache_to_use(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    spec: AIMServiceSpec,
    template: Template,
    *,
    current: Desired | None,
    shared: Sequence[Manifest],
    needed: bool,
    filled_by: set[str],
) -> tuple[Desired | None, str | None]:
    """The template cache to compose (if any) and the one the service relies on (if any)."""
    if _self_caching(template):
        return current, template.name  # the template composes its own, named after itself
    if current is not None:
        return current, name_of(current.manifest)
    fresh = _template_cache(observed, spec, template)
    existing = next((c for c in shared if name_of(c) == name_of(fresh)), None)
    if existing is not None:
        orphan = controller_uid(existing) is None and labels.SERVICE in labels_of(existing)
        # An orphan's composer was deleted and the garbage collector kept it for its other
        # users: this one adopts it. One another service controls is relied on as it is.
        return (_ours(observed, existing, existing) if orphan else None), name_of(existing)
    if needed:
        return Desired(fresh, ready=False), name_of(fresh)
    # Every cache is Available: the template cache that filled them (if any) must stay.
    return None, min(filled_by) if filled_by else None


def _outcome(
    observed: Observed,
    mounts: Sequence[CacheMount],
    missing: Sequence[str],
    desired: Desired | None,
    template_cache: str | None,
) -> CacheOutcome:
    if not missing:
        names = ", ".join(m.claim_name for m in mounts) or "none needed"
        return CacheOutcome(
            ConditionType.CACHE_READY.ready(Reason.CACHES_READY, f"model caches mounted: {names}"),
            tuple(mounts),
            desired,
            template_cache,
        )
    if INFERENCE_SERVICE in observed.resources:
        return CacheOutcome(
            ConditionType.CACHE_READY.degraded(
                Reason.CACHE_LOST,
                f"no Available model cache for {', '.join(missing)}; the InferenceService keeps "
                "its volumes until the cache is back",
            ),
            desired=desired,
            template_cache=template_cache,
        )
    return CacheOutcome(
        ConditionType.CACHE_READY.progressing(
            Reason.CACHES_NOT_READY,
            f"waiting for model caches of {', '.join(missing)}; the InferenceService is created "
            "once they are Available",
        ),
        desired=desired,
        template_cache=template_cache,
    )


def _ours(observed: Observed, manifest: Manifest, current: Manifest) -> Desired:
    """A template cache this service composes, as it is (created once), with its other users.

    Its users are the services whose `status.templateCache` names it.
    """
    kept = keep(manifest, ready=has_headline(current, CacheStatusValue.AVAILABLE))
    listed = services(observed.namespace).items(observed.required)
    users = None if listed is None else [s for s in listed if relied_on(s) == name_of(current)]
    owned = with_co_owners(kept.manifest, current, users, observed.composite)
    return Desired(owned, ready=kept.ready)


def _kept_by_namespace(
    observed: Observed, manifest: Manifest, current: Manifest, *, add: bool
) -> Manifest:
    """`manifest` with the service's Namespace among its owners (not as controller).

    The garbage collector then keeps the cache once its last service is gone, and the cache
    times itself out. A reference `current` already carries is kept when the Namespace was not
    fetched on this call, or when `add` is off, so no call drops it for not having looked.
    """
    found = observed.required.get(NAMESPACE) or ()
    uid = uid_of(found[0]) if found and add else None
    if uid is not None:
        keeper: dict[str, JsonValue] = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": observed.namespace,
            "uid": uid,
        }
    else:
        keeper = next((r for r in owner_references(current) if r.get("kind") == "Namespace"), {})
    if not keeper:
        return manifest
    refs: list[JsonValue] = [
        *(r for r in owner_references(manifest) if r.get("kind") != "Namespace"),
        keeper,
    ]
    return {**manifest, "metadata": {**metadata_of(manifest), "ownerReferences": refs}}


def _past_retention(shared: Sequence[Manifest], observed: Observed) -> frozenset[str]:
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


def _template_cache(observed: Observed, spec: AIMServiceSpec, template: Template) -> Manifest:
    cluster = template.kind == Kind.CLUSTER_SERVICE_TEMPLATE
    own = template.spec.caching if isinstance(template.spec, ServiceTemplateSpec) else None
    cache = TemplateCacheSpec(
        template_name=template.name,
        template_scope=TemplateScope.CLUSTER if cluster else TemplateScope.NAMESPACE,
        # The downloads see what the runtime sees, with the template's caching env over it and
        # the service's over both.
        env=merged_env(template.spec.env, own.env if own else None, spec.env) or None,
        runtime_config_name=spec.runtime_config_name,
    )
    return build_aim_object(
        Kind.TEMPLATE_CACHE,
        name=naming.derived_name([template.name], [observed.namespace]),
        namespace=observed.namespace,
        labels={**labels.MANAGED_BY, labels.SERVICE: labels.value(observed.name)},
        spec=cache,
    )
