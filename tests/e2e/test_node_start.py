"""A node's own guarantees: a failed start names the component and shows its log, and the host
is left as the node found it.

A module of its own: no other node may run meanwhile (they would share the bridge, and this
test compares the whole host before and after).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from devtools.cluster.controlplane import ComponentFailedError, start_control_plane
from devtools.cluster.node import NODE_CONTROLLERS, HostState, start_node
from devtools.tools import Tools
from tests.e2e.test_controlplane import processes_under


def test_a_node_that_fails_to_start_names_the_component_and_leaves_the_host_clean(
    tools: Tools, tmp_path: Path
) -> None:
    """A kube-proxy that cannot start fails the bring-up with its name and its last words, after
    containerd and the kubelet have changed the host (iptables chains, cgroups, sysctls): all of
    that is put back, and nothing the node started is left running or mounted."""
    broken = tmp_path / "kube-proxy"
    broken.write_text("#!/bin/sh\necho 'error: cannot sync iptables rules' >&2\nexit 4\n")
    broken.chmod(0o755)
    before = host_state()
    root = tmp_path / "node"
    with (
        start_control_plane(tools, tmp_path / "plane", extra_controllers=NODE_CONTROLLERS) as plane,
        pytest.raises(ComponentFailedError) as failed,
        start_node(dataclasses.replace(tools, kube_proxy=broken), plane, root),
    ):
        pytest.fail("the node started with a broken kube-proxy")

    message = str(failed.value)
    assert "kube-proxy exited with code 4" in message
    assert "cannot sync iptables rules" in message
    assert host_state() == before
    assert processes_under(root) == []
    assert str(root) not in Path("/proc/self/mounts").read_text()


def host_state() -> dict[str, Any]:
    """What a node changes on the host: sysctls, network namespaces and links, iptables chains,
    cgroups, the kubelet's fixed directories."""
    state = HostState.read()
    return {
        "sysctls": state.sysctls,
        "netns": state.netns,
        "chains": state.chains,
        "cgroups": state.cgroups,
        "missing": state.missing,
        "links": sorted(link.name for link in Path("/sys/class/net").iterdir()),
    }
