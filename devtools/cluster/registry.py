"""A real OCI registry on loopback for tests: Debian's docker-registry, filled with oras.

Each registry runs as its own process on a free port with storage in a directory the caller
owns; with `auth` it requires basic auth (htpasswd, bcrypt). Test images are what AIM images look
like to a registry client: an OCI image config carrying the labels, no layers (nothing pulls
them).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import bcrypt

from devtools.tools import HarnessError, Tools, free_port, port_open

USER = "aim-reader"
PASSWORD = "s3cret-registry-password"  # noqa: S105 - a throwaway credential for a test registry
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"


@dataclass(frozen=True)
class Registry:
    """A running registry: `host` is `127.0.0.1:<port>`; `auth` when it requires basic auth."""

    host: str
    oras: Path
    auth: bool

    def at(self, ip: str) -> str:
        """`host:port` at another of this host's addresses (the registry must listen there)."""
        return f"{ip}:{self.host.rpartition(':')[2]}"

    def push(
        self,
        repository: str,
        tag: str,
        labels: Mapping[str, str],
        *,
        entrypoint: tuple[str, ...] = ("aim-runtime",),
        workdir: Path,
    ) -> str:
        """Push a config-only image; return its manifest digest."""
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": list(entrypoint), "Labels": dict(labels)},
            "rootfs": {"type": "layers", "diff_ids": []},
        }
        path = workdir / f"{repository.replace('/', '_')}-{tag}.json"
        path.write_text(json.dumps(config))
        out = self._oras(
            "push",
            f"{self.host}/{repository}:{tag}",
            "--config",
            f"{path}:{CONFIG_TYPE}",
            "--format",
            "json",
            cwd=workdir,
        )
        return str(json.loads(out)["digest"])

    def push_archive(self, archive: Path, repository: str, tag: str) -> str:
        """Push an OCI archive of one image (`devtools.cluster.oci.write_archive`) as `repo:tag`.

        Returns the reference it has in this registry.
        """
        reference = f"{self.host}/{repository}:{tag}"
        self._oras("cp", "--from-oci-layout", f"{archive}:{tag}", reference, to_registry=True)
        return reference

    def push_index(self, repository: str, tag: str, children: list[tuple[str, str, str]]) -> str:
        """Push an image index over `(digest, os, architecture)` manifests already pushed."""
        manifests = []
        for digest, os_name, arch in children:
            raw = self._oras("manifest", "fetch", f"{self.host}/{repository}@{digest}")
            manifests.append(
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": digest,
                    "size": len(raw.encode()),
                    "platform": {"os": os_name, "architecture": arch},
                }
            )
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": manifests,
        }
        body = json.dumps(index)
        self._oras(
            "manifest",
            "push",
            f"{self.host}/{repository}:{tag}",
            "-",
            "--media-type",
            "application/vnd.oci.image.index.v1+json",
            stdin=body,
        )
        return "sha256:" + hashlib.sha256(body.encode()).hexdigest()

    def _oras(
        self, *args: str, cwd: Path | None = None, stdin: str = "", to_registry: bool = False
    ) -> str:
        # `oras cp` names its target's options `--to-*`: the source is a local layout.
        to = "--to-" if to_registry else "--"
        cmd = [
            str(self.oras),
            *args,
            f"{to}plain-http",
            f"{to}registry-config",
            "/nonexistent.json",
        ]
        if self.auth:
            cmd += [f"{to}username", USER, f"{to}password", PASSWORD]
        proc = subprocess.run(
            cmd, input=stdin, capture_output=True, text=True, check=False, cwd=cwd, timeout=60
        )
        if proc.returncode != 0:
            msg = f"oras {args[0]} {args[1] if len(args) > 1 else ''} failed: {proc.stderr}"
            raise HarnessError(msg)
        return proc.stdout


@contextlib.contextmanager
def start_registry(
    tools: Tools, root: Path, *, auth: bool, listen: str = "127.0.0.1"
) -> Iterator[Registry]:
    """Run a registry with its files under `root` until the context ends.

    It listens on loopback; with `listen="0.0.0.0"`, on every address as well, so pods on a node
    reach it at the node's IP (`Registry.at`) while this host still uses `127.0.0.1`.
    """
    binary = shutil.which("docker-registry")
    if binary is None:
        msg = "docker-registry is not installed; scripts/system-deps.sh installs it"
        raise HarnessError(msg)
    port = free_port()
    lines = [
        "version: 0.1",
        "log: {level: error, accesslog: {disabled: true}}",
        f"storage: {{filesystem: {{rootdirectory: {root / 'data'}}}}}",
        f"http: {{addr: {listen}:{port}}}",
    ]
    if auth:
        hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
        (root / "htpasswd").write_text(f"{USER}:{hashed}\n")
        lines.append(f"auth: {{htpasswd: {{realm: aim-tests, path: {root / 'htpasswd'}}}}}")
    (root / "config.yml").write_text("\n".join(lines) + "\n")
    log = (root / "registry.log").open("w")
    with subprocess.Popen(
        [binary, "serve", str(root / "config.yml")], stdout=log, stderr=log
    ) as proc:
        try:
            deadline = time.monotonic() + 20
            while not port_open(port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = (root / "registry.log").read_text()[-2000:]
                    msg = f"docker-registry did not start on port {port}: {tail}"
                    raise HarnessError(msg)
                time.sleep(0.05)
            yield Registry(f"127.0.0.1:{port}", tools.oras, auth)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            log.close()
