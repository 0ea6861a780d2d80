"""scripts/publish: both packages pushed to a registry the user names, ready to install."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from devtools.image import Image
from devtools.registry import Registry
from devtools.render import ROOT, Tools


def oras(tools: Tools, *args: str) -> str:
    proc = subprocess.run(
        [str(tools.oras), *args, "--plain-http"], capture_output=True, text=True, check=True
    )
    return proc.stdout


def test_publish_pushes_both_packages_to_the_named_registry(
    tools: Tools, registry: Registry, runtime_image: Image, tmp_path: Path
) -> None:
    """publish pushes the Function and the Configurations to the registry it is given."""
    target = f"{registry.host}/acme/aim"
    proc = subprocess.run(
        [
            str(ROOT / "scripts" / "publish"),
            target,
            "--version",
            "v0.2.0",
            "--out",
            str(tmp_path),
            "--runtime-image-tarball",
            str(runtime_image.tarball),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
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


def test_publish_without_a_registry_prints_usage() -> None:
    """publish without a registry prints its usage instead of guessing one."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "publish")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2  # argparse's usage error
    assert "usage: scripts/publish" in proc.stderr
