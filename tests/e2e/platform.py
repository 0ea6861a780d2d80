"""The AIM platform on the end-to-end control plane: installing it, and what scenarios share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.controlplane import CROSSPLANE_NAMESPACE, ControlPlane, wait_established
from devtools.kube import Kube, condition, wait_for
from devtools.publish import Published
from devtools.registry import Registry
from devtools.render import ROOT
from function.api.definitions import DEFINITIONS
from function.claims import composite_names
from tests.e2e.simulate import simulate_package_runtime

SYSTEM_NAMESPACE: Final = "aim-system"
RESTRICTED: Final = {
    f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")
}


@dataclass(frozen=True)
class Platform:
    """The control plane with the AIM packages installed from the registry.

    `registry` holds the packages and the public AIM images; `private_registry` requires basic
    auth (`devtools.registry.USER` / `PASSWORD`) and holds the private ones.
    """

    cluster: ControlPlane
    registry: Registry
    published: Published
    private_registry: Registry

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


def install(cluster: ControlPlane, published: Published, *, claims: bool = False) -> None:
    """Install the AIM Configuration from the registry, as a platform team would: the
    namespaced flavour, or with `claims` the claims flavour."""
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
            "spec": {
                "package": published.claims_configuration if claims else published.configuration
            },
        }
    )
    simulate_package_runtime(
        kube,
        published.function_name,
        cluster.function_endpoint,
        cluster.pki.function_dir,
        CROSSPLANE_NAMESPACE,
    )

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

    def function_healthy() -> bool:
        fn = kube.get("pkg.crossplane.io/v1", "Function", published.function_name)
        return all(
            (condition(fn, t) or {}).get("status") == "True" for t in ("Installed", "Healthy")
        )

    wait_for(
        f"the Function {published.function_name} to be Installed and Healthy",
        function_healthy,
        timeout_s=120,
        explain=lambda: yaml.safe_dump(
            kube.get("pkg.crossplane.io/v1", "Function", published.function_name) or {}
        ),
    )
    xrd_version = "v1" if claims else "v2"
    for d in DEFINITIONS:
        plural = composite_names(d)[1] if claims else d.plural
        name = f"{plural}.aim.silogen.ai"

        def established(xrd: str = name) -> bool:
            obj = kube.get(
                f"apiextensions.crossplane.io/{xrd_version}", "CompositeResourceDefinition", xrd
            )
            return (condition(obj, "Established") or {}).get("status") == "True"

        wait_for(f"XRD {name} Established", established, timeout_s=120)
    cluster.retire_rbac_manager()
