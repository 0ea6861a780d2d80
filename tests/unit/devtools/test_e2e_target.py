"""tests/e2e/target.py: which cluster the end-to-end journey runs on, from the environment."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devtools.tools import HarnessError
from tests.cases import table
from tests.e2e.target import Target, gpu_node, preflight


@dataclass(frozen=True)
class Env:
    id: str
    reason: str
    env: dict[str, str]
    want: Target | None


ENVS = [
    Env("unset", "without a kubeconfig the tier makes its own cluster", {}, None),
    Env(
        "one-address",
        "a registry every side reaches at one address serves packages and images there",
        {"AIM_E2E_KUBECONFIG": "/k", "AIM_E2E_REGISTRY": "10.0.0.5:5000"},
        Target(Path("/k"), "10.0.0.5:5000", "10.0.0.5:5000", "10.0.0.5:5000"),
    ),
    Env(
        "kind",
        "kind's local registry is localhost:5001 here and another address in the cluster",
        {
            "AIM_E2E_KUBECONFIG": "/k",
            "AIM_E2E_REGISTRY": "localhost:5001",
            "AIM_E2E_CLUSTER_REGISTRY": "172.18.0.3:5000",
            "AIM_E2E_GPU_NODE": "aim-worker",
        },
        Target(Path("/k"), "localhost:5001", "172.18.0.3:5000", "172.18.0.3:5000", "aim-worker"),
    ),
]


@table(ENVS)
def test_the_environment_names_the_target(case: Env) -> None:
    """The variables docs/e2e.md gives map onto the target's addresses."""
    assert Target.from_env(case.env) == case.want


def test_a_kubeconfig_without_a_registry_says_what_to_set() -> None:
    """The packages need a registry the cluster can pull from: the error names the variables
    and the usual value, rather than failing in a push later."""
    with pytest.raises(HarnessError, match="AIM_E2E_REGISTRY is not") as raised:
        Target.from_env({"AIM_E2E_KUBECONFIG": "/k"})
    assert "localhost:5001" in str(raised.value)
    assert "AIM_E2E_CLUSTER_REGISTRY" in str(raised.value)


class FakeCluster:
    """The API a preflight and the GPU node choice read: CRDs and Nodes."""

    def __init__(self, crds: set[str], nodes: list[dict[str, Any]]) -> None:
        self.crds = crds
        self.nodes = nodes

    def ready(self) -> bool:
        return True

    def get(self, api_version: str, kind: str, name: str) -> dict[str, Any] | None:
        del api_version, kind
        return {"metadata": {"name": name}} if name in self.crds else None

    def list(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        del api_version, kind
        return self.nodes


def node(
    name: str, *, ready: bool = True, unschedulable: bool = False, taint: str = ""
) -> dict[str, Any]:
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    spec: dict[str, Any] = {"unschedulable": unschedulable}
    if taint:
        spec["taints"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": taint}]
    return {"metadata": {"name": name}, "spec": spec, "status": status}


TARGET = Target(Path("/k"), "r:1", "r:1", "r:1")


def test_a_cluster_without_kserve_is_refused_before_anything_is_installed() -> None:
    """Installing the packages on a cluster without KServe would leave a half-installed
    platform whose services never run: the preflight names the CRD and what installs it."""
    kube = FakeCluster({"functions.pkg.crossplane.io"}, [])
    with pytest.raises(
        HarnessError, match=r"no inferenceservices\.serving\.kserve\.io: install KServe"
    ):
        preflight(kube, TARGET)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Pick:
    id: str
    reason: str
    nodes: list[dict[str, Any]]
    wanted: str | None
    want: str | None


PICKS = [
    Pick(
        "first-ready",
        "an unschedulable or not Ready node cannot run the predictor: the first Ready "
        "schedulable node is used",
        [node("cp", unschedulable=True), node("not-ready", ready=False), node("worker")],
        None,
        "worker",
    ),
    Pick(
        "tainted",
        "a multi-node kind cluster's control plane carries a NoSchedule taint: pass over it",
        [node("cp", taint="NoSchedule"), node("worker")],
        None,
        "worker",
    ),
    Pick(
        "prefer-no-schedule",
        "a PreferNoSchedule taint still takes pods",
        [node("soft", taint="PreferNoSchedule"), node("worker")],
        None,
        "soft",
    ),
    Pick("named", "a named node is used as named", [node("a"), node("b")], "b", "b"),
    Pick("named-missing", "a name that is not a node is an error", [node("a")], "gpu", None),
    Pick("none", "no usable node is an error", [node("x", ready=False)], None, None),
]


@table(PICKS)
def test_the_gpu_node_is_the_named_or_first_usable_node(case: Pick) -> None:
    """Where fake GPUs are advertised decides where the predictor can schedule."""
    kube = FakeCluster(set(), case.nodes)
    if case.want is None:
        with pytest.raises(HarnessError, match="no "):
            gpu_node(kube, case.wanted)  # type: ignore[arg-type]
    else:
        assert gpu_node(kube, case.wanted) == case.want  # type: ignore[arg-type]
