"""Runtime config: the namespace's merged over the cluster's; a missing default is fine."""

from __future__ import annotations

from typing import Any

from function.build import Manifest
from function.rules.runtimeconfig import lookup, merge_specs, resolve
from function.rules.status import State


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
