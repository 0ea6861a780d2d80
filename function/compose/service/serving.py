"""The InferenceService a service runs on: created once its inputs are ready, kept until then.

Also what tells whether it serves once it exists: its predictor's pods and its autoscaler. A
service that has failed creates nothing new, and says what holds back the model it would create.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from function.api.service import AIMServiceSpec
from function.build.kserve import Scaling
from function.compose.service import inference, scaling
from function.compose.service.adapters import AdapterOutcome
from function.compose.service.caching import CacheOutcome
from function.compose.service.inference import INFERENCE_SERVICE
from function.compose.service.model import MODEL, ModelOutcome
from function.compose.service.outcome import TemplateOutcome
from function.kube.contract import Desired, Observed, Requirement, keep
from function.kube.views import is_true
from function.rules.pods import PREDICTOR_LABEL, pods_health
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State

PODS: Final = "predictor-pods"
"""Requirement name of the InferenceService's pods."""


def pods_requirements(observed: Observed, isvc_name: str) -> list[Requirement]:
    """The predictor's pods, once the InferenceService exists: they say why it is not Ready."""
    if INFERENCE_SERVICE not in observed.resources:
        return []
    labels = {PREDICTOR_LABEL: isvc_name}
    return [Requirement(PODS, "v1", "Pod", namespace=observed.namespace, match_labels=labels)]


def held_model(
    observed: Observed, models: ModelOutcome, upstream: Sequence[Health]
) -> ModelOutcome:
    """The model outcome, its health saying what holds it back when the service has failed.

    A failed service composes nothing new, so a model it would create is not "being created":
    it waits for the first failing component.
    """
    failing = [h for h in upstream if h.state is State.FAILED]
    held = models.desired is not None and MODEL not in observed.resources
    if not failing or not held or models.creating is None:
        return models
    first = failing[0]
    health = models.health.condition.pending(
        Reason.WAITING,
        f"{models.creating} is not created while {first.condition} is {first.reason}: a "
        "service that cannot run creates nothing new; fix that first",
    )
    return dataclasses.replace(models, health=health)


def inference_service(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    *,
    spec: AIMServiceSpec,
    name: str,
    config: RuntimeConfig | None,
    models: ModelOutcome,
    templates: TemplateOutcome,
    caches: CacheOutcome,
    lora: AdapterOutcome,
    blocked: bool,
) -> tuple[Desired | None, Health]:
    """The InferenceService once its inputs are ready; the existing one, kept, until then."""
    current = observed.resources.get(INFERENCE_SERVICE)
    ready = is_true(current, "Ready")
    if (
        models.ready
        and templates.ready
        and caches.ready
        and lora.ready
        and config is not None
        and models.model
        and templates.template
    ):
        # An Available template has passed the placement check, so building cannot fail on it.
        manifest = inference.build(
            observed,
            spec=spec,
            name=name,
            model=models.model,
            template=templates.template,
            config=config,
            caches=caches.mounts,
            adapters=lora.run,
        )
        return Desired(manifest, ready=ready), _built_health(name, ready=ready)
    until = (
        "the service is no longer Failed"
        if blocked
        else "the model is Ready, the template Available, its caches (if any) Available and "
        "its adapters (if any) staged"
    )
    if current is not None:
        return kept(
            observed, INFERENCE_SERVICE, ready=ready
        ), ConditionType.INFERENCE_SERVICE_READY.health(
            State.READY if ready else State.PROGRESSING,
            Reason.READY if ready else Reason.CREATING,
            f"InferenceService {name!r} is kept as it is until {until}",
        )
    return None, ConditionType.INFERENCE_SERVICE_READY.pending(
        Reason.WAITING, f"InferenceService {name!r} is created once {until}"
    )


def _built_health(name: str, *, ready: bool) -> Health:
    if ready:
        return ConditionType.INFERENCE_SERVICE_READY.ready(
            Reason.READY, f"InferenceService {name!r} is Ready"
        )
    return ConditionType.INFERENCE_SERVICE_READY.progressing(
        Reason.CREATING,
        f"InferenceService {name!r} is not Ready yet (KServe has not reported Ready)",
    )


def running(observed: Observed, bounds: Scaling) -> list[Health]:
    """Once the InferenceService exists: its pods' health and its autoscaler's, when read."""
    if INFERENCE_SERVICE not in observed.resources:
        return []
    healths = []
    serving = is_true(observed.resources[INFERENCE_SERVICE], "Ready")
    pods = observed.required.get(PODS)
    if pods is not None:
        healths.append(pods_health(pods, serving=serving))
    autoscaler = scaling.health(bounds, observed, serving=serving)
    if autoscaler is not None:
        healths.append(autoscaler)
    return healths


def kept(observed: Observed, key: str, *, ready: bool) -> Desired | None:
    """An existing composed object, as it is: spec and identity, without what the server adds."""
    current = observed.resources.get(key)
    return keep(current, ready=ready) if current is not None else None
