"""The version the image and both packages carry, and the releases users run.

    python -m devtools.gen.version     prints HEAD's version, as scripts/build-image tags with it

pyproject.toml holds the version in Python's spelling (`0.2.0.dev0`); OCI tags and Crossplane's
dependency constraints want semantic versions, so the packages and the image carry it as
`v0.2.0-dev.0`. A pre-release sorts before its release, so `>=v0.2.0-dev.0` is met by v0.2.0.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from devtools.tools import ROOT, HarnessError

RELEASES: Final = Path(__file__).with_name("releases.txt")
_PEP440: Final = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:(\.dev|a|b|rc)(\d+))?")
_PRE: Final = {".dev": "dev", "a": "alpha", "b": "beta", "rc": "rc"}
_SEMVER: Final = re.compile(r"v\d+\.\d+\.\d+(?:-(?:dev|alpha|beta|rc)\.\d+)?")


@dataclass(frozen=True)
class Release:
    """A released version and the commit it was cut from."""

    version: str
    commit: str


def semver(version: str) -> str:
    """`0.2.0.dev0` as a package tag: `v0.2.0-dev.0` (`1.0.0rc1`: `v1.0.0-rc.1`)."""
    match = _PEP440.fullmatch(version)
    if match is None:
        msg = f"version {version!r}: expected X.Y.Z, optionally with .devN, aN, bN or rcN"
        raise HarnessError(msg)
    major, minor, patch, pre, number = match.groups()
    tag = f"v{major}.{minor}.{patch}"
    return f"{tag}-{_PRE[pre]}.{number}" if pre else tag


def project_version(root: Path = ROOT) -> str:
    """HEAD's version, as the image and the packages carry it."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    return semver(str(project["version"]))


def releases(path: Path = RELEASES) -> list[Release]:
    """The releases `path` lists, oldest first."""
    found = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        version, _, commit = line.partition(" ")
        if not _SEMVER.fullmatch(version) or not re.fullmatch(r"[0-9a-f]{40}", commit.strip()):
            msg = f"{path.name} line {number}: expected 'vX.Y.Z <40-hex commit>', got {line!r}"
            raise HarnessError(msg)
        found.append(Release(version, commit.strip()))
    return found


def latest_release(path: Path = RELEASES) -> Release:
    """The newest release: what users upgrade from."""
    found = releases(path)
    if not found:
        msg = f"{path} lists no release"
        raise HarnessError(msg)
    return found[-1]


if __name__ == "__main__":
    try:
        print(project_version())
    except HarnessError as e:
        print(f"version: {e}", file=sys.stderr)
        sys.exit(1)
