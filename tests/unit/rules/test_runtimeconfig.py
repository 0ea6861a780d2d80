"""Runtime config: the namespace's merged over the cluster's; a missing default is fine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.api.meta import Manifest
from function.compose.config_lookup import lookup, resolve
from function.rules.runtimeconfig import merge_specs
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


def test_not_fetched_is_pending() -> None:
    """A config not fetched yet waits."""
    health, config = resolve(lookup("team", "ns"), {})
    assert (health.state, config) == (State.PENDING, None)


@dataclass(frozen=True)
class MissingCase(Case):
    name: str
    state: State
    why: str
    warn: bool
    says: str


MISSING_CASES = [
    MissingCase(
        "default",
        "seed 004: the implicit default missing is a warning and reconciling goes on, with the "
        "built-in defaults",
        "default",
        State.READY,
        "DefaultRuntimeConfigMissing",
        warn=True,
        says="neither AIMRuntimeConfig 'default' in namespace 'ns' nor AIMClusterRuntimeConfig "
        "'default' exists",
    ),
    MissingCase(
        "named",
        "a config the user named and that does not exist is their mistake: it fails, naming the "
        "field",
        "team",
        State.FAILED,
        "RuntimeConfigMissing",
        warn=False,
        says="spec.runtimeConfigName: neither AIMRuntimeConfig 'team'",
    ),
]


@table(MISSING_CASES)
def test_a_missing_config(case: MissingCase) -> None:
    """Only the default may be missing; its absence warns (once, see test_transitions) rather
    than stopping anything."""
    health, config = resolve(
        lookup(case.name, "ns"), {"runtime-config": (), "runtime-config-cluster": ()}
    )
    assert (health.state, health.reason, health.warn) == (case.state, case.why, case.warn)
    assert health.message.startswith(case.says)
    assert health.to_condition().warn is case.warn
    if case.state is State.READY:
        assert config is not None
        assert config.ref is None
        assert config.spec.pvc_headroom_percent == 10
    else:
        assert config is None


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


def test_a_config_that_exists_does_not_warn() -> None:
    """Only the missing default warns: a config found is plainly resolved."""
    health, _ = resolve(
        lookup("team", "ns"), {"runtime-config": (NAMESPACED,), "runtime-config-cluster": ()}
    )
    assert (health.reason, health.warn) == ("RuntimeConfigResolved", False)
