"""Each release listed is the commit that carries that version, exported as it was committed."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.gen import version
from devtools.gen.compat import has_commit
from devtools.pkg.release import export
from devtools.tools import HarnessError


@pytest.mark.parametrize("release", version.releases(), ids=lambda r: r.version)
def test_a_release_commit_carries_its_version(release: version.Release, tmp_path: Path) -> None:
    """The commit a release names builds packages of that version: its pyproject.toml says so,
    so the upgrade journey installs what users of that version run."""
    if not has_commit(release.commit):
        pytest.skip(f"{release.version}'s commit {release.commit[:12]} is not in this history")
    export(release.commit, tmp_path / "tree")
    assert version.project_version(tmp_path / "tree") == release.version
    # Exported from git, not copied from the working tree: HEAD's own files are not in it.
    assert not (tmp_path / "tree" / "devtools" / "pkg" / "release.py").exists()


def test_a_commit_outside_the_history_is_named(tmp_path: Path) -> None:
    """A clone that lacks the release's commit (shallow, or an archive) fails saying so."""
    with pytest.raises(HarnessError, match="releases are built from git history"):
        export("0" * 40, tmp_path / "tree")


def test_an_existing_directory_is_refused_naming_it(tmp_path: Path) -> None:
    """Exporting over an earlier tree would mix two commits' files: refused, naming the path,
    instead of a traceback."""
    (tmp_path / "tree").mkdir()
    with pytest.raises(HarnessError, match="exists: a release is exported into a new directory"):
        export("0" * 40, tmp_path / "tree")
