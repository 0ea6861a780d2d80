"""A control plane with one real node and a namespace enforcing `restricted`, for the node tier.

Its own control plane: the scenarios' plane simulates the kubelet, which a real one would
contradict.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

from devtools.controlplane import ControlPlane, start_control_plane
from devtools.image import Image
from devtools.node import NODE_CONTROLLERS, Node, start_node
from devtools.render import Tools

NS: Final = "node-test"
AIM_IMAGE: Final = "aim.local/aim-stub:1"  # devtools.aimimage.stub_image, loaded on the node


@contextlib.contextmanager
def node_cluster(
    tools: Tools,
    runtime_image: Image,
    root: Path,
    capacity: Mapping[str, str] | None = None,
    registries: Sequence[str] = (),
) -> Iterator[tuple[ControlPlane, Node]]:
    """The plane and its node, the function's runtime image loaded on it, and namespace `NS`.

    `capacity` and `registries` go to `devtools.node.start_node`.
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
