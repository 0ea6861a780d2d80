"""The end-to-end tier: AIM objects converging on a real control plane (devtools/controlplane.py).

One control plane serves the whole tier. The packages go the way a platform team's would: built
with `crossplane xpkg build`, pushed with `crossplane xpkg push` to Debian's docker-registry, and
installed by Crossplane from there (the Configuration, then its Function dependency). Each
scenario works in namespaces of its own, so the scenarios do not see each other's objects.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devtools.controlplane import start_control_plane
from devtools.publish import publish
from devtools.registry import start_registry
from devtools.render import Tools
from tests.e2e.platform import SYSTEM_NAMESPACE, Platform, install, install_third_party_crds
from tests.e2e.timing import TIMES


@pytest.fixture(scope="session")
def platform(
    tools: Tools, crds: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """The control plane, the registry and the installed packages, for the whole tier."""
    root = tmp_path_factory.mktemp("e2e")
    (root / "registry").mkdir()
    with start_registry(tools, root / "registry", auth=False) as registry:
        function_args = [
            f"--oras={tools.oras}",
            f"--system-namespace={SYSTEM_NAMESPACE}",
            f"--insecure-registry={registry.host}",
        ]
        t0 = time.monotonic()
        with start_control_plane(tools, root / "cluster", function_args=function_args) as cp:
            TIMES["control plane start"] = time.monotonic() - t0
            TIMES.update({f"  of which {k}": v for k, v in cp.startup_s.items()})
            t1 = time.monotonic()
            install_third_party_crds(cp.admin, crds)
            published = publish(tools, f"{registry.host}/aim-crossplane", out=root / "packages")
            install(cp, published)
            TIMES["publish and install"] = time.monotonic() - t1
            yield Platform(cp, registry, published)


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
