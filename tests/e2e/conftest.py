"""The end-to-end tier: AIM objects converging on a real control plane (devtools/controlplane.py).

One control plane serves the whole tier. The packages go the way a platform team's would: built
with `crossplane xpkg build`, pushed with `crossplane xpkg push` to Debian's docker-registry, and
installed by Crossplane from there (the Configuration, then its Function dependency). Each
scenario works in namespaces of its own, so the scenarios do not see each other's objects.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from devtools.controlplane import ControlPlane, start_control_plane, wait_established
from devtools.kube import Kube, condition, wait_for
from devtools.publish import Published, publish
from devtools.registry import Registry, start_registry
from devtools.render import ROOT, Tools
from function.api.definitions import DEFINITIONS
from tests.e2e.simulate import simulate_package_runtime

SYSTEM_NAMESPACE: Final = "aim-system"
RESTRICTED: Final = {
    f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")
}
TIMES: dict[str, float] = {}


@dataclass(frozen=True)
class Platform:
    """The control plane with the AIM packages installed from the registry."""

    cluster: ControlPlane
    registry: Registry
    published: Published
    install_s: float

    @property
    def kube(self) -> Kube:
        """An admin client."""
        return self.cluster.admin

    def team_namespace(self, name: str) -> str:
        """A namespace for an application team, enforcing the `restricted` Pod Security level."""
        self.kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": RESTRICTED},
            }
        )
        return name

    def diagnose(self) -> str:
        """The end of Crossplane's and the function's logs, for a failed wait."""
        parts = []
        for name in ("crossplane", "function-aim"):
            c = self.cluster.component(name)
            parts.append(f"--- {c.log} ---\n{c.tail(15)}")
        return "\n".join(parts)


def aim(kind: str, name: str, namespace: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    """An AIM object."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


def install_third_party_crds(kube: Kube, crds: Path) -> None:
    """KServe's and Gateway API's CRDs, as their installs would leave them (no controllers)."""
    names = []
    for path in sorted(crds.glob("*/*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if crd:
                kube.apply(crd)
                names.append(crd["metadata"]["name"])
    for name in names:
        wait_established(kube, name)


def install(cluster: ControlPlane, published: Published) -> None:
    """Install the AIM Configuration from the registry, as a platform team would."""
    kube = cluster.admin
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SYSTEM_NAMESPACE}})
    # A Configuration cannot carry RBAC: package/rbac is applied next to it.
    for path in sorted((ROOT / "package" / "rbac").glob("*.yaml")):
        kube.apply_all(d for d in yaml.safe_load_all(path.read_text()) if d)
    kube.apply(
        {
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Configuration",
            "metadata": {"name": "aim"},
            "spec": {"package": published.configuration},
        }
    )
    simulate_package_runtime(kube, published.function_name, cluster.function_endpoint)

    def healthy() -> bool:
        cfg = kube.get("pkg.crossplane.io/v1", "Configuration", "aim")
        return all(
            (condition(cfg, t) or {}).get("status") == "True" for t in ("Installed", "Healthy")
        )

    wait_for(
        "the Configuration to be Installed and Healthy",
        healthy,
        timeout_s=180,
        explain=lambda: yaml.safe_dump(
            kube.get("pkg.crossplane.io/v1", "Configuration", "aim") or {}
        ),
    )
    for d in DEFINITIONS:
        name = f"{d.plural}.aim.silogen.ai"

        def established(xrd: str = name) -> bool:
            obj = kube.get("apiextensions.crossplane.io/v2", "CompositeResourceDefinition", xrd)
            return (condition(obj, "Established") or {}).get("status") == "True"

        wait_for(f"XRD {name} Established", established, timeout_s=120)


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
            t1 = time.monotonic()
            install_third_party_crds(cp.admin, crds)
            published = publish(tools, f"{registry.host}/aim-crossplane", out=root / "packages")
            install(cp, published)
            TIMES["publish and install"] = time.monotonic() - t1
            yield Platform(cp, registry, published, TIMES["publish and install"])


@pytest.fixture(autouse=True)
def _scenario_time(request: pytest.FixtureRequest) -> Iterator[None]:
    t0 = time.monotonic()
    yield
    TIMES[request.node.name] = time.monotonic() - t0


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the tier's wall times (the issue asks for them in the note)."""
    if TIMES:
        terminalreporter.section("end-to-end wall times")
        for name, seconds in TIMES.items():
            terminalreporter.write_line(f"{seconds:7.1f}s  {name}")
