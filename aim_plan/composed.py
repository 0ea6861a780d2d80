"""What core does to the objects an XR composes: names, labels, owners, and reading them back.

Core labels an XR with its root's name, names each composed object once, labels and annotates
it with its tree and resource name, and makes the XR its controller; the plan does the same so
what it composes looks as core's would.
"""

from __future__ import annotations

import hashlib
from typing import Final

from aim_plan.load import Obj
from aim_plan.world import World
from function.kube.objects import labels_of

COMPOSITE_LABEL: Final = "crossplane.io/composite"
RESOURCE_NAME: Final = "crossplane.io/composition-resource-name"
CLAIM_LABELS: Final = ("crossplane.io/claim-name", "crossplane.io/claim-namespace")


def _labelled(world: World, xr: Obj) -> Obj:
    """The XR with the label core gives a composite that has none: its own name.

    Core writes it before the first function call, so the plan does too. A composed XR has its
    parent's already (the root's name), which core keeps.
    """
    meta = xr.get("metadata") or {}
    labels = labels_of(xr)
    if not meta or labels.get(COMPOSITE_LABEL):
        return xr
    labelled = {**xr, "metadata": {**meta, "labels": {**labels, COMPOSITE_LABEL: meta["name"]}}}
    world.put(labelled)
    return labelled


def composed_by(world: World, xr: Obj) -> dict[str, Obj]:
    """The objects the XR composed, by resource name (core's observed composed resources)."""
    uid = (xr.get("metadata") or {}).get("uid")
    found: dict[str, Obj] = {}
    for obj in world.controlled_by(str(uid)) if uid else ():
        name = ((obj.get("metadata") or {}).get("annotations") or {}).get(RESOURCE_NAME)
        if name:
            found[name] = obj
    return found


def _composed(xr: Obj, name: str, obj: Obj) -> Obj:
    """A desired object with the metadata core gives composed resources."""
    xr_meta = xr["metadata"]
    xr_labels = labels_of(xr)
    # The XR's own label, which a composed XR inherits: every object of a tree names its root.
    root = xr_labels.get(COMPOSITE_LABEL) or xr_meta["name"]
    meta = dict(obj.get("metadata") or {})
    if not meta.get("name"):
        # Core generates `<root>-<random>`; the plan derives the suffix, to print the same twice.
        digest = hashlib.sha256(f"{xr_meta['uid']}/{name}".encode()).hexdigest()[:5]
        meta["name"] = f"{root}-{digest}"
    if xr_meta.get("namespace"):
        meta["namespace"] = xr_meta["namespace"]  # a namespaced XR composes into its namespace
    claim = {k: xr_labels[k] for k in CLAIM_LABELS if k in xr_labels}
    meta["labels"] = {**(meta.get("labels") or {}), COMPOSITE_LABEL: root, **claim}
    meta["annotations"] = {**(meta.get("annotations") or {}), RESOURCE_NAME: name}
    controller = {
        "apiVersion": xr["apiVersion"],
        "kind": xr["kind"],
        "name": xr_meta["name"],
        "uid": xr_meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    others = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != xr_meta["uid"]]
    meta["ownerReferences"] = [*others, controller]
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = meta
    return out


def _has_true(obj: Obj, ctype: str) -> bool:
    return any(
        c.get("type") == ctype and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
        if isinstance(c, dict)
    )
