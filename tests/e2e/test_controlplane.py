"""The control plane's own guarantees: a failed start names the component and shows its log,
and nothing it started outlives it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from devtools.cluster.controlplane import ComponentFailedError, start_control_plane
from devtools.tools import Tools


def processes_under(root: Path) -> list[str]:
    """Command lines of running processes that mention `root` (our components all do)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(root) in cmdline:
            found.append(cmdline)
    return found


def test_a_component_that_fails_names_itself_and_everything_is_stopped(
    tools: Tools, tmp_path: Path
) -> None:
    """An API server that cannot start (here: a stand-in that prints and exits) fails the
    bring-up with its name and its last words, and the etcd already started is stopped."""
    broken = tmp_path / "kube-apiserver"
    broken.write_text("#!/bin/sh\necho 'error: cannot listen on the secure port' >&2\nexit 3\n")
    broken.chmod(0o755)
    root = tmp_path / "plane"

    with (
        pytest.raises(ComponentFailedError) as failed,
        start_control_plane(dataclasses.replace(tools, kube_apiserver=broken), root),
    ):
        pytest.fail("the control plane started with a broken API server")

    message = str(failed.value)
    assert "kube-apiserver exited with code 3" in message
    assert "cannot listen on the secure port" in message
    assert str(root / "logs" / "kube-apiserver.log") in message
    assert processes_under(root) == []
