"""AIMServiceTemplate / AIMClusterServiceTemplate: a runtime profile and its discovery.

A template is Available once its model exists, the GPU it asks for is in the cluster (read from
Node labels), and its model sources are known: given inline, or found by a discovery Job that runs
the model image's dry-run. Discovery's result, its attempts and its backoff live in the template's
status, so every call (and every function replica) decides the same way. Beside a condition per
component, `lifecycle` says where the template stands in the AIM API's words.
"""

from __future__ import annotations

from function.api.cache import CacheStatusValue, TemplateCacheSpec, TemplateScope
from function.api.meta import Kind, Scope
from function.api.model import ModelSpec
from function.api.template import (
    ClusterServiceTemplateSpec,
    ServiceTemplateSpec,
    TemplateStatus,
    TemplateStatusValue,
)
from function.build.aim import build_aim_object
from function.compose.frame import cluster_credentials, open_frame
from function.compose.refs import Model, resolved_model
from function.compose.template import discovery, gpus, lifecycle
from function.compose.template.attempts import DiscoveryOutcome
from function.compose.template.discovery import DISCOVERY_JOB
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Desired, Observed, Requirement, keep
from function.kube.counted import DiscoveryStarted
from function.kube.lookup import Absent, Lookup, Pending
from function.kube.objects import labels_of
from function.kube.parse import has_headline, parse_headline, parse_spec
from function.rules import labels
from function.rules.merge import merged_env
from function.rules.profile import effective_profile
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import Condition, ConditionType, Health, Reason, State, worst

__all__ = ["DISCOVERY_JOB", "TEMPLATE_CACHE", "TEMPLATE_KINDS", "compose_template"]

TEMPLATE_CACHE = "template-cache"
"""Composition-resource name of the AIMTemplateCache of a template with caching enabled."""

TEMPLATE_KINDS = frozenset({Kind.SERVICE_TEMPLATE, Kind.CLUSTER_SERVICE_TEMPLATE})

_HEADLINE = {
    State.FAILED: TemplateStatusValue.FAILED,
    State.DEGRADED: TemplateStatusValue.DEGRADED,
    State.PENDING: TemplateStatusValue.PENDING,
    State.PROGRESSING: TemplateStatusValue.PROGRESSING,
    State.READY: TemplateStatusValue.AVAILABLE,
}


def compose_template(observed: Observed) -> Composition:
    """Compose one AIMServiceTemplate or AIMClusterServiceTemplate."""
    namespaced = observed.kind == Kind.SERVICE_TEMPLATE
    spec: ClusterServiceTemplateSpec = parse_spec(
        observed.composite, ServiceTemplateSpec if namespaced else ClusterServiceTemplateSpec
    )
    work_namespace = observed.namespace or observed.settings.system_namespace
    frame = open_frame(observed, spec.runtime_config_name, work_namespace)
    comp, config_health, config = frame.comp, frame.config_health, frame.config
    model_reqs, model_health, model = _model(observed, spec.model_name)
    comp.requirements += model_reqs

    gpu = gpus.check(observed, spec.hardware)
    comp.requirements += gpu.requirements

    found = _discover(
        observed, comp, spec, model=model, config=config, gpu=gpu, namespace=work_namespace
    )
    discovered = found.health
    if discovered.state is State.READY and not spec.model_sources:
        discovered = gpus.unknown_accelerator(spec.hardware, found.profile) or discovered

    healths = [config_health, model_health, gpu.health, discovered]
    cache = _template_cache(observed, spec, available=worst(healths) is State.READY)
    if cache is not None:
        comp.resources[TEMPLATE_CACHE] = cache
    warm = (
        lifecycle.CacheWarm(
            observed.name, parse_headline(observed.resources.get(TEMPLATE_CACHE), CacheStatusValue)
        )
        if cache is not None
        else None
    )
    credentials = None if namespaced else _credentials(observed, spec)
    state = frame.report(
        healths,
        also=[
            *lifecycle.conditions(
                healths,
                discovery=discovered,
                gpu=gpu.health,
                gpu_unavailable=gpu.unavailable,
                cache=warm,
            ),
            *([credentials] if credentials is not None else []),
        ],
    )
    comp.ttl_seconds = min(
        (t for t in (gpu.retry_after_s, found.retry_after_s) if t is not None), default=None
    )
    headline = _HEADLINE[state]
    if gpu.unavailable and state is not State.FAILED:
        headline = TemplateStatusValue.NOT_AVAILABLE
    return frame.finish(
        _status(observed, spec, headline, model=model, found=found, config=config), headline
    )


