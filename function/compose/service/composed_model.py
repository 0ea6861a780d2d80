"""What a service asks Crossplane for to find its model, and the AIMModel it would compose.

Models a service composed are shared (`function.kube.owners`): the composing service lists every
other service that resolved to its model as an owner, so deleting the composing service leaves
the model to the others, and the first of them to reconcile adopts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from function.api.common import ModelSource
from function.api.meta import Kind, Manifest
from function.api.model import CustomModelConfig, DiscoveryConfig, ModelSpec
from function.api.runtimeconfig import ClusterRuntimeConfigSpec
from function.api.service import AIMServiceSpec, AIMServiceStatus
from function.build.aim import build_aim_object
from function.kube.contract import Observed, Requirement
from function.kube.lookup import Listing, Lookup
from function.kube.objects import labels_of, metadata_of, name_of, uid_of
from function.kube.owners import with_co_owners
from function.kube.parse import parse_status
from function.rules import labels, naming
from function.rules.runtimeconfig import RuntimeConfig

_ENDPOINT = "AWS_ENDPOINT_URL"


def requirements(spec: AIMServiceSpec, namespace: str) -> list[Requirement]:
    """What Crossplane must fetch to resolve the model; the same on every call.

    A service that may compose a model also lists the namespace's services: those that use its
    model become the model's co-owners.
    """
    if spec.model.ref is not None:
        return ref_lookup(spec.model.ref, namespace).requirements()
    reqs = [namespace_models(namespace).requirement(), services(namespace).requirement()]
    if spec.model.image is not None:
        reqs.append(CLUSTER_MODELS.requirement())
    return reqs


def ref_lookup(name: str, namespace: str) -> Lookup:
    """The lookup of `spec.model.ref`, namespace first."""
    return Lookup(
        key="model",
        name=name,
        namespace=namespace,
        namespaced_kind=Kind.MODEL,
        cluster_kind=Kind.CLUSTER_MODEL,
    )


def namespace_models(namespace: str) -> Listing:
    """The namespace's models, searched by image and by custom weights."""
    return Listing("models", Kind.MODEL, namespace)


def services(namespace: str) -> Listing:
    """The namespace's services: the users of what a service composes for others to share."""
    return Listing("services", Kind.SERVICE, namespace)


CLUSTER_MODELS = Listing("cluster-models", Kind.CLUSTER_MODEL)


def image_model_spec(
    image: str, runtime_config_name: str, config: ClusterRuntimeConfigSpec
) -> ModelSpec:
    """The spec of a model auto-created for an image, as its runtime config says to make it."""
    creation = config.model
    return ModelSpec(
        image=image,
        discovery=DiscoveryConfig(enabled=creation.auto_discovery if creation else False),
        runtime_config_name=runtime_config_name,
    )


AUTO_CREATED_LABELS: Final = {**labels.MANAGED_BY, labels.ORIGIN: labels.AUTO_GENERATED}
"""Labels of every model auto-created for a service: what tells it from the catalog's."""


def model_manifest(
    observed: Observed, spec: AIMServiceSpec, config: RuntimeConfig
) -> tuple[Manifest, ModelSpec]:
    """The AIMModel this service would compose now, and its spec."""
    common_labels = {
        **AUTO_CREATED_LABELS,
        labels.SERVICE: labels.value(observed.name),
    }
    if spec.model.image is not None:
        name = naming.auto_model_name(spec.model.image)
        model_spec = image_model_spec(
            spec.model.image, spec.runtime_config_name, config.spec
        ).model_copy(
            update={
                "image_pull_secrets": spec.image_pull_secrets,
                "service_account_name": spec.service_account_name,
            }
        )
        model_labels = common_labels
    else:
        custom = spec.model.custom
        assert custom is not None  # noqa: S101 - the XRD requires exactly one of ref, image, custom
        name = naming.custom_model_name(custom.base_image, source_keys(custom.model_sources))
        model_spec = ModelSpec(
            image=custom.base_image,
            model_sources=list(custom.model_sources),
            custom=CustomModelConfig(hardware=custom.hardware),
            runtime_config_name=spec.runtime_config_name,
            image_pull_secrets=spec.image_pull_secrets,
            service_account_name=spec.service_account_name,
            env=spec.env,
        )
        model_labels = {**common_labels, labels.CUSTOM_MODEL: "true"}
    manifest = build_aim_object(
        Kind.MODEL,
        name=name,
        namespace=observed.namespace,
        labels=model_labels,
        spec=model_spec,
    )
    return manifest, model_spec


def named(manifest: Manifest, name: str) -> Manifest:
    """`manifest` under the name the model already has (Crossplane keeps a composed name)."""
    if not name or name_of(manifest) == name:
        return manifest
    return {**manifest, "metadata": {**metadata_of(manifest), "name": name}}


def with_co_owners_of(observed: Observed, manifest: Manifest, composed: Manifest) -> Manifest:
    """The model with every other service that resolved to it as an owner (see the module doc)."""
    listed = services(observed.namespace).items(observed.required)
    uid = uid_of(composed)
    users = (
        None
        if listed is None
        else [s for s in listed if uid is not None and _resolved_model_uid(s) == uid]
    )
    return with_co_owners(manifest, composed, users, observed.composite)


def _resolved_model_uid(service: Manifest) -> str | None:
    status = parse_status(service, AIMServiceStatus)
    ref = status.resolved_model if status else None
    return ref.uid if ref else None


def composed_by_a_service(model: Manifest) -> bool:
    """Whether a service composed the model (a stopgap), not the platform team (the catalog)."""
    return labels_of(model).get(labels.ORIGIN) == labels.AUTO_GENERATED


def source_keys(sources: Sequence[ModelSource]) -> list[tuple[str, str, str | None]]:
    """What makes two custom models the same weights: id, URI and S3 endpoint, in order."""
    return [
        (
            s.model_id,
            s.source_uri,
            next((e.value for e in s.env or () if e.name == _ENDPOINT), None),
        )
        for s in sources
    ]
