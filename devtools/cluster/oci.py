"""Small OCI images written directly: one layer of given files, as an OCI archive.

The end-to-end tier's node needs images nobody publishes to a registry it can reach (the pause
program, test stand-ins). An image is a few JSON documents and a tar, so they are written here
instead of through a builder: reproducible (fixed times and owners), no daemon, no Docker.
`ctr images import` reads the archive and names the image after its index annotation.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

LAYER: Final = "application/vnd.oci.image.layer.v1.tar"
CONFIG: Final = "application/vnd.oci.image.config.v1+json"
MANIFEST: Final = "application/vnd.oci.image.manifest.v1+json"


@dataclass(frozen=True)
class File:
    """A file of the image's one layer."""

    content: bytes
    mode: int = 0o644


@dataclass(frozen=True)
class Image:
    """What to write: a name (`registry/repository:tag`), files by absolute path, a config.

    `base`, when given, is a root filesystem (a directory) the files are added to.
    """

    name: str
    files: Mapping[str, File]
    entrypoint: Sequence[str] = ()
    user: str = "65532:65532"
    env: Sequence[str] = ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",)
    labels: Mapping[str, str] = field(default_factory=dict)
    base: Path | None = None
    working_dir: str = ""
    """Where a relative entrypoint is found (`./entrypoint.py` in AMD's AIM images)."""


def _layer(files: Mapping[str, File], base: Path | None) -> bytes:
    """A tar of `base` and `files` with their parent directories, owned by root, at time 0."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if base:
            _add_tree(tar, base, skip={path.lstrip("/") for path in files})
        directories = sorted(
            {str(Path(path).parents[i]) for path in files for i in range(len(Path(path).parts) - 1)}
            - {"/"}
        )
        for directory in (d for d in directories if not (base and (base / d[1:]).is_dir())):
            info = tarfile.TarInfo(directory.lstrip("/"))
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for path in sorted(files):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode = len(files[path].content), files[path].mode
            tar.addfile(info, io.BytesIO(files[path].content))
    return out.getvalue()


def _add_tree(tar: tarfile.TarFile, base: Path, skip: set[str]) -> None:
    """Every directory, file and link under `base`, but those in `skip`, owned by root."""
    for entry in sorted(base.rglob("*")):
        name = str(entry.relative_to(base))
        if name in skip:
            continue
        info = tar.gettarinfo(entry, name)
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        if info.isreg():
            with entry.open("rb") as content:
                tar.addfile(info, content)
        elif info.isdir() or info.issym() or info.islnk():
            tar.addfile(info)


def _blob(tar: tarfile.TarFile, media_type: str, data: bytes) -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
    return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}


def write_archive(image: Image, path: Path) -> str:
    """Write `image` as an OCI archive at `path`; return its manifest digest."""
    layer = _layer(image.files, image.base)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "User": image.user,
            "Env": list(image.env),
            "Entrypoint": list(image.entrypoint),
            "Labels": dict(image.labels),
            **({"WorkingDir": image.working_dir} if image.working_dir else {}),
        },
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"]},
    }
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": _blob(tar, CONFIG, json.dumps(config, sort_keys=True).encode()),
            "layers": [_blob(tar, LAYER, layer)],
        }
        descriptor = _blob(tar, MANIFEST, json.dumps(manifest, sort_keys=True).encode())
        descriptor["annotations"] = {
            "io.containerd.image.name": image.name,
            "org.opencontainers.image.ref.name": image.name.rsplit(":", 1)[1],
        }
        for name, data in (
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps({"schemaVersion": 2, "manifests": [descriptor]}).encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(descriptor["digest"])
