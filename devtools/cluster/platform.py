"""The AIM platform on the end-to-end control plane: installing it, and what scenarios share."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.controlplane import (
    CROSSPLANE_NAMESPACE,
    FUNCTION_MODULE,
    ControlPlane,
    start_control_plane,
    wait_established,
)
from devtools.cluster.kube import Kube, condition, wait_for
from devtools.cluster.node import NODE_NAME, Node, start_node
from devtools.cluster.registry import Registry, start_registry
from devtools.cluster.simulate import simulate_package_runtime
from devtools.cluster.timing import TIMES
from devtools.gen.version import Release
from devtools.pkg.image import Image
from devtools.pkg.publish import Published, publish
from devtools.pkg.release import publish_release
from devtools.tools import ROOT, Tools
from function.api.definitions import DEFINITIONS
from function.kube.claims import composite_names

SYSTEM_NAMESPACE: Final = "aim-system"
PUBLIC_REGISTRY: Final = "ghcr.io"
"""The public registry the journeys' AIM images are named under, mirrored to the tier's own."""
PRIVATE_REGISTRY: Final = "private.registry"
"""A registry that needs credentials, mirrored to the tier's private one."""
RESTRICTED: Final = {
    f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "warn", "audit")
}


@dataclass(frozen=True)
class Platform:
    """The control plane with the AIM packages installed from the registry.

    `registry` holds the packages and the public AIM images; `private_registry` requires basic
    auth (`devtools.cluster.registry.USER` / `PASSWORD`) and holds the private ones.
    """

    cluster: ControlPlane
    registry: Registry
    published: Published
    private_registry: Registry
    node: Node | None = None
    release: Published | None = None
    """What was installed first when it was an earlier release's packages (HEAD's are in the
    registry too, as `published`, for an upgrade to them)."""

    @property
    def kube(self) -> Kube:
        """An admin client."""
        return self.cluster.admin

    def team_namespace(self, name: str) -> str:
        """A namespace for an application team, enforcing the `restricted` Pod Security level."""
        return team_namespace(self.kube, name)

    def diagnose(self) -> str:
        """The end of Crossplane's and the function's logs, for a failed wait."""
        core = self.cluster.component("crossplane")
        parts = [f"--- {core.log} ---\n{core.tail(15)}"]
        if self.node is None:
            fn = self.cluster.component("function-aim")
            parts.append(f"--- {fn.log} ---\n{fn.tail(15)}")
        else:
            for pod in self.kube.list("v1", "Pod", CROSSPLANE_NAMESPACE):
                log = self.node.pod_log(CROSSPLANE_NAMESPACE, pod["metadata"]["name"], RUNTIME)
                parts.append(f"--- pod {pod['metadata']['name']} ---\n" + _tail(log, 15))
        return "\n".join(parts)


def team_namespace(kube: Kube, name: str) -> str:
    """A namespace for an application team, enforcing the `restricted` Pod Security level."""
    kube.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": RESTRICTED}}
    )
    return name


def _tail(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[-lines:])


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
    """Install the AIM Configuration from the registry, as a platform team would.

    The namespaced flavour, or with `claims` the claims flavour.

    On a plane without a node the function runs on the host, and `simulate_package_runtime`
    stands in for Crossplane's Deployment runtime; on a plane with one (`function_endpoint`
    empty) Crossplane runs it.
    """
    kube = cluster.admin
    apply_packages(kube, published, claims=claims)
    if cluster.function_endpoint:
        simulate_package_runtime(
            kube,
            published.function_name,
            cluster.function_endpoint,
            cluster.pki.function_dir,
            CROSSPLANE_NAMESPACE,
        )
    wait_installed(kube, published, claims=claims)
    cluster.retire_rbac_manager()


def apply_packages(kube: Kube, published: Published, *, claims: bool = False) -> None:
    """The system namespace, `package/rbac` and the Configuration of one flavour."""
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


def wait_installed(kube: Kube, published: Published, *, claims: bool = False) -> None:
    """Wait for the packages to be Installed and Healthy, and the flavour's XRDs Established.

    The packages are the Configuration and its Function.
    """

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
        timeout_s=240,
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


