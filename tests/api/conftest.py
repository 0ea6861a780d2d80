"""Fixtures of the API tier: the CRDs Crossplane derives from our XRDs; the AIM API documents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devtools.render.admission import xrd_crds
from devtools.tools import ROOT, Tools


@pytest.fixture(scope="session")
def crds_of_xrds(tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """`crossplane xrd convert` of every generated XRD."""
    return xrd_crds(tools, tmp_path_factory.mktemp("crds"))


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The AIM API documents this project implements (AIM_SEEDS_DIR, default ../shared/seeds).

    They are the specification this project is checked against, not part of it: a clone without
    them skips these conformance tests, and says so.
    """
    path = Path(os.environ.get("AIM_SEEDS_DIR", ROOT.parent / "shared" / "seeds"))
    if not any(path.glob("*.txt")):
        pytest.skip(
            f"the AIM API documents are not at {path}: conformance with them is not checked "
            "(set AIM_SEEDS_DIR to check it)"
        )
    return path
