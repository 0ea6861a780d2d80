"""The AIMClusterModels an AIMClusterRuntimeConfig composes for services by image.

One `auto-<hash of image>` per image that a service of this config's name needs as a cluster model
and that no model serves as the service would look it up; kept while a service needs it or
resolved to it. A namespace's config of the same name may opt out (`Namespace`); its `Cluster` is
ignored, and named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pydantic import ValidationError

from function.api.meta import API_VERSION, Kind, Manifest
from function.api.runtimeconfig import (
    ClusterRuntimeConfigSpec,
    ModelCreationScope,
    RuntimeConfigSpec,
)
from function.build.aim import build_aim_object
from function.compose.service.composed_model import AUTO_CREATED_LABELS, image_model_spec
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Desired, Observed, Requirement, keep
from function.kube.objects import metadata_of, name_of
from function.kube.parse import parse_spec
from function.kube.views import field_at, string_at
from function.rules import naming
from function.rules.runtimeconfig import DEFAULT_NAME, creation_scope
from function.rules.status import Condition, ConditionStatus, ConditionType, Reason

# Every object of each kind, in every namespace: a requirement without a namespace lists across
# all of them. In the claims flavour the namespaced kinds are claims of the same kind and spec.
_SERVICES: Final = "auto-models-services"
_CONFIGS: Final = "auto-models-runtime-configs"
_MODELS: Final = "auto-models-models"
_CLUSTER_MODELS: Final = "auto-models-cluster-models"

MAX_NAMED: Final = 5
"""Images a condition message names before it says "and N more"."""
_MAX_IMAGE: Final = 200


@dataclass
class _Need:
    """What one image needs: its model's name, and the namespaces whose services need it."""

    name: str
    namespaces: set[str] = field(default_factory=set)


def cluster_models(observed: Observed, spec: ClusterRuntimeConfigSpec) -> Composition:
    """What a cluster config composes: the cluster models its services need, and why not more."""
    comp = Composition(requirements=[_requirement(_CONFIGS, Kind.RUNTIME_CONFIG)])
    configs = observed.required.get(_CONFIGS)
    composed = dict(observed.resources)
    overrides = _overrides(observed.name, configs or ())
    wanted = creation_scope(spec) is ModelCreationScope.CLUSTER
    if not wanted and not composed:
        if configs is not None:
            comp.conditions.append(_none_requested(observed.name, overrides))
        return comp
    comp.requirements += [
        _requirement(_SERVICES, Kind.SERVICE),
        _requirement(_MODELS, Kind.MODEL),
        _requirement(_CLUSTER_MODELS, Kind.CLUSTER_MODEL),
    ]
    services = observed.required.get(_SERVICES)
    models = observed.required.get(_MODELS)
    cluster_models = observed.required.get(_CLUSTER_MODELS)
    if configs is None or services is None or models is None or cluster_models is None:
        # Gate, then never tear down: what exists stays until the lists say otherwise.
        comp.resources = {k: keep(v, ready=True) for k, v in composed.items()}
        comp.conditions.append(
            Condition(
                ConditionType.AUTO_CREATED_MODELS,
                ConditionStatus.UNKNOWN,
                Reason.RESOLVING,
                "listing services, runtime configs and models",
            )
        )
        return comp

    ours = {name_of(m) for m in composed.values()}
    needs, skipped = _needs(
        observed.name,
        spec,
        overrides,
        services=services,
        models=models,
        cluster_models=[m for m in cluster_models if name_of(m) not in ours],
    )
    for image, need in sorted(needs.items()):
        manifest = build_aim_object(
            Kind.CLUSTER_MODEL,
            name=need.name,
            namespace=None,
            labels=AUTO_CREATED_LABELS,
            spec=image_model_spec(image, observed.name, spec),
        )
        # Ready whatever the model's state: the config is usable either way, and the services
        # that wait for the model report its state themselves.
        comp.resources[need.name] = Desired(manifest, ready=True)
    comp.conditions.append(_report(needs, skipped))
    return comp


