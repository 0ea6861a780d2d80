"""Build the Crossplane packages with the real `crossplane xpkg build`.

    python -m devtools.pkg.packages [OUT_DIR]
        [--runtime-image-tarball IMAGE.tar | --no-runtime-image]

OUT_DIR defaults to _output/. The Function package embeds the runtime image, built by
scripts/build-image into OUT_DIR/image unless a tarball is given; `--no-runtime-image` builds
the metadata-only package that suits the External runtime.

Each Configuration package is assembled from its crossplane.yaml plus generated XRDs and
Compositions (package/configuration with xrds/ and compositions/; the claims flavour,
package/configuration-claims with claims/xrds and claims/compositions), so what is packaged is
exactly what the tests validate, with one change: Crossplane names the Function it installs as a
dependency after the package's repository path (`xpkg.crossplane.io/aim-crossplane/function-aim`
becomes `aim-crossplane-function-aim`), so each Composition's functionRef is set to that name.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.pkg.image import build_image
from devtools.tools import ROOT, HarnessError, Tools, build_tools, run_tool


@dataclass(frozen=True)
class Flavour:
    """One Configuration package: its metadata and where its XRDs and Compositions are."""

    name: str  # the .xpkg file and repository name
    meta: Path
    definitions: Path  # holds xrds/ and compositions/


NAMESPACED: Final = Flavour("configuration-aim", ROOT / "package" / "configuration", ROOT)
CLAIMS: Final = Flavour(
    "configuration-aim-claims", ROOT / "package" / "configuration-claims", ROOT / "claims"
)
FLAVOURS: Final = (NAMESPACED, CLAIMS)
FUNCTION: Final = ROOT / "package" / "function"
DEFAULT_OUT: Final = ROOT / "_output"


def dependency(meta: dict[str, Any]) -> dict[str, Any]:
    """The Configuration's one dependency: the Function package."""
    [dep] = meta["spec"]["dependsOn"]
    return dict(dep)


def repository_path(reference: str) -> str:
    """The repository of a package reference without its registry, tag or digest."""
    name = reference.split("@", 1)[0]
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        name = rest
    return re.sub(r":[^/]*$", "", name)


def dns_label(text: str) -> str:
    """The DNS label Crossplane derives from a repository (crossplane-runtime's ToDNSLabel)."""
    out = []
    for i, ch in enumerate(text[:63]):
        if ch.isascii() and (ch.islower() or ch.isdigit()):
            out.append(ch)
        elif ch in "./:-" and i not in (0, 62, len(text) - 1):
            out.append("-")
    return "".join(out).strip("-")


def function_name(package: str) -> str:
    """The name of the Function Crossplane installs for a dependency on `package`."""
    return dns_label(repository_path(package))


def build_configuration(
    tools: Tools,
    out: Path,
    *,
    function_package: str | None = None,
    function_version: str | None = None,
    flavour: Flavour = NAMESPACED,
) -> Path:
    """Build a Configuration package (by default the namespaced flavour); return the .xpkg file.

    `function_package` and `function_version` replace the dependency's (for a registry of the
    caller's choosing); the Compositions call the Function by the name Crossplane will give it.
    """
    meta = yaml.safe_load((flavour.meta / "crossplane.yaml").read_text())
    dep = dependency(meta)
    dep["package"] = function_package or dep["package"]
    dep["version"] = function_version or dep["version"]
    meta["spec"]["dependsOn"] = [dep]
    name = function_name(dep["package"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "crossplane.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
        shutil.copytree(flavour.definitions / "xrds", root / "xrds")
        (root / "compositions").mkdir()
        for src in sorted((flavour.definitions / "compositions").glob("*.yaml")):
            composition = yaml.safe_load(src.read_text())
            for step in composition["spec"]["pipeline"]:
                step["functionRef"]["name"] = name
            (root / "compositions" / src.name).write_text(
                yaml.safe_dump(composition, sort_keys=False)
            )
        return _build(tools, root, out / f"{flavour.name}.xpkg")


def build_function(tools: Tools, out: Path, *, runtime_image_tarball: Path | None = None) -> Path:
    """Build the Function package: its metadata, plus the runtime image when one is given.

    With the image (a docker-archive, as scripts/build-image or `docker save` writes it)
    embedded, Crossplane's default Deployment runtime can run the package; without it the
    package serves validation and the External package runtime only.
    """
    extra = (
        []
        if runtime_image_tarball is None
        else [f"--embed-runtime-image-tarball={runtime_image_tarball}"]
    )
    return _build(tools, FUNCTION, out / "function-aim.xpkg", extra)


def _build(tools: Tools, root: Path, package: Path, extra: list[str] | None = None) -> Path:
    package.parent.mkdir(parents=True, exist_ok=True)
    run_tool(
        [
            tools.crossplane,
            "xpkg",
            "build",
            f"--package-root={root}",
            # Examples are not packaged; point at a directory that does not exist.
            f"--examples-root={root / 'no-examples'}",
            f"--package-file={package}",
            *(extra or []),
        ],
        f"crossplane xpkg build of {root.name}",
    )
    return package


def runtime_image_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose the Function package's runtime image (packages and publish)."""
    image = parser.add_mutually_exclusive_group()
    image.add_argument(
        "--runtime-image-tarball",
        type=Path,
        help="docker-archive of the runtime image to embed (default: build it with "
        "scripts/build-image, as root)",
    )
    image.add_argument(
        "--no-runtime-image",
        action="store_true",
        help="package the Function's metadata only (for the External runtime)",
    )


def runtime_image(args: argparse.Namespace, out: Path) -> Path | None:
    """The tarball the options name, or a newly built image's, or None for metadata only."""
    if args.no_runtime_image:
        return None
    if args.runtime_image_tarball is not None:
        return Path(args.runtime_image_tarball)
    return build_image(out / "image").tarball


def main(argv: list[str]) -> int:
    """Build the packages and print their paths."""
    parser = argparse.ArgumentParser(
        prog="make package", description=__doc__.split("\n\n", maxsplit=1)[0]
    )
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help="output directory")
    runtime_image_options(parser)
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    try:
        tarball = runtime_image(args, out)
        tools = build_tools("render")
        for flavour in FLAVOURS:
            print(build_configuration(tools, out, flavour=flavour))
        print(build_function(tools, out, runtime_image_tarball=tarball))
    except HarnessError as e:
        print(f"packages: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
