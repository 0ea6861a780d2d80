"""Runtime config: the namespace's merged over the cluster's; a missing default is fine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.build import Manifest
from function.rules.runtimeconfig import lookup, merge_specs, resolve
from function.rules.status import State
from tests.cases import Case, table


def test_merge_recurses_into_objects_replaces_lists_and_merges_env_by_name() -> None:
    """Configs merge key by key, lists are replaced, env merges by name."""
    cluster: dict[str, Any] = {
        "routing": {"enabled": True, "gatewayRef": {"name": "gw"}},
        "imagePullSecrets": [{"name": "a"}, {"name": "b"}],
        "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "1"}],
    }
    namespaced: dict[str, Any] = {
        "routing": {"pathTemplate": "/p"},
        "imagePullSecrets": [{"name": "c"}],
        "env": [{"name": "Y", "value": "2"}],
    }
    assert merge_specs(cluster, namespaced) == {
        "routing": {"enabled": True, "gatewayRef": {"name": "gw"}, "pathTemplate": "/p"},
        "imagePullSecrets": [{"name": "c"}],
        "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
    }


def test_not_fetched_is_pending_and_missing_named_config_fails() -> None:
    """A config not fetched yet waits; a named config that does not exist fails."""
    named = lookup("team", "ns")
    health, config = resolve(named, {})
    assert (health.state, config) == (State.PENDING, None)
    health, config = resolve(named, {"runtime-config": (), "runtime-config-cluster": ()})
    assert (health.state, config) == (State.FAILED, None)
    assert "spec.runtimeConfigName" in health.message


def test_missing_default_gives_built_in_defaults() -> None:
    """Without a default config the built-in defaults apply."""
    health, config = resolve(
        lookup("default", "ns"), {"runtime-config": (), "runtime-config-cluster": ()}
    )
    assert health.state is State.READY
    assert config is not None
    assert config.ref is None
    assert config.spec.pvc_headroom_percent == 10


def test_an_invalid_config_fails_naming_the_field() -> None:
    """A config that cannot be read fails naming the field."""
    bad: Manifest = {"metadata": {"name": "default"}, "spec": {"pvcHeadroomPercent": "lots"}}
    health, config = resolve(
        lookup("default", "ns"), {"runtime-config": (bad,), "runtime-config-cluster": ()}
    )
    assert (health.state, config) == (State.FAILED, None)
    assert "spec.pvcHeadroomPercent" in health.message


def runtime_config(kind: str, uid: str, **spec: Any) -> Manifest:
    """A runtime config named `team` (in `ns` when namespaced), as Crossplane fetches it."""
    meta: dict[str, Any] = {"name": "team", "uid": uid}
    if kind == "AIMRuntimeConfig":
        meta["namespace"] = "ns"
    return {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


NAMESPACED = runtime_config("AIMRuntimeConfig", "uid-ns", defaultStorageClassName="team")
CLUSTER = runtime_config("AIMClusterRuntimeConfig", "uid-cl", pvcHeadroomPercent=20)


@dataclass(frozen=True)
class ScopeCase(Case):
    namespaced: tuple[Manifest, ...]
    cluster: tuple[Manifest, ...]
    reference: dict[str, str]
    says: str


SCOPE_CASES = [
    ScopeCase(
        "namespace-only",
        "a team's own config is the namespace's",
        (NAMESPACED,),
        (),
        {"scope": "Namespace", "namespace": "ns", "kind": "AIMRuntimeConfig", "uid": "uid-ns"},
        "using AIMRuntimeConfig 'team'",
    ),
    ScopeCase(
        "cluster-only",
        "the platform's config is the cluster's, without a namespace",
        (),
        (CLUSTER,),
        {"scope": "Cluster", "kind": "AIMClusterRuntimeConfig", "uid": "uid-cl"},
        "using AIMClusterRuntimeConfig 'team'",
    ),
    ScopeCase(
        "both",
        "the AIM API's scopes are Namespace, Cluster and Unknown: a merge of both is recorded as "
        "the namespace's config (looked up first, winning the merge), and the condition names both",
        (NAMESPACED,),
        (CLUSTER,),
        {"scope": "Namespace", "namespace": "ns", "kind": "AIMRuntimeConfig", "uid": "uid-ns"},
        "using AIMRuntimeConfig 'team' merged over AIMClusterRuntimeConfig 'team'",
    ),
]


@table(SCOPE_CASES)
def test_the_resolved_reference_keeps_to_the_aim_apis_scopes(case: ScopeCase) -> None:
    """`status.resolvedRuntimeConfig.scope` is one of the AIM API's values, whichever scopes
    the config was found in; the merged spec still takes fields from both."""
    health, config = resolve(
        lookup("team", "ns"),
        {"runtime-config": case.namespaced, "runtime-config-cluster": case.cluster},
    )
    assert config is not None
    assert config.ref is not None
    assert config.ref.model_dump(mode="json", exclude_none=True) == {
        "name": "team",
        **case.reference,
    }
    assert health.message == case.says
    if case.namespaced and case.cluster:
        assert config.spec.default_storage_class_name == "team"
        assert config.spec.pvc_headroom_percent == 20
