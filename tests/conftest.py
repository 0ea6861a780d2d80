"""Fixtures shared by the tiers that run the Go-built tools (render, api, registry, e2e)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devtools.render import ROOT, Tools, build_tools


@pytest.fixture(scope="session")
def tools() -> Tools:
    """The crossplane CLI and core and apicheck, built once into the tools cache (or reused)."""
    return build_tools()


@pytest.fixture(scope="session")
def crds() -> Path:
    """The real KServe and Gateway API CRDs (AIM_CRDS_DIR, default ../shared/crds)."""
    path = Path(os.environ.get("AIM_CRDS_DIR", ROOT.parent / "shared" / "crds"))
    if not (path / "kserve").is_dir():
        pytest.fail(f"no KServe CRDs under {path}; set AIM_CRDS_DIR to a directory holding kserve/")
    return path
