"""The runtime config an AIM object uses: its namespace's AIMRuntimeConfig over the cluster's.

Both are looked up by the same name (`spec.runtimeConfigName`, default `default`). The namespace's
wins field by field: objects merge recursively, lists are replaced, except `env`, which merges by
variable name; but only the cluster's may set `model.creationScope: Cluster` (a namespace may opt
out with `Namespace`). The lookup itself, and what a missing config means, is
`function/compose/config_lookup.py`; here are the merge and what a merged config decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from function.api.common import ResolvedReference
from function.api.meta import Manifest
from function.api.runtimeconfig import (
    ClusterRoutingConfig,
    ClusterScaleToZero,
    EffectiveRuntimeConfigSpec,
    ModelCreationScope,
    RoutePolicy,
    RuntimeDefaults,
)
from function.rules import labels
from function.rules.merge import by_name, deep_merge

DEFAULT_NAME = "default"


@dataclass(frozen=True)
class RuntimeConfig:
    """The merged runtime config, and which objects it came from (None: no config at all)."""

    spec: EffectiveRuntimeConfigSpec
    ref: ResolvedReference | None
    cluster: bool = False
    """An AIMClusterRuntimeConfig of this name exists (the one that creates cluster models)."""
    platform_routing: ClusterRoutingConfig | None = None
    """The AIMClusterRuntimeConfig's own `routing`, before a namespace's is merged over it: what
    the platform wrote (its annotations always pass the route policy), as opposed to a tenant."""
    platform_scale_to_zero: ClusterScaleToZero | None = None
    """The AIMClusterRuntimeConfig's own `scaleToZero`: how long a waking request waits and where
    are the platform's to say, whatever a namespace's config carries."""

    @property
    def route_policy(self) -> RoutePolicy:
        """The platform's route policy, or the default one (each namespace under `/<ns>/`).

        Read from the cluster's config alone: the merged spec has the same one (a namespace's
        config with a policy is refused), but this does not depend on that refusal.
        """
        policy = self.platform_routing.policy if self.platform_routing else None
        return policy or RoutePolicy()

    @property
    def creates_cluster_models(self) -> bool:
        """Models auto-created for `spec.model.image` are the cluster config's AIMClusterModels."""
        return creation_scope(self.spec) is ModelCreationScope.CLUSTER


def asks_cluster_scope(spec: Mapping[str, JsonValue]) -> bool:
    """Whether a runtime config's spec, as stored, sets `model.creationScope: Cluster`.

    Only the AIMClusterRuntimeConfig may switch services to cluster-scoped models: they are
    inspected, and their discovery pulls, with the system namespace's pull secrets, so a
    namespace's config that says Cluster would spend the platform's credentials on any image its
    team names. A namespace's `Cluster` is therefore left out of the merge (`namespace_spec`).
    """
    model = spec.get("model")
    return isinstance(model, dict) and model.get("creationScope") == ModelCreationScope.CLUSTER


def namespace_spec(spec: Mapping[str, JsonValue]) -> Mapping[str, JsonValue]:
    """A namespace's spec as merged over the cluster's: without `model.creationScope: Cluster`."""
    if not asks_cluster_scope(spec):
        return spec
    model = spec.get("model")
    kept = (
        {k: v for k, v in model.items() if k != "creationScope"} if isinstance(model, dict) else {}
    )
    return {**spec, "model": kept}


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
