"""What core does to the objects an XR composes: names, labels, owners, and reading them back.

Core labels an XR with its root's name, names each composed object once, labels and annotates
it with its tree and resource name, and makes the XR its controller; the plan does the same so
what it composes looks as core's would.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from aim_plan.load import Obj, key_of
from aim_plan.views import annotation, conditions_of, entries_at, mapping_at, meta_text, text_at
from aim_plan.world import World
from function.kube.objects import labels_of

COMPOSITE_LABEL: Final = "crossplane.io/composite"
RESOURCE_NAME: Final = "crossplane.io/composition-resource-name"
CLAIM_LABELS: Final = ("crossplane.io/claim-name", "crossplane.io/claim-namespace")


@dataclass(frozen=True)
class Composite:
    """What core reads of an XR to name, label and own what it composes."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    root: str
    """The root XR's name: its `crossplane.io/composite` label, or its own name for a root."""
    claim: dict[str, str]
    """The claim's labels, which core copies to every composed object."""

    @classmethod
    def of(cls, xr: Obj) -> Composite:
        """The XR as core reads it."""
        api_version, kind, namespace, name = key_of(xr)
        labels = labels_of(xr)
        return cls(
            api_version,
            kind,
            namespace,
            name,
            uid=meta_text(xr, "uid"),
            # A composed XR inherits its parent's label: every object of a tree names its root.
            root=text_at(labels, COMPOSITE_LABEL) or name,
            claim={k: v for k in CLAIM_LABELS if isinstance(v := labels.get(k), str)},
        )

    def controller(self) -> dict[str, JsonValue]:
        """The owner reference core gives what the XR composes."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }


def labelled(world: World, xr: Obj) -> Obj:
    """The XR with the label core gives a composite that has none: its own name.

    Core writes it before the first function call, so the plan does too. A composed XR has its
    parent's already (the root's name), which core keeps.
    """
    meta = mapping_at(xr, "metadata")
    labels = labels_of(xr)
    if not meta or text_at(labels, COMPOSITE_LABEL):
        return xr
    name = meta_text(xr, "name")
    out = {**xr, "metadata": {**meta, "labels": {**labels, COMPOSITE_LABEL: name}}}
    world.put(out)
    return out


def composed_by(world: World, xr: Obj) -> dict[str, Obj]:
    """The objects the XR composed, by resource name (core's observed composed resources)."""
    uid = meta_text(xr, "uid")
    found: dict[str, Obj] = {}
    for obj in world.controlled_by(uid) if uid else ():
        name = annotation(obj, RESOURCE_NAME)
        if name:
            found[name] = obj
    return found


def composed(xr: Obj, name: str, obj: Obj) -> Obj:
    """A desired object with the metadata core gives composed resources."""
    owner = Composite.of(xr)
    meta = dict(mapping_at(obj, "metadata"))
    if not text_at(meta, "name"):
        # Core generates `<root>-<random>`; the plan derives the suffix, to print the same twice.
        digest = hashlib.sha256(f"{owner.uid}/{name}".encode()).hexdigest()[:5]
        meta["name"] = f"{owner.root}-{digest}"
    if owner.namespace:
        meta["namespace"] = owner.namespace  # a namespaced XR composes into its namespace
    meta["labels"] = {**mapping_at(meta, "labels"), COMPOSITE_LABEL: owner.root, **owner.claim}
    meta["annotations"] = {**mapping_at(meta, "annotations"), RESOURCE_NAME: name}
    refs: list[JsonValue] = [
        dict(r) for r in entries_at(meta, "ownerReferences") if text_at(r, "uid") != owner.uid
    ]
    meta["ownerReferences"] = [*refs, owner.controller()]
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = meta
    return out


def has_true(obj: Obj, ctype: str) -> bool:
    """Whether the object has a condition of type `ctype` whose status is True."""
    return any(c.type == ctype and c.status == "True" for c in conditions_of(obj))
