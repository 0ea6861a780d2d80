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

from function.api.service import AIMServiceSpec, AIMServiceStatus, RoutingStatus, ServiceStatusValue
from function.build.kserve import Scaling
from function.compose.frame import open_frame
from function.compose.service import (
    adapter_requirements,
    adapters,
    cache_mounts,
    caching,
    composed_model,
    model,
    routing,
    scaling,
    template,
)
from function.compose.service.caching import TEMPLATE_CACHE
from function.compose.service.choice import Alternative, explain_template_choice
from function.compose.service.inference import INFERENCE_SERVICE
from function.compose.service.model import MODEL
from function.compose.service.outcome import DERIVED_TEMPLATE
from function.compose.service.routing import HTTP_ROUTE, RouteOutcome
from function.compose.service.serving import (
    PODS,
    held_model,
    inference_service,
    kept,
    pods_requirements,
)
from function.compose.service.template import catalog_requirements
from function.compose.service.wake import (
    HTTP_SCALED_OBJECT,
    WAKE_RESPONDER,
    WakeOutcome,
    plan_wake,
)
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Observed, Requirement
from function.kube.counted import TemplateSelected
from function.kube.objects import name_of
from function.kube.parse import parse_spec
from function.kube.views import is_true
from function.rules import naming
from function.rules.pods import pods_health
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
    spec = parse_spec(observed.composite, AIMServiceSpec)
    isvc_name = _inference_service_name(observed)
    bounds = scaling.bounds(spec)
    frame = open_frame(observed, spec.runtime_config_name, observed.namespace)
    comp, config_health, config = frame.comp, frame.config_health, frame.config
    comp.requirements += [
        *composed_model.requirements(spec, observed.namespace),
        *template.requirements(spec, observed.namespace),
        *scaling.requirements(bounds, observed.namespace, isvc_name),
        *pods_requirements(observed, isvc_name),
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

    fronts = [h for h in (wake.health, route.health) if h is not None]
    # A dynamic service serves while an adapter is still staged: said, but not its headline.
    counted, told = lora.reported()
    upstream = [config_health, models.health, templates.health, *fronts, *counted]
    failed = worst(upstream) is State.FAILED
    models = held_model(observed, models, upstream)
    isvc, isvc_health = inference_service(
        observed,
        spec=spec,
        name=isvc_name,
        config=config,
        models=models,
        templates=templates,
        caches=caches,
        lora=lora,
        blocked=failed,
    )
    healths = [config_health, models.health, templates.health, isvc_health]
    if INFERENCE_SERVICE in observed.resources:
        serving = is_true(observed.resources[INFERENCE_SERVICE], "Ready")
        pods = observed.required.get(PODS)
        if pods is not None:
            healths.append(pods_health(pods, serving=serving))
        autoscaler = scaling.health(bounds, observed, serving=serving)
        if autoscaler is not None:
            healths.append(autoscaler)
    if caches.health is not None:
        healths.append(caches.health)
    healths += fronts
    healths += counted

    # Routing that is on but broken keeps the route it had, unless that route is the problem;
    # routing turned off removes it.
    keeps = route.health is not None and not route.withdrawn
    kept_route = kept(observed, HTTP_ROUTE, ready=False) if keeps else None
    desired = {
        MODEL: models.desired,
        DERIVED_TEMPLATE: templates.desired,
        TEMPLATE_CACHE: caches.desired,
        INFERENCE_SERVICE: isvc,
        HTTP_ROUTE: route.desired or kept_route,
        # It scales the InferenceService's Deployment: not before there is one to scale.
        **(wake.desired if isvc is not None else {}),
        **lora.desired,
    }
    for key, value in desired.items():
        if value is not None and (not failed or key in observed.resources):
            comp.resources[key] = value

    # The model and the caches both list the namespace's services; ask once.
    unique: dict[str, Requirement] = {}
    for requirement in comp.requirements:
        unique.setdefault(requirement.name, requirement)
    comp.requirements = list(unique.values())
    headline = _HEADLINE[frame.report(healths, also=told)]
    comp.counted.append(TemplateSelected(templates.health.reason))
    status = AIMServiceStatus(
        status=headline,
        resolved_runtime_config=config.ref if config else None,
        resolved_model=models.model.reference() if models.model else None,
        resolved_template=templates.template.reference() if templates.template else None,
        inference_service=isvc_name if INFERENCE_SERVICE in comp.resources else None,
        template_cache=caches.template_cache,
        routing=RoutingStatus(
            path=route.path,
            http_route=name_of(comp.resources[HTTP_ROUTE].manifest),
            hostnames=list(route.hostnames) or None,
        )
        if HTTP_ROUTE in comp.resources
        else None,
        runtime=scaling.runtime(bounds, observed) if INFERENCE_SERVICE in comp.resources else None,
        adapters=list(lora.statuses) or None,
        adapter_max_rank=lora.max_rank,
        adapters_staged=lora.staged,
    )
    return frame.finish(status, headline)


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


def _inference_service_name(observed: Observed) -> str:
    try:
        return naming.inference_service_name(observed.name, observed.namespace)
    except naming.NameTooLongError as e:
        raise InvalidSpecError(field="metadata.namespace", problem=str(e)) from e
