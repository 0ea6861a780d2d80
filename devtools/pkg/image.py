"""The function's runtime image: built by scripts/build-image, read from its layout, run by runc.

No Docker engine is needed anywhere: the image is an OCI layout plus a docker-archive, its
manifest and config are plain JSON files, and `running` starts it as a container runtime would,
from the bundle `umoci unpack` makes, with runc. The container shares the host's network so the
tests dial it on loopback; everything else (user, root filesystem, mounts, no new privileges) is
the image's own.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devtools.tools import ROOT, HarnessError, run_script, run_tool, uv

STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Image:
    """A built image: its OCI layout and tag, and the docker-archive of the same image."""

    layout: Path
    tag: str
    tarball: Path

    def _blob(self, digest: str) -> dict[str, Any]:
        algorithm, _, hexdigest = digest.partition(":")
        blob = json.loads((self.layout / "blobs" / algorithm / hexdigest).read_text())
        if not isinstance(blob, dict):
            msg = f"{self.layout}: blob {digest} is not a JSON object"
            raise HarnessError(msg)
        return blob

    @property
    def digest(self) -> str:
        """The manifest's digest: what a registry would serve the image as."""
        index = json.loads((self.layout / "index.json").read_text())
        for manifest in index["manifests"]:
            if manifest.get("annotations", {}).get("org.opencontainers.image.ref.name") == self.tag:
                return str(manifest["digest"])
        msg = f"{self.layout} has no image tagged {self.tag}"
        raise HarnessError(msg)

    @property
    def manifest(self) -> dict[str, Any]:
        """The OCI image manifest."""
        return self._blob(self.digest)

    @property
    def config(self) -> dict[str, Any]:
        """The OCI image config (`config` holds User, Entrypoint, Env, ...)."""
        return self._blob(self.manifest["config"]["digest"])


def build_image(out: Path) -> Image:
    """Run scripts/build-image into `out`; progress goes to this process's stderr."""
    tarball = Path(run_script("build-image", str(out)))
    index = json.loads((out / "oci" / "index.json").read_text())
    [manifest] = index["manifests"]
    return Image(out / "oci", manifest["annotations"]["org.opencontainers.image.ref.name"], tarball)


@dataclass(frozen=True)
class Bundle:
    """An unpacked image (config.json and rootfs/) that runc can run."""

    path: Path
    image: Image

    @property
    def rootfs(self) -> Path:
        """The image's files as the container sees them."""
        return self.path / "rootfs"


def unpack(image: Image, path: Path) -> Bundle:
    """`umoci unpack` the image into a runtime bundle at `path`."""
    run_tool(
        ["umoci", "unpack", "--image", f"{image.layout}:{image.tag}", path],
        f"umoci unpack {image.tag}",
    )
    return Bundle(path, image)


def from_archive(archive: Path, layout: Path) -> Image:
    """The image in an OCI archive (devtools/cluster/oci.py writes them), laid out at `layout`."""
    layout.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(layout, filter="data")
    index = json.loads((layout / "index.json").read_text())
    [manifest] = index["manifests"]
    return Image(layout, manifest["annotations"]["org.opencontainers.image.ref.name"], archive)


@dataclass(frozen=True)
class Pod:
    """What a pod's spec adds to an image's process.

    Its user, its writable volumes (host directory or file, path in the container), and whether
    it has a network of its own.
    """

    user: tuple[int, int] | None = None
    volumes: Sequence[tuple[Path, str]] = ()
    own_network: bool = False


