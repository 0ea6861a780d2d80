"""The packages as Crossplane installed them from the registry: the Function package carries the
runtime image a Deployment runtime would start (this tier runs the function with the External
runtime, as no node can run containers here; tests/image runs the same image under runc)."""

from __future__ import annotations

import json
import subprocess

from devtools.image import Image
from devtools.kube import condition
from devtools.render import Tools
from tests.e2e.platform import Platform


def test_the_installed_function_package_carries_the_runtime_image(
    platform: Platform, tools: Tools, runtime_image: Image
) -> None:
    """The Function installed from the registry carries the runtime image."""
    kube = platform.cluster.admin
    revisions = kube.list(
        "pkg.crossplane.io/v1",
        "FunctionRevision",
        labels={"pkg.crossplane.io/package": platform.published.function_name},
    )
    [active] = [r for r in revisions if r["spec"].get("desiredState") == "Active"]
    assert active["spec"]["image"] == platform.published.function
    for kind in ("RevisionHealthy", "RuntimeHealthy"):
        assert (condition(active, kind) or {}).get("status") == "True", json.dumps(active["status"])
    # What Crossplane pulled: the image's config, entrypoint and layers, plus the metadata layer.
    config = json.loads(
        subprocess.run(
            [str(tools.oras), "manifest", "fetch-config", "--plain-http", active["spec"]["image"]],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    image = runtime_image.config
    assert config["config"]["Entrypoint"] == image["config"]["Entrypoint"]
    assert config["config"]["User"] == image["config"]["User"]
    assert config["rootfs"]["diff_ids"][:-1] == image["rootfs"]["diff_ids"]
