"""Fixtures for the render tier: the Go-built crossplane tools and a running function."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.render import ROOT, Tools, serve_function


@pytest.fixture(scope="session")
def function_target(tools: Tools) -> Iterator[str]:
    """`function-aim --insecure` on a free loopback port, as `crossplane render` dials it."""
    with serve_function("--oras", str(tools.oras)) as server:
        yield server.target


@pytest.fixture(scope="session")
def crds() -> Path:
    """The real KServe and Gateway API CRDs (AIM_CRDS_DIR, default ../shared/crds)."""
    path = Path(os.environ.get("AIM_CRDS_DIR", ROOT.parent / "shared" / "crds"))
    if not (path / "kserve").is_dir():
        pytest.fail(f"no KServe CRDs under {path}; set AIM_CRDS_DIR to a directory holding kserve/")
    return path
