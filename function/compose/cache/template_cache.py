"""AIMTemplateCache: one AIMModelCache per model source of a template.

The template is looked up by `spec.templateScope` (Namespace, Cluster, or unset: namespace
first, then cluster), and its `status.modelSources` say what to cache; the cache waits (Pending)
until the template is Available. A standalone AIMModelCache in the namespace for the same source
and storage class (one nobody composed) is reused instead of composing a duplicate: it belongs
to the platform team and outlives every template cache that uses it.

A template cache a service made (labelled with it) is kept by its namespace once the last service
relying on it is gone (`function.compose.service.caching`), for the runtime config's
`caching.retention` (`retention`). Each model cache it uses is `source_caches`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from function.api.cache import (
    CacheEntry,
    CacheStatusValue,
    TemplateCacheSpec,
    TemplateCacheStatus,
    TemplateScope,
)
from function.api.meta import Kind, Manifest, Scope
from function.api.template import (
    ClusterServiceTemplateSpec,
    ServiceTemplateSpec,
    TemplateStatusValue,
)
from function.compose.cache.model_cache import CACHE_HEADLINE
from function.compose.cache.retention import Kept, retention
from function.compose.cache.source_caches import (
    MODEL_CACHE_PREFIX,
    MODEL_CACHES,
    Cache,
    cache_for,
    caches_health,
)
from function.compose.frame import open_frame
from function.compose.refs import Template, resolved_template
from function.errors import InvalidSpecError
from function.kube.contract import (
    Composition,
    Observed,
    Requirement,
    keep,
)
from function.kube.lookup import Absent, Listing, Lookup, Pending, Resolution
from function.kube.parse import has_headline, parse_spec
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import (
    ConditionType,
    Health,
    Reason,
    State,
)


def compose_template_cache(observed: Observed) -> Composition:
    """Compose one AIMTemplateCache."""
    spec = parse_spec(observed.composite, TemplateCacheSpec)
    # The runtime config is read for label propagation and retention only: the model caches
    # resolve it themselves for everything they run, and report a missing one.
    frame = open_frame(observed, spec.runtime_config_name, observed.namespace)
    comp, config_health, config = frame.comp, frame.config_health, frame.config
    reqs, resolution = _template(observed, spec)
    listing = Listing(MODEL_CACHES.key, Kind.MODEL_CACHE, observed.namespace)
    comp.requirements += [*reqs, listing.requirement()]
    kept = retention(observed, comp, config, config_waiting=config_health.state is State.PENDING)

    template, template_health = _template_health(spec, resolution)
    listed = listing.items(observed.required)
    caches = _model_caches(
        observed,
        comp,
        spec,
        template if template_health.state is State.READY else None,
        listed,
        kept=kept,
    )
    cache_health = kept.health or caches_health(
        caches, waiting=template_health.state is not State.READY
    )
    healths = [template_health, cache_health]
    state = frame.report(healths, also=kept.conditions)
    if kept.seconds_left is not None:
        # Composed again when the retention ends, or at the usual recheck if that comes first.
        settings = observed.settings
        usual = settings.ready_recheck_s if state is State.READY else settings.waiting_recheck_s
        comp.ttl_seconds = min(kept.seconds_left, usual)
    status = _status(state, config, kept, template, caches)
    return frame.finish(status, status.status)


def _model_caches(  # noqa: PLR0913 - the template, what is listed, and how long it is kept
    observed: Observed,
    comp: Composition,
    spec: TemplateCacheSpec,
    template: Template[ClusterServiceTemplateSpec] | None,
    listed: tuple[Manifest, ...] | None,
    *,
    kept: Kept,
) -> list[Cache]:
    """A model cache per model source of an Available `template`; those composed before, kept.

    `template` is None until it is Available. Past its retention a cache composes none, and
    drops those it had.
    """
    caches: list[Cache] = []
    if template is not None and listed is not None and not kept.expired:
        caches = [
            cache_for(
                observed,
                spec=spec,
                template=template.spec,
                source=source,
                listed=listed,
                comp=comp,
            )
            for source in template.status.model_sources or ()
        ]
    for key, current in observed.resources.items():
        if kept.expired:
            break  # dropping them deletes them, PVCs and weights included
        if key.startswith(MODEL_CACHE_PREFIX) and key not in comp.resources:
            comp.resources[key] = keep(
                current,
                ready=has_headline(current, CacheStatusValue.AVAILABLE),
            )
    return caches


def _status(
    state: State,
    config: RuntimeConfig | None,
    kept: Kept,
    template: Template[ClusterServiceTemplateSpec] | None,
    caches: Sequence[Cache],
) -> TemplateCacheStatus:
    """The template cache's status: what it resolved, how long it is kept, its model caches."""
    return TemplateCacheStatus(
        status=CACHE_HEADLINE[state],
        resolved_runtime_config=config.ref if config else None,
        unused_since=kept.unused_since,
        retained_until=kept.retained_until,
        resolved_template=template.reference() if template else None,
        resolved_template_kind=template.kind if template else None,
        model_caches=[
            CacheEntry(
                name=c.name,
                source_uri=c.source_uri,
                status=c.status or CacheStatusValue.PENDING,
                persistent_volume_claim=c.pvc,
            )
            for c in caches
        ]
        or None,
    )


