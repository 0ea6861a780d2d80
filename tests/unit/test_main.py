"""The `function-aim` command fails loudly when it cannot start."""

from __future__ import annotations

import socket
import subprocess
import sys


def start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "function.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_credentials_and_not_insecure_exits_non_zero() -> None:
    """Forgetting both TLS certificates and --insecure is an error, not a silent exit 0."""
    proc = start("--address", "127.0.0.1:0")
    assert proc.returncode != 0
    assert "cannot serve on 127.0.0.1:0" in proc.stderr
    assert "insecure" in proc.stderr


def test_missing_certificate_directory_exits_non_zero() -> None:
    """A wrong --tls-server-certs-dir names the missing file."""
    proc = start("--address", "127.0.0.1:0", "--tls-server-certs-dir", "/nonexistent/certs")
    assert proc.returncode != 0
    assert "/nonexistent/certs/tls.crt" in proc.stderr


def test_address_in_use_exits_non_zero() -> None:
    """A port someone else holds is reported, and the process does not hang."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start("--insecure", "--address", f"127.0.0.1:{port}")
    assert proc.returncode != 0
    assert f"cannot serve on 127.0.0.1:{port}" in proc.stderr
