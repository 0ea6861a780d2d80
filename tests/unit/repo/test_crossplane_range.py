"""The Crossplane versions the packages claim are the ones the tests run."""

from __future__ import annotations

import re

import pytest
import yaml

from devtools.tools import ROOT

TOOLS = (ROOT / "scripts" / "build-tools.sh").read_text()


def pinned(name: str) -> tuple[int, int, int]:
    match = re.search(rf"^{name}=v(\d+)\.(\d+)\.(\d+)", TOOLS, re.MULTILINE)
    assert match, f"scripts/build-tools.sh pins no {name}"
    return int(match[1]), int(match[2]), int(match[3])


PACKAGES = sorted(p.parent.name for p in (ROOT / "package").glob("*/crossplane.yaml"))


@pytest.mark.parametrize("package", PACKAGES)
def test_the_claimed_range_starts_at_the_oldest_core_the_render_tests_run(package: str) -> None:
    """A lower bound below the oldest tested core would promise what nothing checks; one above
    the current core would refuse the engine the whole suite runs on."""
    meta = yaml.safe_load((ROOT / "package" / package / "crossplane.yaml").read_text())
    claimed = meta["spec"]["crossplane"]["version"]
    major, minor, _ = pinned("OLDEST_CORE_VERSION")
    assert claimed == f">=v{major}.{minor}.0"
    assert pinned("OLDEST_CORE_VERSION") <= pinned("CORE_VERSION")