def _discover(  # noqa: PLR0913 - discovery's inputs, and the composition it adds to
    observed: Observed,
    comp: Composition,
    spec: ClusterServiceTemplateSpec,
    *,
    model: Model | None,
    config: RuntimeConfig | None,
    gpu: gpus.GpuCheck,
    namespace: str,
) -> DiscoveryOutcome:
    """Discovery, given its inputs once the GPU is there; what it asks for and the Job it runs."""
    ready_to_discover = config is not None and model is not None and gpu.health.state is State.READY
    found = discovery.discover(
        observed,
        spec,
        model=model if ready_to_discover else None,
        config=config if ready_to_discover else None,
        namespace=namespace,
    )
    comp.requirements += [*discovery.requirements(observed, namespace), *found.requirements]
    if found.job is not None:
        comp.resources[DISCOVERY_JOB] = found.job
        if DISCOVERY_JOB not in observed.resources:
            comp.counted.append(DiscoveryStarted())
    return found


def _status(  # noqa: PLR0913 - everything the status records
    observed: Observed,
    spec: ClusterServiceTemplateSpec,
    headline: TemplateStatusValue,
    *,
    model: Model | None,
    found: DiscoveryOutcome,
    config: RuntimeConfig | None,
) -> TemplateStatus:
    """The template's status: what it resolved, and what its discovery found."""
    return TemplateStatus(
        status=headline,
        resolved_runtime_config=config.ref if config else None,
        resolved_model=model.reference() if model else None,
        model_sources=list(found.sources) or None,
        profile=found.profile,
        resolved_profile=effective_profile(spec, found.profile, labels_of(observed.composite)),
        hardware_summary=gpus.summary(spec.hardware, found.profile),
        discovery=found.state,
    )


def _credentials(observed: Observed, spec: ClusterServiceTemplateSpec) -> Condition | None:
    """A cluster template's env reaches every namespace: a credential written in is warned about.

    A warning beside the components, never one of them: the template stays Available.
    """
    sources = spec.model_sources or ()
    return cluster_credentials(
        observed,
        [
            ("spec.env", spec.env),
            *((f"spec.modelSources[{i}].env", s.env) for i, s in enumerate(sources)),
        ],
    )


def _template_cache(
    observed: Observed, spec: ClusterServiceTemplateSpec, *, available: bool
) -> Desired | None:
    """With `spec.caching.enabled`, the AIMTemplateCache that pre-warms this template's sources.

    Composed once the template is Available (its sources are known), and kept from then on.
    Only namespaced templates cache: a cache is a namespace's PVCs.
    """
    current = observed.resources.get(TEMPLATE_CACHE)
    caching = spec.caching if isinstance(spec, ServiceTemplateSpec) else None
    if caching is None or not caching.enabled:
        return None
    ready = has_headline(current, CacheStatusValue.AVAILABLE)
    if not available:
        return keep(current, ready=ready) if current is not None else None
    cache = TemplateCacheSpec(
        template_name=observed.name,
        template_scope=TemplateScope.NAMESPACE,
        # Seed 002 puts download credentials (HF_TOKEN) in the template's env; caching.env adds
        # to or overrides them for the downloads alone.
        env=merged_env(spec.env, caching.env) or None,
        runtime_config_name=spec.runtime_config_name,
    )
    manifest = build_aim_object(
        Kind.TEMPLATE_CACHE,
        name=observed.name,
        namespace=observed.namespace,
        labels={**labels.MANAGED_BY, labels.TEMPLATE: labels.value(observed.name)},
        spec=cache,
    )
    return Desired(manifest, ready=ready)


def _model(observed: Observed, name: str) -> tuple[list[Requirement], Health, Model | None]:
    """The template's model: for a namespaced template its namespace's, else the cluster's."""
    lookup = Lookup(
        "model",
        name,
        observed.namespace,
        Kind.MODEL,
        Kind.CLUSTER_MODEL,
        only=None if observed.namespace else Scope.CLUSTER,
    )
    reqs = lookup.requirements()
    resolution = lookup.resolve(observed.required)
    where = (
        f"no AIMModel {name!r} in namespace {observed.namespace!r} and no AIMClusterModel"
        if observed.namespace
        else "no AIMClusterModel"
    )
    if isinstance(resolution, Pending):
        return (
            reqs,
            ConditionType.MODEL_READY.pending(Reason.RESOLVING, f"looking up model {name!r}"),
            None,
        )
    if isinstance(resolution, Absent):
        return (
            reqs,
            ConditionType.MODEL_READY.failed(
                Reason.MODEL_NOT_FOUND,
                f"spec.modelName: {where} {name!r} exists; create the model or fix the name",
            ),
            None,
        )
    try:
        model_spec = parse_spec(resolution.manifest, ModelSpec)
    except InvalidSpecError as e:
        return reqs, ConditionType.MODEL_READY.failed(Reason.INVALID, f"model {name!r}: {e}"), None
    model = resolved_model(resolution.manifest, resolution.kind, resolution.scope, model_spec)
    return (
        reqs,
        ConditionType.MODEL_READY.ready(
            Reason.MODEL_RESOLVED,
            f"{resolution.kind} {name!r} runs {model_spec.image}",
        ),
        model,
    )