E2E_RECHECKS: Final = ("--waiting-recheck=2", "--ready-recheck=5")
"""The tier's shortened rechecks (see the module docstring)."""

RUNTIME: Final = "package-runtime"
"""The container Crossplane's Deployment runtime runs a Function package's image in."""
FUNCTION_LABEL: Final = "pkg.crossplane.io/function"
"""What Crossplane labels each pod of a Function's Deployment with: the Function's name."""
FUNCTION_NODE_CONTROLLERS: Final = ("deployment", "replicaset", "endpointslice")
"""What a plane needs besides `CONTROLLERS` to run the Function's Deployment on a node (the
volume binder and node lifecycle stay off: the simulated provisioner and GPU nodes write what
they would)."""


def runtime_config(
    args: Sequence[str], node: str | None = NODE_NAME, replicas: int = 1
) -> dict[str, Any]:
    """The default DeploymentRuntimeConfig, which every package's runtime uses.

    The Function's pod gets the tier's flags, and names `node` (for a node without a scheduler).
    More than one replica prefers nodes apart (`replica_spread`), as install.md advises.
    """
    container = {"name": RUNTIME, "args": list(args)}
    pod: dict[str, Any] = {"containers": [container]}
    if node:
        pod["nodeName"] = node
    if replicas > 1:
        pod["affinity"] = replica_spread()
    return {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "DeploymentRuntimeConfig",
        "metadata": {"name": "default"},
        "spec": {
            "deploymentTemplate": {
                "spec": {
                    "replicas": replicas,
                    "selector": {},
                    "template": {"spec": pod},
                }
            }
        },
    }


def replica_spread() -> dict[str, Any]:
    """The function's replicas on different nodes where there are several, else together.

    Preferred, not required: on a one-node cluster (or while a node drains) both replicas still
    run. The tier's plane runs one Function, so any Function's pod counts as a replica; a shared
    cluster matches its own Function's name instead (install.md).
    """
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {
                            "matchExpressions": [
                                {"key": FUNCTION_LABEL, "operator": "Exists"},
                            ]
                        },
                    },
                }
            ]
        }
    }


@contextlib.contextmanager
def start_platform(  # noqa: PLR0913 - the tier's knobs, each a keyword
    tools: Tools,
    crds: Path,
    runtime_image: Image | None,
    root: Path,
    *,
    claims: bool = False,
    rechecks: Sequence[str] = E2E_RECHECKS,
    node: bool = False,
    function_module: str = FUNCTION_MODULE,
    core_args: Sequence[str] = (),
    release: Release | None = None,
    replicas: int = 1,
) -> Iterator[Platform]:
    """A control plane with its registries and one flavour of the AIM packages installed.

    With `node`, Crossplane runs the Function as it does on a cluster: its package's runtime
    image, pulled from the registry, in a Deployment on a real node (which runs nothing else:
    no scheduler places the Jobs' pods, whose kubelet is simulated); without, the function runs
    on the host (with no runtime image the Function package carries none). `rechecks` replaces
    the tier's shortened ones (`()` keeps the defaults); `function_module` is what runs as the
    host's function (a benchmark's stand-in, say), with `core_args` for Crossplane core. (A
    cluster that runs everything the AIM objects compose is `tests.e2e.target.own_cluster`.)
    With `release`, that release's packages, built from its commit, are installed instead of
    HEAD's, which are pushed beside them for an upgrade. `replicas` is how many pods run the
    Function on the node.
    """
    prefix = "claims: " if claims else ""
    if os.environ.get("AIM_E2E_CORE") == "oldest":
        # To compare convergence with the oldest core the packages claim (docs/e2e.md).
        tools = tools.with_oldest_core()
    (root / "registry").mkdir(parents=True)
    (root / "private-registry").mkdir()
    # A function in a pod reaches the registries at the node's address, not this host's loopback.
    listen = "0.0.0.0" if node else "127.0.0.1"  # noqa: S104 - a test registry, for the node
    with (
        start_registry(tools, root / "registry", auth=False, listen=listen) as registry,
        start_registry(tools, root / "private-registry", auth=True, listen=listen) as private,
        contextlib.ExitStack() as stack,
    ):
        t0 = time.monotonic()
        cp = stack.enter_context(
            start_control_plane(
                tools,
                root / "cluster",
                function_args=() if node else _function_args(registry, private, rechecks),
                extra_controllers=FUNCTION_NODE_CONTROLLERS if node else (),
                deployment_runtime=node,
                function_module=function_module,
                core_args=core_args,
            )
        )
        the_node = None
        if node:
            the_node = stack.enter_context(
                start_node(tools, cp, root / "node", registries=[registry.host], scheduler=False)
            )
            ip = the_node.ip
            args = _function_args(registry, private, rechecks, address=ip, oras="oras")
            # --debug as the host function runs
            cp.admin.apply(runtime_config([*args, "--debug"], replicas=replicas))
        TIMES[f"{prefix}control plane start"] = time.monotonic() - t0
        if not claims:
            TIMES.update({f"  of which {k}": v for k, v in cp.startup_s.items()})
        t1 = time.monotonic()
        install_third_party_crds(cp.admin, crds)
        repository = f"{registry.host}/aim-crossplane"
        published = publish(
            tools,
            repository,
            out=root / "packages",
            runtime_image_tarball=runtime_image.tarball if runtime_image else None,
        )
        first = None if release is None else publish_release(release, repository, root / "release")
        install(cp, first or published, claims=claims)
        TIMES[f"{prefix}publish and install"] = time.monotonic() - t1
        yield Platform(cp, registry, published, private, the_node, first)


