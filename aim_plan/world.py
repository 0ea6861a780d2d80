"""The plan's stand-in for the API server: every object by (apiVersion, kind, namespace, name).

Objects get what the API server would give them: a uid (deterministic, from the key, so two
plans of the same manifests print the same), and generation 1 that grows when the spec changes.
Garbage collection is the API server's too: an object whose owners are all gone goes.

The world is indexed as the API server's storage is, by kind and namespace, and by controller:
a plan of 1,000 services asks for objects tens of thousands of times, and scanning every object
for each question made the plan quadratic in the services (benchmarks/plan.py).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, Final

from pydantic import JsonValue

from aim_plan.load import Obj, describe, is_aim, key_of
from aim_plan.views import meta_text, text_at
from function.kube.objects import controller_uid, owner_references, uid_of
from function.kube.views import field_at

Key = tuple[str, str, str, str]

_UID_NAMESPACE: Final = uuid.UUID("6f1c9d2e-4b1a-4e57-9a4e-61696d706c61")
_MAX_OWNER_DEPTH: Final = 8
"""Owners followed up from an object (AIM's deepest chain is service, cache, model cache, Job)."""
VOLATILE_METADATA: Final = ("resourceVersion", "managedFields", "creationTimestamp")
"""Fields that change on every write in a cluster and say nothing of the end state."""


def uid_for(key: Key) -> str:
    """The uid the plan gives the object of `key`: the same in every plan."""
    return str(uuid.uuid5(_UID_NAMESPACE, "/".join(key)))


def canonical(obj: Obj) -> str:
    """The object as sorted JSON without volatile fields, to tell whether a round changed it.

    Copies only what it drops fields from (metadata, conditions): every object is put in this
    form twice a round, and a deep copy of each was a sixth of a large plan's time.
    """
    out = dict(obj)
    meta = field_at(obj, "metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in VOLATILE_METADATA}
    status = field_at(obj, "status")
    if isinstance(status, dict):
        out["status"] = status = dict(status)
        if isinstance(conditions := field_at(status, "conditions"), list):
            status["conditions"] = _timeless(conditions)
        if isinstance(parents := field_at(status, "parents"), list):  # an HTTPRoute's, per parent
            status["parents"] = [
                {**p, "conditions": _timeless(found)}
                if isinstance(p, dict) and isinstance(found := field_at(p, "conditions"), list)
                else p
                for p in parents
            ]
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def _timeless(conditions: list[JsonValue]) -> list[JsonValue]:
    """Conditions without `lastTransitionTime`, which every rewrite of a status may move."""
    return [
        {k: v for k, v in c.items() if k != "lastTransitionTime"} if isinstance(c, dict) else c
        for c in conditions
    ]


def settled_change(key: Key, before: dict[Key, str], after: dict[Key, str]) -> str:
    """What became of the object of `key` between two snapshots: created, deleted or changed."""
    what = describe(
        {"apiVersion": key[0], "kind": key[1], "metadata": {"namespace": key[2], "name": key[3]}}
    )
    if key not in before:
        return f"{what} (created)"
    if key not in after:
        return f"{what} (deleted)"
    return f"{what} (changed)"


class World:
    """Every object of the plan, in the order they were first created."""

    def __init__(self, objects: Iterable[Obj] = ()) -> None:
        """A world holding `objects` (copied), each given a uid and generation 1."""
        self._objects: dict[Key, Obj] = {}
        # (apiVersion, kind) -> namespace -> keys, and controller uid -> keys; dicts as ordered
        # sets, so what they list comes in the order the objects were created, as iterating does.
        self._by_kind: dict[tuple[str, str], dict[str, dict[Key, None]]] = {}
        self._by_controller: dict[str, dict[Key, None]] = {}
        self._by_uid: dict[str, Key] = {}
        self._seen: set[str] = set()
        """Every uid the world held: an owner among them and no longer held was deleted."""
        self.dry_run_images: dict[Key, dict[str, Any]] = {}
        """Per discovery Job, the imageMetadata its image's labels give, read with the Job's own
        pull secrets (`aim_plan.dryrun`): the kubelet stand-in answers the dry-run from it."""
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
        old = self._objects.get(key)
        uid = (meta_text(old, "uid") if old is not None else "") or meta_text(obj, "uid")
        uid = uid or uid_for(key)
        generation = _generation(old) if old is not None else 1
        if old is not None and field_at(old, "spec") != field_at(obj, "spec"):
            generation += 1
        meta = obj.setdefault("metadata", {})
        meta["uid"], meta["generation"] = uid, generation
        controller = controller_uid(obj)
        if old is not None and controller_uid(old) != controller:
            self._unindex(key, old)
        self._objects[key] = obj
        self._seen.add(uid)
        self._by_uid[uid] = key
        # A key already indexed keeps its place: the index lists in creation order.
        self._by_kind.setdefault(key[:2], {}).setdefault(key[2], {})[key] = None
        if controller is not None:
            self._by_controller.setdefault(controller, {})[key] = None

    def delete(self, key: Key) -> None:
        """Remove an object (what it owns goes in `collect_garbage`)."""
        old = self._objects.pop(key, None)
        if old is not None:
            self._unindex(key, old)

    def _unindex(self, key: Key, old: Obj) -> None:
        namespaces = self._by_kind.get(key[:2]) or {}
        namespaces.get(key[2], {}).pop(key, None)
        controller = controller_uid(old)
        if controller is not None:
            self._by_controller.get(controller, {}).pop(key, None)

    def of_kind(self, api_version: str, kind: str, namespace: str | None = None) -> list[Obj]:
        """The objects of a kind: in `namespace` ("" is the cluster scope), or in all of them."""
        namespaces = self._by_kind.get((api_version, kind)) or {}
        keys = namespaces.get(namespace, {}) if namespace is not None else None
        if keys is None:
            return [self._objects[k] for keys in namespaces.values() for k in keys]
        return [self._objects[k] for k in keys]

    def under_aim(self, obj: Obj) -> bool:
        """Whether an AIM object controls `obj`, itself or through the objects it controls.

        The simulations act only on these: the plan stands in for the controllers of what AIM
        composes, not for those of every Job and claim a live cluster holds.
        """
        for _ in range(_MAX_OWNER_DEPTH):
            owner = self.controller_of(obj)
            if owner is None:
                return False
            if is_aim(owner):
                return True
            obj = owner
        return False

    def controller_of(self, obj: Obj) -> Obj | None:
        """The object that controls `obj`, where the world holds it."""
        uid = controller_uid(obj) or ""
        key = self._by_uid.get(uid)
        owner = self._objects.get(key) if key is not None else None
        if owner is None or uid_of(owner) != uid:
            return None
        return owner

    def controlled_by(self, uid: str) -> list[Obj]:
        """The objects whose controller is the object of `uid`."""
        return [self._objects[k] for k in self._by_controller.get(uid, {})]

    def snapshot(self) -> dict[Key, str]:
        """Every object's canonical form, to compare rounds."""
        return {k: canonical(o) for k, o in self._objects.items()}

    def collect_garbage(self) -> list[Key]:
        """Delete objects all of whose owners are gone, as Kubernetes' garbage collector does.

        Gone means deleted in the plan: an owner the plan never held (a live Job's CronJob, a
        kind the plan does not read) is not known to be gone, so what it owns stays.
        """
        gone: list[Key] = []
        while True:
            uids = {uid_of(o) for o in self._objects.values()}
            orphans = [
                k
                for k, o in self._objects.items()
                if (refs := _owner_uids(o))
                and not any(uid in uids for uid in refs)
                and any(uid in self._seen for uid in refs)
            ]
            if not orphans:
                return gone
            for k in orphans:
                self.delete(k)
            gone += orphans


def _owner_uids(obj: Obj) -> list[str]:
    return [uid for r in owner_references(obj) if (uid := text_at(r, "uid"))]


def _generation(obj: Obj) -> int:
    """The object's `metadata.generation`; 1 where it has none (or one that is no count)."""
    found = field_at(obj, "metadata", "generation")
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else 1
