"""Build the packages and push them to an OCI registry with `crossplane xpkg push`.

    python -m devtools.pkg.publish REGISTRY [--version VERSION] [--out _output] [--push-via ADDRESS]
                                         [--runtime-image-tarball IMAGE.tar | --no-runtime-image]

REGISTRY is a registry plus an optional path (`ghcr.io/acme`, `127.0.0.1:5000/aim-crossplane`).
VERSION defaults to HEAD's own (pyproject.toml's, spelled as a semantic version by
devtools/gen/version.py), the tag scripts/build-image gives the image.
The Function goes to `REGISTRY/function-aim:VERSION`; the Configuration, depending on that
Function at `>=VERSION`, to `REGISTRY/configuration-aim:VERSION` (the namespaced flavour) and
`REGISTRY/configuration-aim-claims:VERSION` (the claims flavour; a cluster installs one of
them). With `--push-via`, the packages are named by REGISTRY, as the cluster reaches it, and
pushed to the same registry at ADDRESS, as this host reaches it. Installing a Configuration
installs the Function too; its Compositions call the Function by the name Crossplane gives it
(see devtools/pkg/packages.py). The Function package embeds the runtime image, built by
scripts/build-image unless a tarball is given. Credentials come from the docker configuration
(`~/.docker/config.json`), as for any `crossplane xpkg push`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from devtools.gen.version import project_version
from devtools.pkg.packages import (
    CLAIMS,
    DEFAULT_OUT,
    FLAVOURS,
    NAMESPACED,
    build_configuration,
    build_function,
    function_name,
    runtime_image,
    runtime_image_options,
)
from devtools.tools import HarnessError, Tools, build_tools, run_tool

DEFAULT_VERSION = project_version()
"""HEAD's version (pyproject.toml's, as a semantic version): what the image is tagged with."""


@dataclass(frozen=True)
class Published:
    """Where the packages went, and the Function name Crossplane will install.

    `configuration` is the namespaced flavour, `claims_configuration` the claims flavour; a
    cluster installs one of the two.
    """

    configuration: str
    claims_configuration: str
    function: str
    function_name: str


def publish(  # noqa: PLR0913 - a registry, where it is reached from, and build options
    tools: Tools,
    registry: str,
    *,
    version: str = DEFAULT_VERSION,
    out: Path = DEFAULT_OUT,
    runtime_image_tarball: Path | None = None,
    push_via: str | None = None,
) -> Published:
    """Build and push the Function and both Configuration flavours; return their references.

    `push_via` is the same registry and path as this host reaches it, where the cluster knows it
    by another address (a kind cluster's registry is `localhost:5001` here and `<ip>:5000` to
    its nodes): the packages are named, and depend on each other, by `registry`.
    """
    registry = registry.rstrip("/")
    via = (push_via or registry).rstrip("/")

    def pushed(reference: str) -> str:
        return via + reference.removeprefix(registry)

    function = f"{registry}/function-aim"
    fn_xpkg = build_function(tools, out, runtime_image_tarball=runtime_image_tarball)
    # The dependency must exist before anything can install a Configuration.
    push(tools, fn_xpkg, pushed(f"{function}:{version}"))
    configurations = {}
    for flavour in FLAVOURS:
        xpkg = build_configuration(
            tools, out, function_package=function, function_version=f">={version}", flavour=flavour
        )
        configurations[flavour] = f"{registry}/{flavour.name}:{version}"
        push(tools, xpkg, pushed(configurations[flavour]))
    return Published(
        configurations[NAMESPACED],
        configurations[CLAIMS],
        f"{function}:{version}",
        function_name(function),
    )


def push(tools: Tools, xpkg: Path, reference: str) -> None:
    """`crossplane xpkg push -f XPKG REFERENCE`."""
    run_tool(
        [tools.crossplane, "xpkg", "push", "-f", xpkg, reference],
        f"crossplane xpkg push {reference}",
    )


def main(argv: list[str]) -> int:
    """Publish and print the references."""
    parser = argparse.ArgumentParser(prog="scripts/publish", description=__doc__.split("\n\n")[0])
    parser.add_argument("registry", help="registry and optional path, e.g. ghcr.io/acme")
    parser.add_argument(
        "--version",
        default=DEFAULT_VERSION,
        help=f"a semantic version tag (default: pyproject.toml's, {DEFAULT_VERSION})",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where the .xpkg files are built"
    )
    parser.add_argument(
        "--push-via",
        metavar="ADDRESS",
        help="the same registry and path as this host reaches it (the cluster uses REGISTRY)",
    )
    runtime_image_options(parser)
    args = parser.parse_args(argv)
    try:
        tarball = runtime_image(args, Path(args.out).resolve())
        done = publish(
            build_tools("render"),
            args.registry,
            version=args.version,
            out=args.out,
            runtime_image_tarball=tarball,
            push_via=args.push_via,
        )
    except HarnessError as e:
        print(f"publish: {e}", file=sys.stderr)
        return 1
    print(f"configuration: {done.configuration}")
    print(f"  or, claims:  {done.claims_configuration}")
    print(f"function:      {done.function} (installed as Function {done.function_name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
