"""The version the image and packages carry, and the releases users upgrade from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.gen import version
from devtools.tools import ROOT, HarnessError
from tests.cases import Case, table


@dataclass(frozen=True)
class Spelling(Case):
    """pyproject.toml's spelling and the tag the packages get (None: refused)."""

    python: str
    tag: str | None


SPELLINGS = [
    Spelling("release", "a release is its own tag", "0.1.0", "v0.1.0"),
    Spelling(
        "dev", "main between releases: a pre-release of the next", "0.2.0.dev0", "v0.2.0-dev.0"
    ),
    Spelling("rc", "a release candidate, as semver spells it", "1.0.0rc2", "v1.0.0-rc.2"),
    Spelling("alpha", "Python's a1 is semver's alpha.1", "1.0.0a1", "v1.0.0-alpha.1"),
    Spelling("two-parts", "Crossplane resolves X.Y.Z tags; 1.0 would not sort", "1.0", None),
    Spelling(
        "post", "a post-release has no semver spelling that sorts after it", "1.0.0.post1", None
    ),
    Spelling("local", "a local version must not reach a registry", "1.0.0+abc", None),
]


@table(SPELLINGS)
def test_the_packages_carry_a_semantic_version(case: Spelling) -> None:
    """Each spelling Python allows becomes the tag Crossplane's dependency ranges understand,
    or is refused naming what is expected."""
    if case.tag is None:
        with pytest.raises(HarnessError, match=r"expected X\.Y\.Z"):
            version.semver(case.python)
    else:
        assert version.semver(case.python) == case.tag


def test_heads_version_is_newer_than_every_release() -> None:
    """HEAD is always ahead of the newest release, so an upgrade to it is one (a pre-release of
    the next version sorts after the last release)."""
    head = version.project_version()
    for release in version.releases():
        assert _order(release.version) < _order(head), (release.version, head)


def test_the_newest_release_is_in_the_changelog() -> None:
    """Each release has its CHANGELOG section, with upgrading notes for what follows it."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for release in version.releases():
        assert f"\n## {release.version} (" in changelog, release.version
    assert "\n## Unreleased\n" in changelog


@table(
    [
        Case("not-semver", "a tag Crossplane cannot order"),
        Case("short-commit", "an abbreviated commit can become ambiguous"),
        Case("no-commit", "a version alone says nothing to build"),
    ]
)
def test_a_malformed_release_line_is_refused_by_its_line(case: Case, tmp_path: Path) -> None:
    """A releases file with a bad line fails naming the line, instead of building something
    else."""
    line = {
        "not-semver": "0.1 " + "a" * 40,
        "short-commit": "v0.1.0 1636ab0",
        "no-commit": "v0.1.0",
    }[case.id]
    path = tmp_path / "releases.txt"
    path.write_text(f"# comment\nv0.0.1 {'b' * 40}\n{line}\n")
    with pytest.raises(HarnessError, match="line 3"):
        version.releases(path)


def test_the_newest_release_is_the_last_line(tmp_path: Path) -> None:
    """Releases are listed oldest first; the upgrade starts from the last."""
    path = tmp_path / "releases.txt"
    path.write_text(f"v0.1.0 {'a' * 40}\nv0.2.0 {'b' * 40}\n")
    assert version.latest_release(path) == version.Release("v0.2.0", "b" * 40)
    path.write_text("# none yet\n")
    with pytest.raises(HarnessError, match="lists no release"):
        version.latest_release(path)


def _order(tag: str) -> tuple[int, int, int, int, int]:
    core, _, pre = tag.removeprefix("v").partition("-")
    major, minor, patch = (int(p) for p in core.split("."))
    # A pre-release sorts before its release (semver 2.0.0, item 11).
    return (major, minor, patch, 0 if pre else 1, int(pre.rpartition(".")[2] or 0))
