"""AIMRuntimeConfig / AIMClusterRuntimeConfig: read by others; the cluster one creates models.

Each reconcile checks the spec (a bad one is a fatal result naming the field). A namespaced config
composes nothing; one that sets `model.creationScope: Cluster` says, in `AutoCreatedModels`,
whether the AIMClusterRuntimeConfig of its name does too (else it is ignored,
`ClusterScopeNotAllowed`). An AIMClusterRuntimeConfig is where cluster-scoped auto-created models
come from: Crossplane v2 does not let a namespaced XR (a service) compose a cluster-scoped object,
so the cluster config of the services' `runtimeConfigName` composes them instead, when its own
`model.creationScope` is Cluster: only it may switch services to cluster models, which are
inspected with the system namespace's pull secrets. It lists every AIMService, every
AIMRuntimeConfig of its name (a namespace's may opt out with `Namespace`; its `Cluster` is ignored,
and named here), and the models; for each image of its services whose effective scope is Cluster
and that no model serves as the service would look it up (its namespace's AIMModels, then
AIMClusterModels other than this config's own), it composes one AIMClusterModel `auto-<hash of
image>`. One per image, whatever the namespaces: the services share it and its discovery. It is
kept while a service needs it or resolved to it, and dropped once none does; while a listing is not
fetched, the models it has are kept as they are (`cluster_models`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import JsonValue

from function.api.meta import API_VERSION, Kind, Manifest
from function.api.runtimeconfig import (
    ClusterRuntimeConfigSpec,
    RuntimeConfigSpec,
    RuntimeConfigStatus,
)
from function.compose.frame import cluster_credentials, stamp
from function.compose.runtimeconfig.cluster_models import cluster_models, condition
from function.kube.contract import Composition, Observed, Requirement
from function.kube.parse import parse_spec
from function.rules.runtimeconfig import asks_cluster_scope
from function.rules.status import Condition, ConditionStatus, ConditionType, Reason

RUNTIME_CONFIG_KINDS = frozenset({Kind.RUNTIME_CONFIG, Kind.CLUSTER_RUNTIME_CONFIG})


def compose_runtime_config(observed: Observed) -> Composition:
    """Validate a runtime config; a cluster one composes the cluster models it is asked for."""
    if observed.kind == Kind.RUNTIME_CONFIG:
        parse_spec(observed.composite, RuntimeConfigSpec)
        comp = _namespace_scope(observed)
    else:
        spec = parse_spec(observed.composite, ClusterRuntimeConfigSpec)
        comp = cluster_models(observed, spec)
        credentials = cluster_credentials(observed, [("spec.env", spec.env)])
        if credentials is not None:
            comp.conditions.append(credentials)
    # No headline: Crossplane decides readiness from what a cluster config composes.
    stamp(comp, observed, RuntimeConfigStatus())
    return comp


_PLATFORM: Final = "cluster-runtime-config"


def _namespace_scope(observed: Observed) -> Composition:
    """A namespace's config composes nothing; with `creationScope: Cluster`, it says if ignored.

    It is, unless the AIMClusterRuntimeConfig of its name sets Cluster too.
    """
    if not asks_cluster_scope(_spec_of(observed.composite)):
        return Composition()
    name = observed.name
    comp = Composition(
        requirements=[
            Requirement(_PLATFORM, API_VERSION, Kind.CLUSTER_RUNTIME_CONFIG, match_name=name)
        ]
    )
    found = observed.required.get(_PLATFORM)
    if found is None:
        return comp
    if found and asks_cluster_scope(_spec_of(found[0])):
        comp.conditions.append(
            condition(
                Reason.CLUSTER_MODELS_COMPOSED,
                f"{Kind.CLUSTER_RUNTIME_CONFIG} {name!r} sets creationScope: Cluster too, and "
                "creates the AIMClusterModels of this namespace's services by image",
            )
        )
        return comp
    comp.conditions.append(
        Condition(
            ConditionType.AUTO_CREATED_MODELS,
            ConditionStatus.FALSE,
            Reason.CLUSTER_SCOPE_NOT_ALLOWED,
            f"spec.model.creationScope: Cluster is ignored: only {Kind.CLUSTER_RUNTIME_CONFIG} "
            f"{name!r} can switch services to cluster-scoped models (inspected with the "
            "platform's pull secrets), and "
            + ("none exists" if not found else "it does not")
            + f"; services by image in namespace {observed.namespace!r} create their own "
            "AIMModels. Ask the platform team to set it there, or remove it here",
            warn=True,
        )
    )
    return comp


def _spec_of(obj: Manifest) -> Mapping[str, JsonValue]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}
