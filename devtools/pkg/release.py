"""A release's packages, built from its own commit by its own scripts, for the upgrade journey.

    python -m devtools.pkg.release REGISTRY [--version vX.Y.Z] [--out DIR]

What users upgrade from is what that release's `scripts/build-image` and `scripts/publish` made,
not HEAD's builders run over old sources: the commit's tree is exported from git (`git archive`,
so nothing of the working tree leaks in) and its scripts run there, with its own locked
dependencies. The image is built as root, as HEAD's is, and is the same bytes each time
(scripts/build-image is reproducible for a given SOURCE_DATE_EPOCH, the commit's time), so it is
kept in the tools cache under the commit and built once per machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Final

from devtools.gen.version import Release, latest_release, releases
from devtools.pkg.packages import function_name
from devtools.pkg.publish import Published
from devtools.tools import HarnessError, build_tools, git, run_script

CACHE_DIR: Final = "releases"
"""Where, beside the tools, the releases' runtime images are kept."""


def publish_release(
    release: Release, registry: str, work: Path, *, cache: Path | None = None
) -> Published:
    """Build `release`'s packages from its commit and push them to `registry` (with its path).

    `cache` keeps the release's image between runs (default: beside the Go-built tools).
    """
    registry = registry.rstrip("/")
    tree = work / f"src-{release.version}"
    export(release.commit, tree)
    images = cache or build_tools("render").crds.parent / CACHE_DIR
    tarball = images / release.commit / "function-aim.tar"
    if not tarball.exists():
        epoch = {**os.environ, "SOURCE_DATE_EPOCH": _commit_time(release)}
        built = run_script("build-image", str(work / "image"), root=tree, env=epoch)
        tarball.parent.mkdir(parents=True, exist_ok=True)
        partial = tarball.with_suffix(".partial")
        shutil.copyfile(built, partial)
        partial.replace(tarball)
    printed = run_script(
        "publish",
        registry,
        "--version",
        release.version,
        "--out",
        str(work / "packages"),
        "--runtime-image-tarball",
        str(tarball),
        root=tree,
    )
    published = Published(
        f"{registry}/configuration-aim:{release.version}",
        f"{registry}/configuration-aim-claims:{release.version}",
        f"{registry}/function-aim:{release.version}",
        function_name(f"{registry}/function-aim"),
    )
    # Its last line names the Function it pushed: the release's naming agrees with HEAD's.
    if published.function not in printed:
        msg = f"{release.version}'s scripts/publish did not push {published.function}: {printed}"
        raise HarnessError(msg)
    return published


def export(commit: str, tree: Path) -> None:
    """The files of `commit`, from this clone's history, at `tree` (a new directory)."""
    if tree.exists():
        msg = f"{tree} exists: a release is exported into a new directory (give another --out)"
        raise HarnessError(msg)
    tree.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "tree.tar"
        _git("archive", "--format=tar", "-o", str(archive), commit)
        with tarfile.open(archive) as tar:
            tar.extractall(tree, filter="tar")


def _commit_time(release: Release) -> str:
    return _git("log", "-1", "--format=%ct", release.commit).strip()


def _git(*args: str) -> str:
    try:
        return git(*args)
    except HarnessError as e:
        msg = f"{e} (releases are built from git history)"
        raise HarnessError(msg) from None


def main(argv: list[str]) -> int:
    """Build a release's packages from its commit and push them; print the references."""
    parser = argparse.ArgumentParser(
        prog="python -m devtools.pkg.release", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("registry", help="registry and optional path, e.g. 127.0.0.1:5000/aim")
    parser.add_argument(
        "--version",
        default=latest_release().version,
        choices=[r.version for r in releases()],
        help="the release (default: the newest in devtools/gen/releases.txt)",
    )
    parser.add_argument("--out", type=Path, help="work directory (default: a temporary one)")
    args = parser.parse_args(argv)
    [release] = [r for r in releases() if r.version == args.version]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            done = publish_release(release, args.registry, Path(args.out or tmp) / release.version)
    except HarnessError as e:
        print(f"release: {e}", file=sys.stderr)
        return 1
    print(f"configuration: {done.configuration}")
    print(f"function:      {done.function} (installed as Function {done.function_name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