def _template(observed: Observed, spec: TemplateCacheSpec) -> tuple[list[Requirement], Resolution]:
    only = {
        None: None,
        TemplateScope.NAMESPACE: Scope.NAMESPACE,
        TemplateScope.CLUSTER: Scope.CLUSTER,
    }[spec.template_scope]
    lookup = Lookup(
        "template",
        spec.template_name,
        observed.namespace,
        Kind.SERVICE_TEMPLATE,
        Kind.CLUSTER_SERVICE_TEMPLATE,
        only=only,
    )
    return lookup.requirements(), lookup.resolve(observed.required)


def _template_health(
    spec: TemplateCacheSpec, resolution: Resolution
) -> tuple[Template[ClusterServiceTemplateSpec] | None, Health]:
    name = spec.template_name
    if isinstance(resolution, Pending):
        return None, ConditionType.TEMPLATE_READY.pending(
            Reason.RESOLVING, f"looking up template {name!r}"
        )
    if isinstance(resolution, Absent):
        where = {
            None: "in the namespace or cluster scope",
            TemplateScope.NAMESPACE: "in the namespace (spec.templateScope: Namespace)",
            TemplateScope.CLUSTER: "in cluster scope (spec.templateScope: Cluster)",
        }[spec.template_scope]
        return None, ConditionType.TEMPLATE_READY.failed(
            Reason.TEMPLATE_NOT_FOUND,
            f"spec.templateName: no template {name!r} {where}; create it or fix the name",
        )
    # A namespaced template may carry caching settings a cluster template cannot.
    model = (
        ServiceTemplateSpec
        if resolution.kind == Kind.SERVICE_TEMPLATE
        else ClusterServiceTemplateSpec
    )
    try:
        tpl_spec: ClusterServiceTemplateSpec = parse_spec(resolution.manifest, model)
    except InvalidSpecError as e:
        return None, ConditionType.TEMPLATE_READY.failed(
            Reason.TEMPLATE_INVALID, f"template {name!r}: {e}"
        )
    template = resolved_template(resolution.manifest, resolution.kind, resolution.scope, tpl_spec)
    status = template.headline
    if status == TemplateStatusValue.AVAILABLE:
        return template, ConditionType.TEMPLATE_READY.ready(
            Reason.RESOLVED, f"{template.kind} {name!r} is Available"
        )
    state = (
        State.FAILED
        if status in {TemplateStatusValue.FAILED, TemplateStatusValue.DEGRADED}
        else State.PENDING
    )
    reason = Reason.TEMPLATE_NOT_READY if state is State.FAILED else Reason.CACHE_WAITING
    return template, ConditionType.TEMPLATE_READY.health(
        state,
        reason,
        f"{template.kind} {name!r} is {status or 'not reconciled yet'}; caching starts once it "
        "is Available with its model sources",
    )
