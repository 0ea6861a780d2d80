"""scripts/publish: both packages pushed to a registry the user names, ready to install."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from devtools.registry import Registry
from devtools.render import ROOT, Tools


def oras(tools: Tools, *args: str) -> str:
    proc = subprocess.run(
        [str(tools.oras), *args, "--plain-http"], capture_output=True, text=True, check=True
    )
    return proc.stdout


def test_publish_pushes_both_packages_to_the_named_registry(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    target = f"{registry.host}/acme/aim"
    proc = subprocess.run(
        [str(ROOT / "scripts" / "publish"), target, "--version", "v0.2.0", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"configuration: {target}/configuration-aim:v0.2.0" in proc.stdout
    assert "installed as Function acme-aim-function-aim" in proc.stdout
    for repo in ("configuration-aim", "function-aim"):
        assert oras(tools, "repo", "tags", f"{target}/{repo}").split() == ["v0.2.0"]
        # A Crossplane package: one layer, annotated as the package's base layer.
        manifest = json.loads(oras(tools, "manifest", "fetch", f"{target}/{repo}:v0.2.0"))
        [layer] = manifest["layers"]
        assert layer["annotations"]["io.crossplane.xpkg"] == "base"


def test_publish_without_a_registry_prints_usage() -> None:
    proc = subprocess.run(
        [str(ROOT / "scripts" / "publish")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2  # argparse's usage error
    assert "usage: scripts/publish" in proc.stderr
