"""Fixtures of the registry tier: real registries (see devtools/cluster/registry.py)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest

from devtools.cluster.registry import Registry, start_registry
from devtools.tools import Tools


@pytest.fixture(scope="session")
def registry(tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """An anonymous registry."""
    with start_registry(tools, tmp_path_factory.mktemp("registry"), auth=False) as r:
        yield r


@pytest.fixture(scope="session")
def private_registry(tools: Tools, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A registry that requires basic auth (USER / PASSWORD)."""
    with start_registry(tools, tmp_path_factory.mktemp("private-registry"), auth=True) as r:
        yield r


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A TCP server that accepts connections and never answers: a registry that hangs."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()
