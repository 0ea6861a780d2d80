"""The end-to-end tier: AIM objects converging on a real control plane.

The plane is devtools/cluster/controlplane.py.

One control plane serves the whole tier. The packages go the way a platform team's would: built
with `crossplane xpkg build` (the Function package with the runtime image embedded), pushed with
`crossplane xpkg push` to Debian's docker-registry, and installed by Crossplane from there (the
Configuration, then its Function dependency). Each scenario works in namespaces of its own, so
the scenarios do not see each other's objects.

Two registries serve the AIM images of the journeys, one anonymous and one with basic auth. The
function reads `ghcr.io` images from the first and `private.registry` images from the second
(`--registry-mirror`), so the seed documents' manifests are applied with their image names as
written. It recomposes waiting objects every 2 s and ready ones every 5 s (`--waiting-recheck`,
`--ready-recheck`), as core's poll interval is shortened here, so that a chain of objects
converges in seconds rather than in 10 s and one-minute steps.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from devtools.cluster.platform import PRIVATE_REGISTRY, SYSTEM_NAMESPACE, Platform, start_platform
from devtools.cluster.registry import PASSWORD, USER, Registry, start_registry
from devtools.cluster.simulate import simulate_gpu_node
from devtools.cluster.timing import TIMES
from devtools.pkg.image import Image
from devtools.tools import Tools
from tests.e2e.cluster import SimulatedCluster
from tests.e2e.images import IMAGES, SOURCE_SIZES
from tests.e2e.journey import Journey
from tests.e2e.target import KUBECONFIG, Target


@pytest.fixture(scope="session")
def platform(
    tools: Tools, crds: Path, runtime_image: Image, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """The control plane with a node running the Function, the registries and the installed
    packages, for the whole tier."""
    root = tmp_path_factory.mktemp("e2e")
    with start_platform(tools, crds, runtime_image, root, node=True) as platform:
        yield platform


# Modules that start a node of their own run before the platform's node exists: one node per
# host at a time (docs/e2e.md), and the platform lives until the session ends.
OWN_NODE: Final = frozenset(
    {
        "test_coldstart_benchmark.py",
        "test_function_runtime.py",
        "test_journey_node.py",
        "test_kserve.py",
        "test_node.py",
        "test_node_start.py",
        "test_replicas_benchmark.py",
        "test_scale_to_zero.py",
        "test_upgrade.py",
    }
)


# What runs against a cluster `AIM_E2E_KUBECONFIG` names (tests/e2e/target.py): every controller
# in it is real, so nothing here may simulate one, and nothing starts host processes.
ON_EXISTING_CLUSTER: Final = frozenset({"test_journey_node.py"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the tests of modules with their own node first, keeping every other order; against
    an existing cluster, skip what needs the tier's own control plane."""
    items.sort(key=lambda item: item.path.name not in OWN_NODE)
    if Target.from_env(os.environ) is None:
        return
    skip = pytest.mark.skip(
        reason=f"{KUBECONFIG} names an existing cluster: this test needs the tier's own control "
        "plane (it starts host processes or simulates a controller)"
    )
    here = Path(__file__).parent
    for item in items:
        if item.path.parent == here and item.path.name not in ON_EXISTING_CLUSTER:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def private_registry(tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A registry with basic auth for a node module's own plane (an image of a private model),
    which that node pulls from over plain HTTP."""
    with start_registry(tools, tmp_path_factory.mktemp("registry"), auth=True) as registry:
        yield registry


@pytest.fixture(scope="session")
def aim_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the test AIM images' Debian root filesystem is unpacked, once for the tier."""
    return tmp_path_factory.mktemp("aim-images")


@pytest.fixture(scope="session")
def claims_platform(
    tools: Tools, crds: Path, runtime_image: Image, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """A second control plane with the claims flavour installed (the two flavours serve the
    same kinds, so they cannot share one)."""
    root = tmp_path_factory.mktemp("e2e-claims")
    with start_platform(tools, crds, runtime_image, root, claims=True) as platform:
        yield platform


def push_journey_images(platform: Platform, work: Path) -> None:
    """The journeys' AIM images, pushed to the platform's registries that serve their names."""
    for image in IMAGES.values():
        private = image.image.startswith(f"{PRIVATE_REGISTRY}/")
        image.push(platform.private_registry if private else platform.registry, work)


@pytest.fixture(scope="session")
def journey_images(platform: Platform, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The journeys' AIM images, pushed to the registries that serve their names."""
    push_journey_images(platform, tmp_path_factory.mktemp("images"))


@contextlib.contextmanager
def simulated_journey(platform: Platform, test_name: str) -> Iterator[Journey]:
    """A journey with the cluster's missing controllers simulated in its namespaces."""
    suffix = hashlib.sha256(test_name.encode()).hexdigest()[:5]
    with SimulatedCluster(
        platform.kube,
        images=IMAGES,
        source_sizes=SOURCE_SIZES,
        private_registries={PRIVATE_REGISTRY: (USER, PASSWORD)},
    ) as cluster:
        cluster.serve(SYSTEM_NAMESPACE)
        journey = Journey(platform, cluster, suffix)
        try:
            yield journey
        finally:
            journey.cleanup()


@pytest.fixture
def journey(
    platform: Platform, journey_images: None, gpu_node: str, request: pytest.FixtureRequest
) -> Iterator[Journey]:
    """A journey with the cluster's missing controllers simulated in its namespaces."""
    del journey_images, gpu_node  # pushed and registered: that is all it needs of them
    with simulated_journey(platform, request.node.name) as journey:
        yield journey


@pytest.fixture
def claims_journey(
    claims_platform: Platform,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[Journey]:
    """A journey on the claims flavour's control plane (its own images and GPU node)."""
    push_journey_images(claims_platform, tmp_path_factory.mktemp("claims-images"))
    simulate_gpu_node(claims_platform.kube, "gpu-node-1")
    with simulated_journey(claims_platform, request.node.name) as journey:
        yield journey


@pytest.fixture(scope="session")
def gpu_node(platform: Platform) -> str:
    """An MI300X node with 8 GPUs (simulated: no kubelet or GPU operator runs here)."""
    simulate_gpu_node(platform.kube, "gpu-node-1")
    return "gpu-node-1"


@pytest.fixture(autouse=True)
def _scenario_time(request: pytest.FixtureRequest) -> Iterator[None]:
    t0 = time.monotonic()
    yield
    TIMES[request.node.name] = time.monotonic() - t0


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the bring-up's and each scenario's wall time, so a slow one stands out."""
    if TIMES:
        terminalreporter.section("end-to-end wall times")
        for name, seconds in TIMES.items():
            terminalreporter.write_line(f"{seconds:7.1f}s  {name}")
