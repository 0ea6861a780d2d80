"""The plan's stand-in for the API server: every object by (apiVersion, kind, namespace, name).

Objects get what the API server would give them: a uid (deterministic, from the key, so two
plans of the same manifests print the same), and generation 1 that grows when the spec changes.
Garbage collection is the API server's too: an object whose owners are all gone goes.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterable, Iterator
from typing import Final

from aim_plan.load import Obj, key_of

Key = tuple[str, str, str, str]

_UID_NAMESPACE: Final = uuid.UUID("6f1c9d2e-4b1a-4e57-9a4e-61696d706c61")
VOLATILE_METADATA: Final = ("resourceVersion", "managedFields", "creationTimestamp")
"""Fields that change on every write in a cluster and say nothing of the end state."""


def uid_for(key: Key) -> str:
    """The uid the plan gives the object of `key`: the same in every plan."""
    return str(uuid.uuid5(_UID_NAMESPACE, "/".join(key)))


def canonical(obj: Obj) -> str:
    """The object as sorted JSON without volatile fields, to tell whether a round changed it."""
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    for name in VOLATILE_METADATA:
        meta.pop(name, None)
    for holder in _condition_holders(out):
        for c in holder:
            if isinstance(c, dict):
                c.pop("lastTransitionTime", None)
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def _condition_holders(obj: Obj) -> Iterator[list[object]]:
    status = obj.get("status")
    if isinstance(status, dict):
        conditions = status.get("conditions")
        if isinstance(conditions, list):
            yield conditions
        for parent in status.get("parents") or []:  # an HTTPRoute's, per parent
            if isinstance(parent, dict) and isinstance(parent.get("conditions"), list):
                yield parent["conditions"]


class World:
    """Every object of the plan, in the order they were first created."""

    def __init__(self, objects: Iterable[Obj] = ()) -> None:
        """A world holding `objects` (copied), each given a uid and generation 1."""
        self._objects: dict[Key, Obj] = {}
        for obj in objects:
            self.put(copy.deepcopy(obj))

    def __iter__(self) -> Iterator[Obj]:
        """The objects, oldest first (a snapshot: the world may change while iterating)."""
        return iter(list(self._objects.values()))

    def __len__(self) -> int:
        """How many objects there are."""
        return len(self._objects)

    def get(self, key: Key) -> Obj | None:
        """The object of `key`, if any."""
        return self._objects.get(key)

    def put(self, obj: Obj) -> None:
        """Create or replace an object: a uid if it has none, its generation kept or grown."""
        key = key_of(obj)
        meta = obj.setdefault("metadata", {})
        old = self._objects.get(key)
        old_meta = (old or {}).get("metadata") or {}
        meta["uid"] = old_meta.get("uid") or meta.get("uid") or uid_for(key)
        generation = old_meta.get("generation") or 1
        if old is not None and old.get("spec") != obj.get("spec"):
            generation += 1
        meta["generation"] = generation
        self._objects[key] = obj

    def delete(self, key: Key) -> None:
        """Remove an object (what it owns goes in `collect_garbage`)."""
        self._objects.pop(key, None)

    def snapshot(self) -> dict[Key, str]:
        """Every object's canonical form, to compare rounds."""
        return {k: canonical(o) for k, o in self._objects.items()}

    def collect_garbage(self) -> list[Key]:
        """Delete objects all of whose owners are gone, as Kubernetes' garbage collector does."""
        gone: list[Key] = []
        while True:
            uids = {(o.get("metadata") or {}).get("uid") for o in self._objects.values()}
            orphans = [
                k
                for k, o in self._objects.items()
                if (refs := (o.get("metadata") or {}).get("ownerReferences"))
                and not any(r.get("uid") in uids for r in refs if isinstance(r, dict))
            ]
            if not orphans:
                return gone
            for k in orphans:
                self.delete(k)
            gone += orphans
