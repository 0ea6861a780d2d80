"""Fixtures shared by the tiers that run the Go-built tools (render, api)."""

from __future__ import annotations

import pytest

from devtools.render import Tools, build_tools


@pytest.fixture(scope="session")
def tools() -> Tools:
    """The crossplane CLI and core and apicheck, built once into the tools cache (or reused)."""
    return build_tools()
