"""Looking up the runtime config an AIM object uses, and what a missing or bad one means.

Both scopes are looked up by the same name (`spec.runtimeConfigName`, default `default`) and
merged as `function/rules/runtimeconfig.py` says. A missing `default` leaves the built-in
defaults, and reconciling goes on with a warning (the AIM operator's DefaultRuntimeConfigMissing);
any other missing name is a mistake. A namespace's config that sets `model.creationScope:
Cluster` where the cluster's does not is used without that field, and says so (a Warning, reason
`ClusterScopeNotAllowed`): only the AIMClusterRuntimeConfig may switch services to cluster models.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from function.api.common import ResolvedReference
from function.api.meta import Kind, Manifest, Scope
from function.api.runtimeconfig import ClusterRuntimeConfigSpec, EffectiveRuntimeConfigSpec
from function.errors import InvalidSpecError
from function.kube.lookup import Lookup
from function.kube.objects import uid_of
from function.kube.parse import parse_spec
from function.rules.runtimeconfig import (
    DEFAULT_NAME,
    RuntimeConfig,
    asks_cluster_scope,
    merge_specs,
    namespace_spec,
)
from function.rules.status import ConditionType, Health, Reason


def lookup(name: str, namespace: str) -> Lookup:
    """Both scopes of the runtime config `name`."""
    return Lookup(
        key="runtime-config",
        name=name,
        namespace=namespace,
        namespaced_kind=Kind.RUNTIME_CONFIG,
        cluster_kind=Kind.CLUSTER_RUNTIME_CONFIG,
    )


def resolve(
    config_lookup: Lookup,
    required: Mapping[str, tuple[Manifest, ...]],
    condition: ConditionType = ConditionType.RUNTIME_CONFIG_READY,
) -> tuple[Health, RuntimeConfig | None]:
    """The merged config once both scopes were fetched; None while waiting or when unusable.

    Models report it as `RuntimeResolved` (seed 004), every other kind as `RuntimeConfigReady`;
    the reasons are the same.
    """
    name = config_lookup.name

    fetched = config_lookup.fetch(required)
    if fetched is None:
        return condition.pending(Reason.RESOLVING, f"looking up runtime config {name!r}"), None
    namespaced, cluster = fetched
    if namespaced is None and cluster is None:
        return _missing(condition, name, config_lookup.namespace)

    if namespaced is not None and _has_policy(namespaced):
        # Its XRD has no such field, so the API server refuses it; this holds where admission
        # did not run. Merged over the cluster's, it would loosen the platform's policy.
        return condition.failed(
            Reason.INVALID,
            f"{Kind.RUNTIME_CONFIG} {name!r} in namespace {config_lookup.namespace!r}: "
            f"spec.routing.policy is the platform's, set only in {Kind.CLUSTER_RUNTIME_CONFIG} "
            f"{name!r}; remove it from the namespace's config",
        ), None
    merged = merge_specs(_spec(cluster), namespace_spec(_spec(namespaced)))
    try:
        spec = parse_spec({"spec": merged}, EffectiveRuntimeConfigSpec)
        # The cluster config as observed: its parse is cached for as long as it is unchanged.
        platform = (
            parse_spec(cluster, ClusterRuntimeConfigSpec)
            if cluster and "spec" in cluster
            else (ClusterRuntimeConfigSpec() if cluster else None)
        )
    except InvalidSpecError as e:
        return condition.failed(
            Reason.INVALID, f"runtime config {name!r} cannot be used: {e}"
        ), None
    ref = _reference(name, config_lookup.namespace, namespaced, cluster)
    health = _resolved(condition, ref, config_lookup.namespace, namespaced, cluster)
    return health, RuntimeConfig(
        spec,
        ref,
        cluster=cluster is not None,
        platform_routing=platform.routing if platform else None,
        platform_scale_to_zero=platform.scale_to_zero if platform else None,
    )


def _missing(
    condition: ConditionType, name: str, namespace: str
) -> tuple[Health, RuntimeConfig | None]:
    """Neither scope has the config: the built-in defaults for `default`, a mistake otherwise."""
    if name == DEFAULT_NAME:
        return condition.ready(
            Reason.DEFAULT_RUNTIME_CONFIG_MISSING,
            f"neither AIMRuntimeConfig 'default' in namespace {namespace!r} nor "
            "AIMClusterRuntimeConfig 'default' exists; using the built-in defaults until one "
            "is created",
            warn=True,
        ), RuntimeConfig(EffectiveRuntimeConfigSpec(), None)
    return condition.failed(
        Reason.RUNTIME_CONFIG_MISSING,
        f"spec.runtimeConfigName: neither AIMRuntimeConfig {name!r} in namespace "
        f"{namespace!r} nor AIMClusterRuntimeConfig {name!r} exists; create "
        "it, or leave the field unset to use 'default'",
    ), None


def _resolved(
    condition: ConditionType,
    ref: ResolvedReference,
    namespace: str,
    namespaced: Manifest | None,
    cluster: Manifest | None,
) -> Health:
    """Ready: which config is used, and whether a namespace's creationScope is ignored."""
    name = ref.name
    resolved = (
        Reason.RUNTIME_RESOLVED
        if condition is ConditionType.RUNTIME_RESOLVED
        else Reason.RUNTIME_CONFIG_RESOLVED
    )
    using = f"using {ref.kind} {name!r}"
    if namespaced is not None and cluster is not None:
        using += f" merged over {Kind.CLUSTER_RUNTIME_CONFIG} {name!r}"
    if asks_cluster_scope(_spec(namespaced)) and not asks_cluster_scope(_spec(cluster)):
        health = condition.ready(
            Reason.CLUSTER_SCOPE_NOT_ALLOWED,
            f"{using}; its spec.model.creationScope: Cluster is ignored: only "
            f"{Kind.CLUSTER_RUNTIME_CONFIG} {name!r} can switch services to cluster-scoped "
            "models (inspected with the platform's pull secrets), and "
            + ("none exists" if cluster is None else "it does not")
            + f", so services by image create their AIMModels in namespace "
            f"{namespace!r}; set creationScope: Cluster in "
            f"{Kind.CLUSTER_RUNTIME_CONFIG} {name!r} to share one model per image across "
            "namespaces, or remove it from the namespace's config",
            warn=True,
        )
    else:
        health = condition.ready(resolved, using)
    return health


def _spec(obj: Manifest | None) -> Mapping[str, JsonValue]:
    spec = obj.get("spec") if obj else None
    return spec if isinstance(spec, dict) else {}


def _has_policy(obj: Manifest) -> bool:
    routing = _spec(obj).get("routing")
    return isinstance(routing, dict) and "policy" in routing


def _reference(
    name: str, namespace: str, namespaced: Manifest | None, cluster: Manifest | None
) -> ResolvedReference:
    # Found in both scopes, the namespace's object is what the name resolved to (it is looked up
    # first and wins the merge); the AIM API's scopes have no word for "both".
    if namespaced is not None:
        return ResolvedReference(
            name=name,
            namespace=namespace,
            scope=Scope.NAMESPACE,
            kind=Kind.RUNTIME_CONFIG,
            uid=uid_of(namespaced),
        )
    return ResolvedReference(
        name=name, scope=Scope.CLUSTER, kind=Kind.CLUSTER_RUNTIME_CONFIG, uid=uid_of(cluster)
    )
