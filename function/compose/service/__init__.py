"""AIMService: from a model and a template to an InferenceService on AMD GPUs, and an HTTPRoute.

Each call resolves the runtime config, the model and the template from what Crossplane fetched,
then composes what those allow: an AIMModel or a derived AIMServiceTemplate when the service needs
one, the InferenceService once the model is Ready and the template Available, the HTTPRoute
when routing is on, the HTTPScaledObject that wakes a service at `minReplicas: 0`, and the disk
and staging Job of its LoRA adapters (`adapters.py`). Every step reports a condition; the worst
decides `status.status`.

Two rules keep users' workloads safe. A service that is Failed creates nothing new (the user has
to fix something first). And an object that exists is never dropped from the desired state just
because an input went missing or unready: it is kept as it is until it can be composed again.
The one exception is a route that is itself the harm, answering on every listener of its
Gateway (`routing.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from function.api.service import AIMServiceSpec, AIMServiceStatus, RoutingStatus, ServiceStatusValue
from function.build.kserve import Scaling
from function.compose.frame import Frame, open_frame
from function.compose.service import (
    adapter_requirements,
    adapters,
    cache_mounts,
    caching,
    composed_model,
    model,
    routing,
    scaling,
    serving,
    template,
)
from function.compose.service.caching import TEMPLATE_CACHE
from function.compose.service.choice import Alternative, explain_template_choice
from function.compose.service.inference import INFERENCE_SERVICE
from function.compose.service.model import MODEL, ModelOutcome
from function.compose.service.outcome import DERIVED_TEMPLATE, TemplateOutcome
from function.compose.service.routing import HTTP_ROUTE, RouteOutcome
from function.compose.service.template import catalog_requirements
from function.compose.service.wake import (
    HTTP_SCALED_OBJECT,
    WAKE_RESPONDER,
    WakeOutcome,
    plan_wake,
)
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Desired, Observed, Requirement
from function.kube.counted import TemplateSelected
from function.kube.objects import name_of
from function.kube.parse import parse_spec
from function.rules import naming
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import State, worst

__all__ = [
    "DERIVED_TEMPLATE",
    "HTTP_ROUTE",
    "HTTP_SCALED_OBJECT",
    "INFERENCE_SERVICE",
    "MODEL",
    "TEMPLATE_CACHE",
    "WAKE_RESPONDER",
    "Alternative",
    "catalog_requirements",
    "compose_service",
    "explain_template_choice",
]

_HEADLINE = {
    State.FAILED: ServiceStatusValue.FAILED,
    State.DEGRADED: ServiceStatusValue.DEGRADED,
    State.PENDING: ServiceStatusValue.PENDING,
    State.PROGRESSING: ServiceStatusValue.STARTING,
    State.READY: ServiceStatusValue.RUNNING,
}


def compose_service(observed: Observed) -> Composition:
    """Compose one AIMService."""
    frame, parts = _resolve(observed)
    comp, config = frame.comp, frame.config

    fronts = [h for h in (parts.wake.health, parts.route.health) if h is not None]
    # A dynamic service serves while an adapter is still staged: said, but not its headline.
    counted, told = parts.lora.reported()
    upstream = [frame.config_health, parts.models.health, parts.templates.health, *fronts, *counted]
    failed = worst(upstream) is State.FAILED
    models = serving.held_model(observed, parts.models, upstream)
    isvc, isvc_health = serving.inference_service(
        observed,
        spec=parts.spec,
        name=parts.isvc_name,
        config=config,
        models=models,
        templates=parts.templates,
        caches=parts.caches,
        lora=parts.lora,
        blocked=failed,
    )
    healths = [frame.config_health, models.health, parts.templates.health, isvc_health]
    healths += serving.running(observed, parts.bounds)
    if parts.caches.health is not None:
        healths.append(parts.caches.health)
    healths += fronts
    healths += counted

    desired = _desired(observed, parts, models, isvc)
    for key, value in desired.items():
        if value is not None and (not failed or key in observed.resources):
            comp.resources[key] = value

    # The model and the caches both list the namespace's services; ask once.
    unique: dict[str, Requirement] = {}
    for requirement in comp.requirements:
        unique.setdefault(requirement.name, requirement)
    comp.requirements = list(unique.values())
    headline = _HEADLINE[frame.report(healths, also=told)]
    comp.counted.append(TemplateSelected(parts.templates.health.reason))
    return frame.finish(_status(observed, comp, parts, models, headline), headline)


@dataclass(frozen=True)
class _Parts:
    """What one call resolved, in the order it resolves them: each step reads those before."""

    spec: AIMServiceSpec
    isvc_name: str
    bounds: Scaling
    config: RuntimeConfig | None
    models: ModelOutcome
    templates: TemplateOutcome
    caches: caching.CacheOutcome
    lora: adapters.AdapterOutcome
    wake: WakeOutcome
    route: RouteOutcome


def _resolve(observed: Observed) -> tuple[Frame, _Parts]:
    """Open the frame, then resolve the model, template, caches, adapters and front in turn.

    Each adds what it requires to the frame's composition, in that order.
    """
    spec = parse_spec(observed.composite, AIMServiceSpec)
    isvc_name = _inference_service_name(observed)
    bounds = scaling.bounds(spec)
    frame = open_frame(observed, spec.runtime_config_name, observed.namespace)
    comp, config = frame.comp, frame.config
    comp.requirements += [
        *composed_model.requirements(spec, observed.namespace),
        *template.requirements(spec, observed.namespace),
        *scaling.requirements(bounds, observed.namespace, isvc_name),
        *serving.pods_requirements(observed, isvc_name),
    ]
    # Looked up once: the model's resolution reads its model too.
    named = template.looked_up(observed, spec)
    served = template.model_of(named)
    models = model.resolve_model(observed, spec, config, served)
    templates = template.resolve_template(observed, spec, models.model, named)
    comp.requirements += cache_mounts.requirements(
        spec, observed.namespace, templates.template, models.model, config
    )
    caches = caching.resolve(
        observed, spec, templates.template, models.model, config, template_ready=templates.ready
    )
    comp.requirements += adapter_requirements.requirements(spec, observed)
    lora = adapters.resolve(
        observed,
        spec,
        model=models.model,
        template=templates.template,
        config=config,
        isvc_name=isvc_name,
    )
    wake, route = _front(observed, spec, config, isvc_name, bounds)
    comp.requirements += route.requirements
    parts = _Parts(spec, isvc_name, bounds, config, models, templates, caches, lora, wake, route)
    return frame, parts


def _front(
    observed: Observed,
    spec: AIMServiceSpec,
    config: RuntimeConfig | None,
    isvc_name: str,
    bounds: Scaling,
) -> tuple[WakeOutcome, RouteOutcome]:
    """What clients reach the service through: its route, and what wakes it at zero pods."""
    wake = plan_wake(
        observed,
        spec,
        bounds,
        config,
        routed=routing.enabled(spec.routing, config),
        isvc_name=isvc_name,
        request_timeout=routing.request_timeout(spec.routing, config),
    )
    return wake, routing.compose_route(observed, spec.routing, config, isvc_name, wake.waker)


def _desired(
    observed: Observed, parts: _Parts, models: ModelOutcome, isvc: Desired | None
) -> dict[str, Desired | None]:
    """Every object the service would compose, by key; None for one it composes none of."""
    # Routing that is on but broken keeps the route it had, unless that route is the problem;
    # routing turned off removes it.
    route = parts.route
    keeps = route.health is not None and not route.withdrawn
    kept_route = serving.kept(observed, HTTP_ROUTE, ready=False) if keeps else None
    return {
        MODEL: models.desired,
        DERIVED_TEMPLATE: parts.templates.desired,
        TEMPLATE_CACHE: parts.caches.desired,
        INFERENCE_SERVICE: isvc,
        HTTP_ROUTE: route.desired or kept_route,
        # It scales the InferenceService's Deployment: not before there is one to scale.
        **(parts.wake.desired if isvc is not None else {}),
        **parts.lora.desired,
    }


def _status(
    observed: Observed,
    comp: Composition,
    parts: _Parts,
    models: ModelOutcome,
    headline: ServiceStatusValue,
) -> AIMServiceStatus:
    """The service's status: what it resolved, and what it composed."""
    templates, caches, route, lora = parts.templates, parts.caches, parts.route, parts.lora
    return AIMServiceStatus(
        status=headline,
        resolved_runtime_config=parts.config.ref if parts.config else None,
        resolved_model=models.model.reference() if models.model else None,
        resolved_template=templates.template.reference() if templates.template else None,
        inference_service=parts.isvc_name if INFERENCE_SERVICE in comp.resources else None,
        template_cache=caches.template_cache,
        routing=RoutingStatus(
            path=route.path,
            http_route=name_of(comp.resources[HTTP_ROUTE].manifest),
            hostnames=list(route.hostnames) or None,
        )
        if HTTP_ROUTE in comp.resources
        else None,
        runtime=scaling.runtime(parts.bounds, observed)
        if INFERENCE_SERVICE in comp.resources
        else None,
        adapters=list(lora.statuses) or None,
        adapter_max_rank=lora.max_rank,
        adapters_staged=lora.staged,
    )


def _inference_service_name(observed: Observed) -> str:
    try:
        return naming.inference_service_name(observed.name, observed.namespace)
    except naming.NameTooLongError as e:
        raise InvalidSpecError(field="metadata.namespace", problem=str(e)) from e
