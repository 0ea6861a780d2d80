"""What the node tier shares: a control plane with one real node and a namespace enforcing
`restricted`, and a client of the test AIM image's OpenAI-compatible server.

A plane of its own, with a scheduler: the scenarios' platform schedules nothing (its Jobs' kubelet
is simulated, which a real scheduler and kubelet would contradict).
"""

from __future__ import annotations

import contextlib
import http.client
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from devtools.cluster.controlplane import ControlPlane, start_control_plane
from devtools.cluster.node import NODE_CONTROLLERS, Node, start_node
from devtools.pkg.image import Image
from devtools.tools import Tools

NS: Final = "node-test"
# devtools.cluster.aimimage.stub_image, loaded on the node
AIM_IMAGE: Final = "aim.local/aim-stub:1"


@contextlib.contextmanager
def node_cluster(
    tools: Tools,
    runtime_image: Image,
    root: Path,
    capacity: Mapping[str, str] | None = None,
    registries: Sequence[str] = (),
) -> Iterator[tuple[ControlPlane, Node]]:
    """The plane and its node, the function's runtime image loaded on it, and namespace `NS`.

    `capacity` and `registries` go to `devtools.cluster.node.start_node`.
    """
    with (
        start_control_plane(tools, root / "plane", extra_controllers=NODE_CONTROLLERS) as plane,
        start_node(tools, plane, root / "node", capacity=capacity, registries=registries) as node,
    ):
        plane.retire_rbac_manager()  # its fixed metrics port would block another plane
        node.import_archive(runtime_image.tarball)
        plane.admin.apply(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": NS,
                    "labels": {"pod-security.kubernetes.io/enforce": "restricted"},
                },
            }
        )
        yield plane, node


def chat(host: str, port: int, seen: list[str]) -> dict[str, Any] | None:
    """An OpenAI chat completion from the server at host:port; None (noted in `seen`) while it
    cannot connect or answers otherwise."""
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        body = json.dumps({"model": "Org/Small", "messages": [{"role": "user", "content": "hi"}]})
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        text = response.read()
        answer: dict[str, Any] = json.loads(text)
    except (OSError, http.client.HTTPException, ValueError) as e:
        seen.append(f"{type(e).__name__}: {e}")
        return None
    finally:
        conn.close()
    return answer
