"""Which model a service serves: by name, by image, or custom weights it composes a model for.

`spec.model.ref` names an AIMModel in the namespace, else an AIMClusterModel. `spec.model.image`
reuses the one model with that image (a namespace match shadows cluster matches, as names do, and
a catalog model wins over one a service composed), else the service composes an AIMModel for the
image; under a runtime config with `model.creationScope: Cluster` it composes none and waits for
the AIMClusterModel its AIMClusterRuntimeConfig creates (function/compose/runtimeconfig/), as a
namespaced XR cannot compose a cluster-scoped object; with no AIMClusterRuntimeConfig of that
name (only a namespace's config asked for Cluster) it composes the AIMModel as before, with a
warning. `spec.model.custom` reuses a namespace model with the same base image and sources, else
composes one. A model the service composed stays its model from then on, even if an equal one
appears elsewhere (or the scope changes to Cluster).

What it asks Crossplane for, and the AIMModel it would compose, are `composed_model`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from function.api.meta import Kind, Manifest, Scope
from function.api.model import ModelSpec, ModelStatusValue
from function.api.service import AIMServiceSpec
from function.compose.refs import Model, resolved_model
from function.compose.service.composed_model import (
    CLUSTER_MODELS,
    composed_by_a_service,
    model_manifest,
    named,
    namespace_models,
    ref_lookup,
    source_keys,
    with_co_owners_of,
)
from function.errors import InvalidSpecError
from function.kube.contract import Desired, Observed
from function.kube.lookup import Absent, Found, Pending
from function.kube.objects import controller_uid, name_of
from function.kube.parse import parse_spec
from function.kube.views import field_at
from function.rules import naming
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason, State

MODEL = "model"
"""Composition-resource name of the AIMModel a service composes."""


@dataclass(frozen=True)
class ModelOutcome:
    """The model to serve (once known), its health, and the AIMModel to compose, if any."""

    health: Health
    model: Model | None = None
    desired: Desired | None = None
    creating: str | None = None
    """What is being created while `desired` is not yet observed: `AIMModel 'x' for <source>`."""

    @property
    def ready(self) -> bool:
        """The model reports Ready, so its templates and image can be trusted."""
        return self.health.state is State.READY


def resolve_model(
    observed: Observed,
    spec: AIMServiceSpec,
    config: RuntimeConfig | None,
    template_model: str | None = None,
) -> ModelOutcome:
    """Resolve `spec.model`. `template_model` (the explicit template's model) breaks image ties."""
    if spec.model.ref is not None:
        return _by_ref(observed, spec.model.ref)
    composed = observed.resources.get(MODEL)
    if spec.model.image is not None:
        return _by_image(
            observed,
            spec=spec,
            image=spec.model.image,
            config=config,
            composed=composed,
            template_model=template_model,
        )
    return _custom(observed, spec, config, composed)


def _by_ref(observed: Observed, name: str) -> ModelOutcome:
    match ref_lookup(name, observed.namespace).resolve(observed.required):
        case Pending():
            return ModelOutcome(
                ConditionType.MODEL_READY.pending(Reason.RESOLVING, f"looking up {name!r}")
            )
        case Absent():
            return ModelOutcome(
                ConditionType.MODEL_READY.failed(
                    Reason.MODEL_NOT_FOUND,
                    f"spec.model.ref: neither AIMModel {name!r} in namespace "
                    f"{observed.namespace!r} nor AIMClusterModel {name!r} exists; create it or "
                    "name an existing model (kubectl get aimmodels,aimclustermodels)",
                )
            )
        case Found() as found:
            return _use(found)


def _by_image(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    *,
    spec: AIMServiceSpec,
    image: str,
    config: RuntimeConfig | None,
    composed: Manifest | None,
    template_model: str | None,
) -> ModelOutcome:
    if composed is not None:
        return _compose(observed, spec, config, composed)
    namespaced = namespace_models(observed.namespace).items(observed.required)
    cluster = CLUSTER_MODELS.items(observed.required)
    if namespaced is None or cluster is None:
        return ModelOutcome(
            ConditionType.MODEL_READY.pending(
                Reason.RESOLVING, f"looking for models with image {image}"
            )
        )
    for kind, scope, objects in (
        (Kind.MODEL, Scope.NAMESPACE, namespaced),
        (Kind.CLUSTER_MODEL, Scope.CLUSTER, cluster),
    ):
        matches = [m for m in objects if field_at(m, "spec", "image") == image]
        # A model the platform team made is the catalog; one a service composed is a stopgap.
        matches = [m for m in matches if not composed_by_a_service(m)] or matches
        if template_model is not None and len(matches) > 1:
            matches = [m for m in matches if name_of(m) == template_model] or matches
        if len(matches) == 1:
            return _share(observed, spec, config, matches[0], kind=kind, scope=scope)
        if len(matches) > 1:
            names = ", ".join(sorted(name_of(m) for m in matches))
            return ModelOutcome(
                ConditionType.MODEL_READY.failed(
                    Reason.MODEL_AMBIGUOUS,
                    f"spec.model.image: {len(matches)} {kind}s serve {image} ({names}); name "
                    "one with spec.model.ref instead",
                )
            )
    if config is not None and config.creates_cluster_models:
        # Only the AIMClusterRuntimeConfig sets Cluster (config_lookup leaves a namespace's out
        # of the merge), so a cluster config exists to create the model.
        return _awaiting_cluster_model(spec, image)
    return _compose(observed, spec, config, None)


def _awaiting_cluster_model(spec: AIMServiceSpec, image: str) -> ModelOutcome:
    """No model serves the image yet, and the AIMClusterRuntimeConfig is the one to create it."""
    try:
        name = naming.auto_model_name(image)
    except ValueError as e:
        return ModelOutcome(
            ConditionType.MODEL_READY.failed(Reason.INVALID, f"spec.model.image: {e}")
        )
    config_name = spec.runtime_config_name
    return ModelOutcome(
        ConditionType.MODEL_READY.pending(
            Reason.CREATING_MODEL,
            f"{Kind.CLUSTER_RUNTIME_CONFIG} {config_name!r} creates {Kind.CLUSTER_MODEL} "
            f"{name!r} for {image} (model.creationScope: Cluster); waiting for it",
        )
    )


def _custom(
    observed: Observed,
    spec: AIMServiceSpec,
    config: RuntimeConfig | None,
    composed: Manifest | None,
) -> ModelOutcome:
    if composed is not None:
        return _compose(observed, spec, config, composed)
    custom = spec.model.custom
    assert custom is not None  # noqa: S101 - the XRD requires exactly one of ref, image, custom
    namespaced = namespace_models(observed.namespace).items(observed.required)
    if namespaced is None:
        return ModelOutcome(
            ConditionType.MODEL_READY.pending(Reason.RESOLVING, "looking for an equal custom model")
        )
    wanted = source_keys(custom.model_sources)
    for m in namespaced:
        if field_at(m, "spec", "image") != custom.base_image:
            continue
        try:
            candidate = parse_spec(m, ModelSpec)
        except InvalidSpecError:
            continue
        if source_keys(candidate.model_sources or ()) == wanted:
            return _share(observed, spec, config, m, kind=Kind.MODEL, scope=Scope.NAMESPACE)
    return _compose(observed, spec, config, None)


def _share(  # noqa: PLR0913 - the match, and what adopting it would need
    observed: Observed,
    spec: AIMServiceSpec,
    config: RuntimeConfig | None,
    match: Manifest,
    *,
    kind: Kind,
    scope: Scope,
) -> ModelOutcome:
    """Use a model that exists; adopt it when the service that composed it is gone.

    Only a model a service composed, that nothing controls any more and that has the name this
    service would give it (or gave it before models by image were named `auto-<hash>`), is
    adopted: the garbage collector kept it because this service (or another user) still owns it.
    """
    orphan = composed_by_a_service(match) and controller_uid(match) is None
    if orphan and kind is Kind.MODEL and config is not None:
        try:
            mine, _ = model_manifest(observed, spec, config)
            names = {name_of(mine)}
            if spec.model.image is not None:
                names.add(naming.image_model_name(spec.model.image))
        except ValueError:
            names = set()
        if name_of(match) in names:
            return _compose(observed, spec, config, match)
    return _use(Found(match, kind, scope))


def _compose(
    observed: Observed,
    spec: AIMServiceSpec,
    config: RuntimeConfig | None,
    composed: Manifest | None,
) -> ModelOutcome:
    """The AIMModel this service composes; its observed state, once it exists, says if ready."""
    if config is None:
        return ModelOutcome(
            ConditionType.MODEL_READY.pending(Reason.RESOLVING, "waiting for the runtime config")
        )
    try:
        manifest, model_spec = model_manifest(observed, spec, config)
    except ValueError as e:
        return ModelOutcome(
            ConditionType.MODEL_READY.failed(Reason.INVALID, f"spec.model.image: {e}")
        )
    if composed is not None:
        # The model keeps its name. Crossplane keeps the name of what an XR composed already;
        # an orphan is adopted only when asked for by its own name, which for a model made
        # before `auto-<hash>` names is the older `<image>-<tag>-<hash>`.
        manifest = with_co_owners_of(observed, named(manifest, name_of(composed)), composed)
    model = resolved_model(composed or manifest, Kind.MODEL, Scope.NAMESPACE, model_spec)
    creating = None
    if composed is None or model.headline is None:
        source = spec.model.image or "custom weights " + ", ".join(
            s.model_id for s in model_spec.model_sources or ()
        )
        creating = f"AIMModel {model.name!r} for {source}"
        health = ConditionType.MODEL_READY.pending(
            Reason.CREATING_MODEL,
            f"AIMModel {model.name!r} is being created for {source}",
        )
    else:
        health = _model_health(model)
    ready = model.headline == ModelStatusValue.READY
    return ModelOutcome(health, model, Desired(manifest, ready=ready), creating=creating)


def _use(found: Found) -> ModelOutcome:
    try:
        spec = parse_spec(found.manifest, ModelSpec)
    except InvalidSpecError as e:
        return ModelOutcome(
            ConditionType.MODEL_READY.failed(
                Reason.INVALID, f"{found.kind} {name_of(found.manifest)!r}: {e}"
            )
        )
    model = resolved_model(found.manifest, found.kind, found.scope, spec)
    return ModelOutcome(_model_health(model), model)


def _model_health(model: Model) -> Health:
    which = f"{model.kind} {model.name!r}"
    match model.headline:
        case ModelStatusValue.READY:
            return ConditionType.MODEL_READY.ready(Reason.MODEL_RESOLVED, f"{which} is Ready")
        case ModelStatusValue.FAILED:
            return ConditionType.MODEL_READY.failed(
                Reason.MODEL_NOT_READY,
                f"{which} is Failed; its conditions say why (kubectl describe)",
            )
        case ModelStatusValue.DEGRADED:
            return ConditionType.MODEL_READY.degraded(
                Reason.MODEL_NOT_READY, f"{which} is Degraded"
            )
        case status:
            return ConditionType.MODEL_READY.pending(
                Reason.MODEL_NOT_READY,
                f"{which} is {status or 'not reconciled yet'}; waiting for it to become Ready",
            )
