"""scripts/publish: both packages pushed to a registry the user names, ready to install."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import yaml

from devtools.cluster.registry import Registry
from devtools.gen.version import project_version
from devtools.pkg.image import Image
from devtools.tools import ROOT, Tools


def oras(tools: Tools, *args: str) -> str:
    proc = subprocess.run(
        [str(tools.oras), *args, "--plain-http"], capture_output=True, text=True, check=True
    )
    return proc.stdout


def publish(*args: str, out: Path, image: Image) -> subprocess.CompletedProcess[str]:
    """`scripts/publish ARGS` with the test's runtime image, which must succeed."""
    proc = subprocess.run(
        [
            str(ROOT / "scripts" / "publish"),
            *args,
            "--out",
            str(out),
            "--runtime-image-tarball",
            str(image.tarball),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_publish_pushes_both_packages_to_the_named_registry(
    tools: Tools, registry: Registry, runtime_image: Image, tmp_path: Path
) -> None:
    """publish pushes the Function and the Configurations to the registry it is given."""
    target = f"{registry.host}/acme/aim"
    proc = publish(target, "--version", "v0.2.0", out=tmp_path, image=runtime_image)
    assert f"configuration: {target}/configuration-aim:v0.2.0" in proc.stdout
    assert "installed as Function acme-aim-function-aim" in proc.stdout
    # A Crossplane package: one layer annotated as the package's base layer; the Function's
    # runtime image's layer before it.
    assert f"{target}/configuration-aim-claims:v0.2.0" in proc.stdout
    for repo, layers in (
        ("configuration-aim", 1),
        ("configuration-aim-claims", 1),
        ("function-aim", 2),
    ):
        assert oras(tools, "repo", "tags", f"{target}/{repo}").split() == ["v0.2.0"]
        manifest = json.loads(oras(tools, "manifest", "fetch", f"{target}/{repo}:v0.2.0"))
        assert len(manifest["layers"]) == layers
        base = [
            layer
            for layer in manifest["layers"]
            if (layer.get("annotations") or {}).get("io.crossplane.xpkg") == "base"
        ]
        assert base == [manifest["layers"][-1]]


def test_packages_named_for_the_cluster_are_pushed_through_this_hosts_address(
    tools: Tools, registry: Registry, runtime_image: Image, tmp_path: Path
) -> None:
    """A kind cluster's registry has one address on this host and another on its nodes: the
    packages land at the first and are named, and depend on each other, by the second, which is
    what Crossplane in the cluster resolves."""
    cluster = "registry.cluster.test:5000/acme"
    via = f"{registry.host}/via"
    proc = publish(cluster, "--push-via", via, out=tmp_path, image=runtime_image)
    # No --version: HEAD's own, the image's tag too.
    head = project_version()
    assert f"configuration: {cluster}/configuration-aim:{head}" in proc.stdout
    manifest = json.loads(oras(tools, "manifest", "fetch", f"{via}/configuration-aim:{head}"))
    digest = manifest["layers"][-1]["digest"]
    fetch = [str(tools.oras), "blob", "fetch", "--plain-http", "--output", "-"]
    layer = subprocess.run(
        [*fetch, f"{via}/configuration-aim@{digest}"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        member = tar.extractfile("package.yaml")
        assert member is not None
        meta = next(yaml.safe_load_all(member.read()))
    assert meta["spec"]["dependsOn"][0]["package"] == f"{cluster}/function-aim"


def test_publish_without_a_registry_prints_usage() -> None:
    """publish without a registry prints its usage instead of guessing one."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "publish")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2  # argparse's usage error
    assert "usage: scripts/publish" in proc.stderr
