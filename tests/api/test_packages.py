"""`crossplane xpkg build` packages the API: every XRD and Composition, and the function."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import yaml

from devtools.packages import build_configuration, build_function
from devtools.render import Tools
from function.api.definitions import DEFINITIONS


def package_objects(xpkg: Path) -> list[dict[str, Any]]:
    """The objects of the package's base layer (`package.yaml`), read as Crossplane reads them."""
    with tarfile.open(xpkg) as image:
        manifest = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        [layer] = manifest[0]["Layers"]
        with tarfile.open(fileobj=image.extractfile(layer), mode="r:gz") as base:
            text = base.extractfile("package.yaml").read().decode()  # type: ignore[union-attr]
    return [d for d in yaml.safe_load_all(text) if d]


def test_configuration_package_holds_every_xrd_and_composition(
    tools: Tools, tmp_path: Path
) -> None:
    objects = package_objects(build_configuration(tools, tmp_path))

    meta = objects[0]
    assert meta["kind"] == "Configuration"
    [dependency] = meta["spec"]["dependsOn"]
    assert dependency["kind"] == "Function"
    assert dependency["package"].endswith("/function-aim")

    xrds = {
        o["spec"]["names"]["kind"] for o in objects if o["kind"] == "CompositeResourceDefinition"
    }
    compositions = {
        o["spec"]["compositeTypeRef"]["kind"] for o in objects if o["kind"] == "Composition"
    }
    kinds = {d.kind.value for d in DEFINITIONS}
    assert len(kinds) == 9
    assert xrds == kinds
    assert compositions == kinds


def test_function_package_metadata_builds(tools: Tools, tmp_path: Path) -> None:
    [meta] = package_objects(build_function(tools, tmp_path))
    assert meta["kind"] == "Function"
    assert meta["metadata"]["name"] == "function-aim"
