"""Fixtures for the render tier: the Go-built crossplane tools and a running function."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devtools.render.harness import serve_function
from devtools.tools import Tools


@pytest.fixture(scope="session")
def function_target(tools: Tools) -> Iterator[str]:
    """`function-aim --insecure` on a free loopback port, as `crossplane render` dials it.

    One function serves the whole tier, and examples are rendered more than once (their XRs
    carry uids): without `--event-memory=0` a render would leave out the events an earlier one
    of the same XR told, as a served function rightly does for Crossplane's reconciles.
    """
    with serve_function("--oras", str(tools.oras), "--event-memory=0") as server:
        yield server.target
