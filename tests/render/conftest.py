"""Fixtures for the render tier: the Go-built crossplane tools and a running function."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.render.harness import serve_function
from devtools.tools import Tools


@pytest.fixture(scope="session")
def function_target(tools: Tools) -> Iterator[str]:
    """`function-aim --insecure` on a free loopback port, as `crossplane render` dials it."""
    with serve_function("--oras", str(tools.oras)) as server:
        yield server.target
