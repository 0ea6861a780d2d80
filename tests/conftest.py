"""Fixtures shared by the tiers that run the Go-built tools (render, api, registry, image, e2e)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devtools.pkg.image import Image, build_image
from devtools.tools import Tools, build_tools


@pytest.fixture(scope="session")
def tools() -> Tools:
    """The crossplane CLI and core and apicheck, built once into the tools cache (or reused)."""
    return build_tools()


@pytest.fixture(scope="session")
def crds(tools: Tools) -> Path:
    """The real KServe and Gateway API CRDs, from their Go modules at the versions
    scripts/build-tools.sh pins (or AIM_CRDS_DIR, a directory with kserve/ and gateway-api/)."""
    path = Path(os.environ.get("AIM_CRDS_DIR", tools.crds))
    if not (path / "kserve").is_dir() or not (path / "gateway-api").is_dir():
        pytest.fail(f"no kserve/ and gateway-api/ CRDs under {path}; run scripts/build-tools.sh")
    return path


@pytest.fixture(scope="session")
def runtime_image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    """The function's runtime image, built once by scripts/build-image (no Docker)."""
    return build_image(tmp_path_factory.mktemp("image"))