def _function_args(
    registry: Registry,
    private: Registry,
    rechecks: Sequence[str],
    *,
    address: str | None = None,
    oras: str | Path | None = None,
) -> list[str]:
    """The function's flags for the tier's registries (at `address` when not loopback)."""
    public_host = registry.at(address) if address else registry.host
    private_host = private.at(address) if address else private.host
    mirrors = {PUBLIC_REGISTRY: public_host, PRIVATE_REGISTRY: private_host}
    return function_args(mirrors, rechecks, oras=oras or registry.oras)


def function_args(
    mirrors: Mapping[str, str], rechecks: Sequence[str], *, oras: str | Path
) -> list[str]:
    """The function's flags for the tier's registries, its oras and its rechecks.

    `mirrors` maps a registry's name to a plain-HTTP registry that serves its images; `oras` is
    the binary.
    """
    insecure = [f"--insecure-registry={host}" for host in mirrors.values()]
    mirrored = [f"--registry-mirror={name}={host}" for name, host in mirrors.items()]
    return [
        f"--oras={oras}",
        f"--system-namespace={SYSTEM_NAMESPACE}",
        *insecure,
        *mirrored,
        *rechecks,
    ]


BASE_IMAGE: Final = "amdenterpriseai/aim-base:0.9"
SOURCE: Final = {
    "modelId": "meta-llama/Llama-3.1-8B-Instruct",
    "sourceUri": "hf://meta-llama/Llama-3.1-8B-Instruct",
    "size": "16Gi",
}


def catalog_entry(
    model_kind: str, name: str, namespace: str | None, image: str = BASE_IMAGE
) -> list[dict[str, Any]]:
    """A platform team's catalog entry: a model for an image, and a template for it.

    The template's model sources are given inline, so it needs no discovery Job. The base image
    carries no AIM labels, so the team turns the model's discovery off, as for any image without
    them. The scenarios and the scale benchmark share it.
    """
    template_kind = "AIMServiceTemplate" if namespace else "AIMClusterServiceTemplate"
    return [
        aim(model_kind, name, namespace, {"image": image, "discovery": {"enabled": False}}),
        aim(
            template_kind,
            f"{name}-mi300x",
            namespace,
            {
                "modelName": name,
                "type": "optimized",
                "modelSources": [SOURCE],
                "hardware": {"gpu": {"requests": 1, "models": ["MI300X"]}},
            },
        ),
    ]
