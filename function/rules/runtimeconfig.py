"""The runtime config an AIM object uses: its namespace's AIMRuntimeConfig over the cluster's.

Both are looked up by the same name (`spec.runtimeConfigName`, default `default`). The namespace's
wins field by field: objects merge recursively, lists are replaced, except `env`, which merges by
variable name. A missing `default` leaves the built-in defaults, and reconciling goes on with a
warning (seed 004's DefaultRuntimeConfigMissing); any other missing name is a mistake.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from function.api.common import ResolvedReference
from function.api.meta import Kind, Scope
from function.api.runtimeconfig import (
    EffectiveRuntimeConfigSpec,
    ModelCreationScope,
    RuntimeDefaults,
)
from function.build import Manifest
from function.errors import InvalidSpecError
from function.kube.lookup import Lookup
from function.kube.objects import uid_of
from function.kube.observed import parse_spec
from function.rules import labels
from function.rules.merge import by_name, deep_merge
from function.rules.status import ConditionType, Health, Reason, State

DEFAULT_NAME = "default"


@dataclass(frozen=True)
class RuntimeConfig:
    """The merged runtime config, and which objects it came from (None: no config at all)."""

    spec: EffectiveRuntimeConfigSpec
    ref: ResolvedReference | None
    cluster: bool = False
    """An AIMClusterRuntimeConfig of this name exists (the one that creates cluster models)."""

    @property
    def creates_cluster_models(self) -> bool:
        """Models auto-created for `spec.model.image` are the cluster config's AIMClusterModels."""
        return creation_scope(self.spec) is ModelCreationScope.CLUSTER


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

    def _health(state: State, reason: Reason, message: str) -> Health:
        return Health(condition, state, reason, message)

    fetched = config_lookup.fetch(required)
    if fetched is None:
        return _health(State.PENDING, Reason.RESOLVING, f"looking up runtime config {name!r}"), None
    namespaced, cluster = fetched
    if namespaced is None and cluster is None:
        if name == DEFAULT_NAME:
            return Health(
                condition,
                State.READY,
                Reason.DEFAULT_RUNTIME_CONFIG_MISSING,
                f"neither AIMRuntimeConfig 'default' in namespace {config_lookup.namespace!r} nor "
                "AIMClusterRuntimeConfig 'default' exists; using the built-in defaults until one "
                "is created",
                warn=True,
            ), RuntimeConfig(EffectiveRuntimeConfigSpec(), None)
        return _health(
            State.FAILED,
            Reason.RUNTIME_CONFIG_MISSING,
            f"spec.runtimeConfigName: neither AIMRuntimeConfig {name!r} in namespace "
            f"{config_lookup.namespace!r} nor AIMClusterRuntimeConfig {name!r} exists; create "
            "it, or leave the field unset to use 'default'",
        ), None

    merged = merge_specs(_spec(cluster), _spec(namespaced))
    try:
        spec = parse_spec({"spec": merged}, EffectiveRuntimeConfigSpec)
    except InvalidSpecError as e:
        return _health(
            State.FAILED, Reason.INVALID, f"runtime config {name!r} cannot be used: {e}"
        ), None
    ref = _reference(name, config_lookup.namespace, namespaced, cluster)
    resolved = (
        Reason.RUNTIME_RESOLVED
        if condition is ConditionType.RUNTIME_RESOLVED
        else Reason.RUNTIME_CONFIG_RESOLVED
    )
    using = f"using {ref.kind} {name!r}"
    if namespaced is not None and cluster is not None:
        using += f" merged over {Kind.CLUSTER_RUNTIME_CONFIG} {name!r}"
    return _health(State.READY, resolved, using), RuntimeConfig(
        spec, ref, cluster=cluster is not None
    )


def creation_scope(spec: RuntimeDefaults) -> ModelCreationScope:
    """Where models auto-created for `spec.model.image` live under this (merged) config."""
    return spec.model.creation_scope if spec.model is not None else ModelCreationScope.NAMESPACE


def propagated_labels(
    metadata: Mapping[str, JsonValue], config: RuntimeConfig | None
) -> dict[str, str]:
    """The XR's labels its runtime config's `labelPropagation` copies onto what it composes."""
    rule = config.spec.label_propagation if config else None
    if rule is None or not rule.enabled or not rule.match:
        return {}
    raw = metadata.get("labels")
    return labels.propagated(raw if isinstance(raw, dict) else {}, rule.match)


def merge_specs(base: Mapping[str, JsonValue], over: Mapping[str, JsonValue]) -> Manifest:
    """`over` on top of `base`: objects merge, lists are replaced, `env` merges by name.

    The specs merge before they are parsed, so a problem in either is reported on the merged
    spec's field; env entries that are not objects with a name are simply kept.
    """
    return deep_merge(base, over, {"env": _env_lists})


def _env_lists(base: JsonValue, over: JsonValue) -> JsonValue | None:
    if not isinstance(base, list) or not isinstance(over, list):
        return None
    return by_name((base, over), _env_name)


def _env_name(entry: JsonValue) -> str | None:
    # Admission makes names strings; the parse after the merge reports entries where it did not.
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) else None


def _spec(obj: Manifest | None) -> Mapping[str, JsonValue]:
    spec = obj.get("spec") if obj else None
    return spec if isinstance(spec, dict) else {}


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
