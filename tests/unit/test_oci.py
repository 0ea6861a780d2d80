"""devtools/oci.py: the OCI archives the end-to-end node imports must be what containerd reads."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

from devtools.oci import File, Image, write_archive


def members(path: Path) -> dict[str, bytes]:
    """Every file of a tar, by name."""
    with tarfile.open(path) as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def test_an_archive_names_its_image_and_every_blob_matches_its_digest(tmp_path: Path) -> None:
    """containerd finds the image by the index's annotation and refuses a blob whose content does
    not hash to its name; the layer holds the files with their modes, under their directories."""
    image = Image(
        "aim.local/stub:1",
        {"/usr/local/bin/aim": File(b"#!/bin/sh\n", 0o755), "/etc/aim.json": File(b"{}")},
        entrypoint=["/usr/local/bin/aim"],
        labels={"com.amd.aim.model.canonicalName": "org/model"},
    )
    digest = write_archive(image, tmp_path / "a.tar")
    files = members(tmp_path / "a.tar")

    [descriptor] = json.loads(files["index.json"])["manifests"]
    assert descriptor["digest"] == digest
    assert descriptor["annotations"]["io.containerd.image.name"] == "aim.local/stub:1"
    for name, blob in files.items():
        if name.startswith("blobs/sha256/"):
            assert hashlib.sha256(blob).hexdigest() == name.rsplit("/", 1)[1]

    manifest = json.loads(files[f"blobs/sha256/{digest.split(':')[1]}"])
    config = json.loads(files[f"blobs/sha256/{manifest['config']['digest'].split(':')[1]}"])
    assert config["config"]["Entrypoint"] == ["/usr/local/bin/aim"]
    assert config["config"]["Labels"] == {"com.amd.aim.model.canonicalName": "org/model"}
    layer = files[f"blobs/sha256/{manifest['layers'][0]['digest'].split(':')[1]}"]
    assert config["rootfs"]["diff_ids"] == [f"sha256:{hashlib.sha256(layer).hexdigest()}"]
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        entries = {m.name: m for m in tar.getmembers()}
    assert entries["usr/local/bin/aim"].mode == 0o755
    assert entries["usr/local/bin"].isdir()
    assert entries["etc/aim.json"].mode == 0o644


def test_the_same_image_is_the_same_archive(tmp_path: Path) -> None:
    """Times and owners are fixed, so an unchanged image imports as the same digest."""
    image = Image("aim.local/pause:1", {"/pause": File(b"\x7fELF", 0o755)}, entrypoint=["/pause"])
    assert write_archive(image, tmp_path / "a.tar") == write_archive(image, tmp_path / "b.tar")
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()
