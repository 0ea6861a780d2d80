"""Build the Crossplane packages with the real `crossplane xpkg build`.

    python -m devtools.packages [OUT_DIR]     # default: _output/

The Configuration package is assembled from package/configuration/crossplane.yaml plus the
generated xrds/ and compositions/, so what is packaged is exactly what the tests validate, with
one change: Crossplane names the Function it installs as a dependency after the package's
repository path (`xpkg.crossplane.io/aim-crossplane/function-aim` becomes
`aim-crossplane-function-aim`), so each Composition's functionRef is set to that name.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.render import ROOT, HarnessError, Tools, build_tools, run_tool

CONFIGURATION: Final = ROOT / "package" / "configuration"
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
) -> Path:
    """Build the Configuration package into `out`; return the .xpkg file.

    `function_package` and `function_version` replace the dependency's (for a registry of the
    caller's choosing); the Compositions call the Function by the name Crossplane will give it.
    """
    meta = yaml.safe_load((CONFIGURATION / "crossplane.yaml").read_text())
    dep = dependency(meta)
    dep["package"] = function_package or dep["package"]
    dep["version"] = function_version or dep["version"]
    meta["spec"]["dependsOn"] = [dep]
    name = function_name(dep["package"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "crossplane.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
        shutil.copytree(ROOT / "xrds", root / "xrds")
        (root / "compositions").mkdir()
        for src in sorted((ROOT / "compositions").glob("*.yaml")):
            composition = yaml.safe_load(src.read_text())
            for step in composition["spec"]["pipeline"]:
                step["functionRef"]["name"] = name
            (root / "compositions" / src.name).write_text(
                yaml.safe_dump(composition, sort_keys=False)
            )
        return _build(tools, root, out / "configuration-aim.xpkg")


def build_function(tools: Tools, out: Path, *, runtime_image_tarball: Path | None = None) -> Path:
    """Build the Function package: its metadata, plus the runtime image when one is given.

    Without a runtime image the package serves validation and the External package runtime
    (the end-to-end tier); a `docker save` tarball of the image built from the Dockerfile makes
    it a package Crossplane can run as a Deployment.
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


def main(argv: list[str]) -> int:
    """Build the packages and print their paths."""
    out = Path(argv[0]).resolve() if argv else DEFAULT_OUT
    try:
        tools = build_tools()
        print(build_configuration(tools, out))
        print(build_function(tools, out))
    except HarnessError as e:
        print(f"packages: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
