"""`crossplane xpkg build` packages the API: every XRD and Composition, and the function."""

from __future__ import annotations

import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from devtools.pkg.image import Image
from devtools.pkg.packages import (
    CLAIMS,
    build_configuration,
    build_function,
    function_name,
    repository_path,
)
from devtools.tools import Tools
from function.api.definitions import DEFINITIONS
from tests.cases import Case, table


def package_config(xpkg: Path) -> dict[str, Any]:
    """The package image's config (docker-archive layout, as `crossplane xpkg build` writes it)."""
    with tarfile.open(xpkg) as image:
        [manifest] = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        config = json.load(image.extractfile(manifest["Config"]))  # type: ignore[arg-type]
    return dict(config)


def package_objects(xpkg: Path) -> list[dict[str, Any]]:
    """The objects of the package's base layer (`package.yaml`), read as Crossplane reads them:
    the layer the config's `io.crossplane.xpkg:<digest>: base` label names."""
    labels = package_config(xpkg)["config"].get("Labels") or {}
    [digest] = [k.split(":", 1)[1] for k, v in labels.items() if v == "base"]
    with tarfile.open(xpkg) as image:
        [manifest] = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        [layer] = [name for name in manifest["Layers"] if digest.split(":")[1] in name]
        with tarfile.open(fileobj=image.extractfile(layer), mode="r:gz") as base:
            text = base.extractfile("package.yaml").read().decode()  # type: ignore[union-attr]
    return [d for d in yaml.safe_load_all(text) if d]


def function_refs(objects: list[dict[str, Any]]) -> set[str]:
    """The functions the packaged Compositions call."""
    return {
        step["functionRef"]["name"]
        for o in objects
        if o["kind"] == "Composition"
        for step in o["spec"]["pipeline"]
    }


def test_configuration_package_holds_every_xrd_and_composition(
    tools: Tools, tmp_path: Path
) -> None:
    """The Configuration package carries every XRD and Composition."""
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
    assert len(kinds) == 10
    assert xrds == kinds
    assert compositions == kinds
    # Crossplane installs the dependency as a Function named after its repository path
    # (xpkg.ToDNSLabel of "aim-crossplane/function-aim"); the Compositions must call that name.
    assert dependency["package"] == "xpkg.crossplane.io/aim-crossplane/function-aim"
    refs = function_refs(objects)
    assert refs == {"aim-crossplane-function-aim"}


def test_configuration_for_another_registry_depends_on_its_function(
    tools: Tools, tmp_path: Path
) -> None:
    """What scripts/publish builds for a registry the user names."""
    xpkg = build_configuration(
        tools,
        tmp_path,
        function_package="registry.example.com:5000/acme/aim/function-aim",
        function_version=">=v1.2.0",
    )
    objects = package_objects(xpkg)
    [dependency] = objects[0]["spec"]["dependsOn"]
    assert dependency["package"] == "registry.example.com:5000/acme/aim/function-aim"
    assert dependency["version"] == ">=v1.2.0"
    refs = function_refs(objects)
    assert refs == {"acme-aim-function-aim"}


def test_claims_configuration_offers_every_namespaced_kind_as_a_claim(
    tools: Tools, tmp_path: Path
) -> None:
    """The claims flavour: v1 LegacyCluster XRDs; the six namespaced kinds are claims of
    `X`-prefixed composites, the three cluster kinds keep their names and have no claims."""
    objects = package_objects(build_configuration(tools, tmp_path, flavour=CLAIMS))
    assert objects[0]["metadata"]["name"] == "configuration-aim-claims"
    assert tmp_path.joinpath("configuration-aim-claims.xpkg").is_file()
    xrds = [o for o in objects if o["kind"] == "CompositeResourceDefinition"]
    assert {x["apiVersion"] for x in xrds} == {"apiextensions.crossplane.io/v1"}
    assert {x["spec"]["scope"] for x in xrds} == {"LegacyCluster"}
    claims = {
        x["spec"]["claimNames"]["kind"]: x["spec"]["names"]["kind"]
        for x in xrds
        if "claimNames" in x["spec"]
    }
    namespaced = {d.kind.value for d in DEFINITIONS if d.scope == "Namespaced"}
    assert claims == {kind: f"X{kind}" for kind in namespaced}
    unclaimed = {x["spec"]["names"]["kind"] for x in xrds if "claimNames" not in x["spec"]}
    assert unclaimed == {d.kind.value for d in DEFINITIONS} - namespaced
    compositions = {
        o["spec"]["compositeTypeRef"]["kind"] for o in objects if o["kind"] == "Composition"
    }
    assert compositions == set(claims.values()) | unclaimed
    assert function_refs(objects) == {"aim-crossplane-function-aim"}


@dataclass(frozen=True)
class DependencyCase(Case):
    reference: str
    repository: str
    name: str


DEPENDENCY_CASES = [
    DependencyCase(
        "published",
        "the registry host is dropped, the path kept",
        "xpkg.crossplane.io/aim-crossplane/function-aim",
        "aim-crossplane/function-aim",
        "aim-crossplane-function-aim",
    ),
    DependencyCase(
        "loopback",
        "a port and a tag are dropped with the host",
        "127.0.0.1:5000/function-aim:v0.1.0",
        "function-aim",
        "function-aim",
    ),
    DependencyCase(
        "digest-and-case",
        "a digest is dropped; upper case and '_' are dropped, not lowered",
        "localhost/Team_A/function-aim@sha256:abc",
        "Team_A/function-aim",
        "eam-function-aim",
    ),
    DependencyCase(
        "docker-hub",
        "a host-less reference keeps its whole path",
        "acme/function-aim",
        "acme/function-aim",
        "acme-function-aim",
    ),
]


@table(DEPENDENCY_CASES)
def test_function_name_is_the_one_crossplane_gives_a_dependency(case: DependencyCase) -> None:
    """Registry, tag and digest dropped; then Crossplane's DNS label: lowercase letters and
    digits kept, separators to '-', anything else (uppercase, '_') dropped."""
    assert repository_path(case.reference) == case.repository, case.reason
    assert function_name(case.reference) == case.name, case.reason


def test_function_package_metadata_builds(tools: Tools, tmp_path: Path) -> None:
    """The Function package metadata builds into a package."""
    [meta] = package_objects(build_function(tools, tmp_path))
    assert meta["kind"] == "Function"
    assert meta["metadata"]["name"] == "function-aim"


def test_function_package_embeds_the_runtime_image(
    tools: Tools, runtime_image: Image, tmp_path: Path
) -> None:
    """The package Crossplane pulls is the image it runs: the image's layer, user and entrypoint,
    plus the metadata layer."""
    xpkg = build_function(tools, tmp_path, runtime_image_tarball=runtime_image.tarball)
    [meta] = package_objects(xpkg)
    assert meta["kind"] == "Function"
    config = package_config(xpkg)
    image = runtime_image.config
    assert config["config"]["Entrypoint"] == image["config"]["Entrypoint"]
    assert config["config"]["User"] == image["config"]["User"]
    assert config["rootfs"]["diff_ids"][:-1] == image["rootfs"]["diff_ids"]
    assert len(config["rootfs"]["diff_ids"]) == len(image["rootfs"]["diff_ids"]) + 1