def _needs(  # noqa: PLR0913 - the lists one decision reads
    config_name: str,
    spec: ClusterRuntimeConfigSpec,
    overrides: Mapping[str, ModelCreationScope | None],
    *,
    services: Sequence[Manifest],
    models: Sequence[Manifest],
    cluster_models: Sequence[Manifest],
) -> tuple[dict[str, _Need], list[str]]:
    """The images that need a cluster model of this config, and those skipped, with why."""
    served_in: set[tuple[str, str]] = {
        (_namespace(m), image) for m in models if (image := _image(m)) is not None
    }
    served = {image for m in cluster_models if (image := _image(m)) is not None}
    taken = {name_of(m) for m in cluster_models}
    own = creation_scope(spec)
    needs: dict[str, _Need] = {}
    skipped: dict[str, str] = {}
    for service in services:
        image = _service_image(service)
        if image is None or _runtime_config_name(service) != config_name:
            continue
        namespace = _namespace(service)
        if not _resolved_to(service, image) and (
            metadata_of(service).get("deletionTimestamp")
            or own is not ModelCreationScope.CLUSTER
            or overrides.get(namespace) is ModelCreationScope.NAMESPACE
            or (namespace, image) in served_in
            or image in served
        ):
            continue
        try:
            name = naming.auto_model_name(image)
            # A listed service is read as it is stored: the model's own bounds still apply.
            image_model_spec(image, config_name, spec)
        except ValidationError:
            skipped[image[:_MAX_IMAGE]] = "not an image a model accepts (spec.image)"
            continue
        except ValueError as e:
            skipped[image[:_MAX_IMAGE]] = str(e)
            continue
        if name in taken:
            skipped[image[:_MAX_IMAGE]] = f"the name {name} is taken by another AIMClusterModel"
            continue
        needs.setdefault(image, _Need(name)).namespaces.add(namespace)
    return needs, [f"{image} ({why})" for image, why in sorted(skipped.items())]


def _resolved_to(service: Manifest, image: str) -> bool:
    """Whether the service serves the model this config composes for its image already."""
    if string_at(service, "status", "resolvedModel", "kind") != Kind.CLUSTER_MODEL:
        return False
    try:
        return field_at(service, "status", "resolvedModel", "name") == naming.auto_model_name(image)
    except ValueError:
        return False


def _none_requested(name: str, overrides: Mapping[str, ModelCreationScope | None]) -> Condition:
    """This config's scope is Namespace: no cluster model, and whose asking for one is ignored."""
    asked = sorted(ns for ns, scope in overrides.items() if scope is ModelCreationScope.CLUSTER)
    if not asked:
        return condition(
            Reason.NO_CLUSTER_MODELS_REQUESTED,
            "model.creationScope is Namespace here and in every namespace's "
            f"AIMRuntimeConfig {name!r}: services create their own AIMModels",
        )
    return condition(
        Reason.NO_CLUSTER_MODELS_REQUESTED,
        f"model.creationScope is Namespace here: services create their own AIMModels; the "
        f"AIMRuntimeConfig {name!r} of namespace(s) {_bounded(asked)} sets creationScope: "
        "Cluster, which only this config can switch to, so it is ignored there (their objects "
        "say ClusterScopeNotAllowed); set creationScope: Cluster here to share one model per "
        "image",
    )


def _overrides(name: str, configs: Sequence[Manifest]) -> dict[str, ModelCreationScope | None]:
    """Each namespace's own `model.creationScope` for the config `name`, None where unset.

    A namespace's config is merged over this one as a service merges it, so a scope it does not
    set is this config's, and only its `Namespace` changes anything (a `Cluster` is ignored);
    one whose spec cannot be read is left to its services to report.
    """
    out: dict[str, ModelCreationScope | None] = {}
    for config in configs:
        if name_of(config) != name:
            continue
        model = field_at(config, "spec", "model")
        if not isinstance(model, dict) or "creationScope" not in model:
            out[_namespace(config)] = None
            continue
        try:
            parsed = parse_spec({"spec": {"model": model}}, RuntimeConfigSpec)
        except InvalidSpecError:
            continue
        out[_namespace(config)] = creation_scope(parsed)
    return out


def _report(needs: Mapping[str, _Need], skipped: Sequence[str]) -> Condition:
    named = [
        f"{need.name} ({image[:_MAX_IMAGE]}, for {len(need.namespaces)} namespace(s))"
        for image, need in sorted(needs.items())
    ]
    message = (
        f"keeps {len(needs)} AIMClusterModel(s) for services by image with model.creationScope: "
        f"Cluster{': ' + _bounded(named) if named else ''}"
    )
    if skipped:
        message += f"; skipped {len(skipped)} image(s): {_bounded(list(skipped))}"
    return condition(Reason.CLUSTER_MODELS_COMPOSED, message)


def _bounded(items: list[str]) -> str:
    if len(items) > MAX_NAMED:
        items = [*items[: MAX_NAMED - 1], f"and {len(items) - MAX_NAMED + 1} more"]
    return ", ".join(items)


def condition(reason: Reason, message: str) -> Condition:
    """AutoCreatedModels, True: the config composes what it says, or has nothing to compose."""
    return Condition(ConditionType.AUTO_CREATED_MODELS, ConditionStatus.TRUE, reason, message)


def _requirement(key: str, kind: Kind) -> Requirement:
    return Requirement(key, API_VERSION, kind)


def _image(model: Manifest) -> str | None:
    return string_at(model, "spec", "image")


def _service_image(service: Manifest) -> str | None:
    return string_at(service, "spec", "model", "image") or None


def _runtime_config_name(service: Manifest) -> str:
    return string_at(service, "spec", "runtimeConfigName") or DEFAULT_NAME


def _namespace(obj: Manifest) -> str:
    return string_at(obj, "metadata", "namespace") or ""
