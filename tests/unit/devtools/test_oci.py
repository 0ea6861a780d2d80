"""devtools/cluster/oci.py: the archives the end-to-end node imports are what containerd reads."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

from devtools.cluster.oci import File, Image, write_archive


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


def test_a_base_root_filesystem_is_layered_under_the_files(tmp_path: Path) -> None:
    """The test AIM image is a Debian tree plus `aim`: the tree's files and links go in owned by
    root at time 0 (reproducible whoever unpacked it), and a given file replaces the tree's."""
    base = tmp_path / "rootfs"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "dash").write_bytes(b"dash")
    (base / "bin" / "sh").symlink_to("dash")
    (base / "etc").mkdir()
    (base / "etc" / "motd").write_text("from the tree")
    image = Image("aim.local/x:1", {"/etc/motd": File(b"given")}, base=base)
    write_archive(image, tmp_path / "a.tar")
    files = members(tmp_path / "a.tar")
    manifest = next(
        json.loads(b) for n, b in files.items() if b"schemaVersion" in b and b"layers" in b
    )
    layer = files[f"blobs/sha256/{manifest['layers'][0]['digest'].split(':')[1]}"]
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        entries = {m.name: m for m in tar.getmembers()}
        motd = [tar.extractfile(m).read() for m in tar.getmembers() if m.name == "etc/motd"]  # type: ignore[union-attr]
    assert entries["bin/sh"].issym()
    assert entries["bin/sh"].linkname == "dash"
    assert {(entries[n].uid, entries[n].mtime) for n in ("bin", "bin/dash", "bin/sh")} == {(0, 0)}
    assert motd == [b"given"]