def _configure(  # noqa: PLR0913 - a container's process is made of all of these
    bundle: Bundle,
    args: Sequence[str],
    env: Mapping[str, str],
    mounts: Sequence[tuple[Path, str]],
    *,
    entrypoint: Sequence[str] | None,
    pod: Pod = Pod(),
) -> None:
    spec_path = bundle.path / "config.json"
    spec = json.loads(spec_path.read_text())
    process = spec["process"]
    image = bundle.image.config["config"]
    process["terminal"] = False
    # From the image's config each time, so one bundle can run several commands in turn.
    if entrypoint is None:
        entrypoint = [*image.get("Entrypoint", []), *(image.get("Cmd") or [])]
    process["args"] = [*entrypoint, *args]
    # A container's variable replaces the image's of the same name, as the kubelet's do (a
    # repeated name would leave the choice to each program's reading of its environment).
    merged = dict(e.partition("=")[::2] for e in image.get("Env", []))
    process["env"] = [f"{k}={v}" for k, v in {**merged, **env}.items()]
    if pod.user is not None:
        process["user"] = {"uid": pod.user[0], "gid": pod.user[1]}
    spec["mounts"] = [
        *(m for m in spec["mounts"] if m["type"] != "bind"),
        *(
            {"destination": dest, "type": "bind", "source": str(src), "options": ["rbind", "ro"]}
            for src, dest in mounts
        ),
        *(
            {"destination": dest, "type": "bind", "source": str(src), "options": ["rbind", "rw"]}
            for src, dest in pod.volumes
        ),
    ]
    if not pod.own_network:
        # The host's network, so the test reaches a server on loopback (a pod has its own).
        namespaces = spec["linux"]["namespaces"]
        spec["linux"]["namespaces"] = [n for n in namespaces if n["type"] != "network"]
    spec_path.write_text(json.dumps(spec))


def _runc(bundle: Bundle, *args: str) -> list[str]:
    return ["runc", "--root", str(bundle.path.parent / f"{bundle.path.name}.runc"), *args]


def run_once(
    bundle: Bundle,
    entrypoint: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    pod: Pod = Pod(),
    timeout_s: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run one command in the image to completion (runc run).

    As the image's user, unless `pod` names another.
    """
    _configure(bundle, [], env or {}, [], entrypoint=entrypoint, pod=pod)
    name = f"{bundle.path.name}-once"
    try:
        return subprocess.run(
            _runc(bundle, "run", "--bundle", str(bundle.path), name),
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout_s,
        )
    finally:
        subprocess.run(_runc(bundle, "delete", "--force", name), capture_output=True, check=False)


@dataclass(frozen=True)
class Container:
    """A running container: its name and the file its stdout and stderr go to."""

    name: str
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        """The end of what the container printed (for failure messages)."""
        return self.log.read_text(errors="replace")[-chars:]


@contextlib.contextmanager
def running(  # noqa: PLR0913 - what a container is started with
    bundle: Bundle,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    mounts: Sequence[tuple[Path, str]] = (),
    entrypoint: Sequence[str] | None = None,
    pod: Pod = Pod(),
) -> Iterator[Container]:
    """Start `entrypoint` (else the image's) with `args` under runc; kill and delete it on exit.

    `mounts` are read-only; `pod` adds what a pod's spec would (user, writable volumes).
    """
    _configure(bundle, args, env or {}, mounts, entrypoint=entrypoint, pod=pod)
    container = Container(bundle.path.name, bundle.path.parent / f"{bundle.path.name}.log")
    with container.log.open("w") as log:
        proc = subprocess.run(
            _runc(bundle, "run", "--detach", "--bundle", str(bundle.path), container.name),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            check=False,
        )
    if proc.returncode != 0:
        msg = f"runc could not start {bundle.image.tag}:\n{container.log_tail()}"
        raise HarnessError(msg)
    try:
        yield container
    finally:
        subprocess.run(
            _runc(bundle, "kill", container.name, "TERM"), capture_output=True, check=False
        )
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline and _state(bundle, container.name) == "running":
            time.sleep(0.1)
        subprocess.run(
            _runc(bundle, "delete", "--force", container.name), capture_output=True, check=False
        )
        shutil.rmtree(bundle.path.parent / f"{bundle.path.name}.runc", ignore_errors=True)


def alive(bundle: Bundle, container: Container) -> bool:
    """Whether the container's process still runs (a server that exited at start does not)."""
    return _state(bundle, container.name) == "running"


def _state(bundle: Bundle, name: str) -> str | None:
    proc = subprocess.run(_runc(bundle, "state", name), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    return str(json.loads(proc.stdout).get("status"))


def normalize_name(name: str) -> str:
    """A distribution's name as packaging compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_runtime_dependencies() -> set[tuple[str, str]]:
    """(normalized name, version) of every runtime dependency uv.lock pins, as uv exports them."""
    exported = run_tool(
        [uv(), "--project", ROOT, "export", "--frozen", "--no-dev", "--no-emit-project",
         "--no-hashes", "--quiet"],
        "uv export",
    )  # fmt: skip
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", exported, re.MULTILINE)
    return {(normalize_name(name), version) for name, version in pins}
