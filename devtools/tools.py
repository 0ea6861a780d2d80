"""What every devtool shares: the repository root, the Go-built tools, ports and subprocesses.

The render harness, the generators, the packagers and the end-to-end cluster all stand on this;
it imports nothing of devtools itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import socket
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

ROOT: Final = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Tools:
    """The Go-built tools, and the Crossplane source tree they were built from.

    The crossplane CLI and core (the render engine), the oldest core the packages claim,
    apicheck and oras; for the end-to-end control plane etcd, kube-apiserver and
    kube-controller-manager, with core's CRDs and Helm chart read from its module, and its node's
    kube-scheduler, kubelet, kube-proxy, pause program and AIM stand-in, KServe's manager
    with its module (`kserve_src`: configuration, CRDs, webhooks), KEDA's operator and
    metrics adapter, and the KEDA HTTP add-on's interceptor, scaler and operator; and `crds`,
    KServe's and Gateway API's CRDs (`kserve/`, `gateway-api/`) from theirs, and
    `autoscaling_crds`, KEDA's CRDs, the OpenTelemetryCollector CRD (KServe's KEDA class makes a
    ScaledObject and a collector where they exist) and the add-on's HTTPScaledObject CRD
    (`keda-http/`). The
    `render` set has only the CLI, core and oras; the other paths do not exist there.
    """

    crossplane: Path
    core: Path
    oldest_core: Path
    apicheck: Path
    oras: Path
    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kubelet: Path
    kube_proxy: Path
    pause: Path
    aimstub: Path
    kserve_manager: Path
    keda_operator: Path
    keda_adapter: Path
    keda_http_interceptor: Path
    keda_http_scaler: Path
    keda_http_operator: Path
    traefik: Path
    crossplane_src: Path
    oldest_crossplane_src: Path
    kserve_src: Path
    crds: Path
    autoscaling_crds: Path

    def with_oldest_core(self) -> Tools:
        """The same tools with the oldest core the packages claim, and its source tree."""
        return dataclasses.replace(
            self, core=self.oldest_core, crossplane_src=self.oldest_crossplane_src
        )


class HarnessError(RuntimeError):
    """The harness could not build the tools or start the function."""


def run_script(
    script: str, *args: str, root: Path = ROOT, env: Mapping[str, str] | None = None
) -> str:
    """Run one of scripts/ (its progress goes to this process's stderr); its last line printed.

    That line is where each script says what it made. `root` is another tree's (a release's,
    devtools/pkg/release.py), whose own scripts run; `env` replaces the environment.
    """
    proc = subprocess.run(
        ["bash", str(root / "scripts" / script), *args],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
        env=None if env is None else dict(env),
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        where = "" if root == ROOT else f"{root}'s "
        msg = f"{where}scripts/{script} failed with exit code {proc.returncode}"
        raise HarnessError(msg)
    return lines[-1]


def git(*args: str, root: Path = ROOT) -> str:
    """`git -C root ARGS`'s output, or HarnessError with git's own words."""
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False, timeout=300
    )
    if proc.returncode != 0:
        msg = f"git {' '.join(args)}: {proc.stderr.strip()}"
        raise HarnessError(msg)
    return proc.stdout


def own_tool(bin_dir: Path, name: str) -> Path:
    """The build of devtools/`name` from this checkout's sources: `<name>-<sum>` in `bin_dir`.

    scripts/build-tools.sh keeps each build of our own Go programs under the sum of its sources
    (the same sum it computes), so checkouts with other sources, sharing the tools cache, do not
    swap the program under each other's tests. Only `<name>` when that build is missing.
    """
    src = ROOT / "devtools" / name
    files = [*sorted(src.glob("go.*")), *sorted(src.glob("*.go"))]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:16]
    built = bin_dir / f"{name}-{digest}"
    return built if built.exists() else bin_dir / name


def build_tools(toolset: Literal["render", "all"] = "all") -> Tools:
    """Build (or reuse) the Go-built tools; progress goes to this process's stderr."""
    bin_dir = Path(run_script("build-tools.sh", toolset))
    return Tools(
        crossplane=bin_dir / "crossplane",
        core=bin_dir / "crossplane-core",
        oldest_core=bin_dir / "crossplane-core-oldest",
        apicheck=own_tool(bin_dir, "apicheck"),
        oras=bin_dir / "oras",
        etcd=bin_dir / "etcd",
        kube_apiserver=bin_dir / "kube-apiserver",
        kube_controller_manager=bin_dir / "kube-controller-manager",
        kube_scheduler=bin_dir / "kube-scheduler",
        kubelet=bin_dir / "kubelet",
        kube_proxy=bin_dir / "kube-proxy",
        pause=own_tool(bin_dir, "pause"),
        aimstub=own_tool(bin_dir, "aimstub"),
        kserve_manager=bin_dir / "kserve-manager",
        keda_operator=bin_dir / "keda-operator",
        keda_adapter=bin_dir / "keda-adapter",
        keda_http_interceptor=bin_dir / "keda-http-interceptor",
        keda_http_scaler=bin_dir / "keda-http-scaler",
        keda_http_operator=bin_dir / "keda-http-operator",
        traefik=bin_dir / "traefik",
        crossplane_src=bin_dir.parent / "crossplane-src",
        oldest_crossplane_src=bin_dir.parent / "crossplane-src-oldest",
        kserve_src=bin_dir.parent / "kserve-src",
        crds=bin_dir.parent / "crds",
        autoscaling_crds=bin_dir.parent / "autoscaling-crds",
    )


def free_port() -> int:
    """A TCP port free on loopback right now (for the servers the harnesses start)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    """True when something accepts connections on the loopback port."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


def run_tool(cmd: Sequence[str | Path], what: str) -> str:
    """Run one of the tools to completion; its stdout, or HarnessError with its own words."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        msg = f"{what} failed: {(proc.stderr or proc.stdout).strip()}"
        raise HarnessError(msg)
    return proc.stdout


def uv() -> str:
    """The pinned uv scripts/bootstrap.sh installs (and installs first, when missing)."""
    return run_tool(["bash", ROOT / "scripts" / "bootstrap.sh"], "scripts/bootstrap.sh").split()[-1]
