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
    TemplateCacheSpec,
    TemplateScope,
)
from function.api.meta import Kind, Manifest
from function.api.service import AIMServiceSpec
from function.api.template import ServiceTemplateSpec
from function.build.aim import build_aim_object
from function.build.kserve import CacheMount
from function.compose.cache.usage import relied_on
from function.compose.refs import Model
from function.compose.service.cache_mounts import (
    NAMESPACE,
    listing,
    mounts_of,
    past_retention,
    self_caching,
    template_caches,
    uses_caches,
)
from function.compose.service.composed_model import services
from function.compose.service.inference import INFERENCE_SERVICE
from function.compose.service.outcome import Template
from function.kube.contract import Desired, Observed, keep
from function.kube.objects import (
    controller_uid,
    labels_of,
    metadata_of,
    name_of,
    owner_references,
    uid_of,
)
from function.kube.owners import with_co_owners
from function.kube.parse import has_headline
from function.rules import labels, naming
from function.rules.merge import merged_env
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State

TEMPLATE_CACHE: Final = "template-cache"
"""Composition-resource name of the AIMTemplateCache a service composes."""


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
    listed = listing(observed.namespace).items(observed.required)
    shared = template_caches(observed.namespace).items(observed.required)
    if listed is None or shared is None or NAMESPACE not in observed.required:
        return CacheOutcome(
            ConditionType.CACHE_READY.pending(Reason.RESOLVING, "listing model caches"),
            desired=kept,
            template_cache=relied_on,
        )
    expiring = past_retention(shared, observed)
    mounts, missing, filled_by = mounts_of(template, listed, expiring)
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
    if self_caching(template):
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
