"""Objects one XR composes and others use: who controls them, and who else keeps them alive.

Crossplane makes each composed object's XR its controller, so the object is garbage-collected with
that XR. When other XRs use the object too (two services serving one auto-created model), the
composing XR lists them as further, non-controller owners: Kubernetes' garbage collector deletes
an object only once every owner is gone, and removes the references of the owners that are. An
object whose controller was deleted is then left without one, and a remaining user adopts it by
composing it itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import JsonValue

from function.api.meta import Manifest
from function.kube.objects import owner_references, uid_of


def co_owners(users: Iterable[Manifest], composer: Manifest) -> list[JsonValue]:
    """Owner references (not controllers) for every user but the composing XR, sorted by name.

    The composer is known by its UID, or by kind, namespace and name: in the claims flavour the
    users are claims and the composer their composite, shown as the claim (function/kube/claims.py).
    No `blockOwnerDeletion`: a user may be deleted at any time, and the object simply outlives it
    if others remain.
    """
    refs: dict[tuple[str, str], JsonValue] = {}
    for user in users:
        meta = user.get("metadata")
        if not isinstance(meta, dict):
            continue
        uid, name = meta.get("uid"), meta.get("name")
        if not isinstance(uid, str) or not isinstance(name, str) or _same(user, composer):
            continue
        refs[(name, uid)] = {
            "apiVersion": str(user.get("apiVersion", "")),
            "kind": str(user.get("kind", "")),
            "name": name,
            "uid": uid,
        }
    return [refs[key] for key in sorted(refs)]


def _same(user: Manifest, composer: Manifest) -> bool:
    def identity(obj: Manifest) -> tuple[object, object, object]:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        return obj.get("kind"), meta.get("namespace"), meta.get("name")

    uid = uid_of(composer)
    return (uid is not None and uid_of(user) == uid) or identity(user) == identity(composer)


def with_co_owners(
    manifest: Manifest,
    current: Manifest,
    users: Iterable[Manifest] | None,
    composer: Manifest,
) -> Manifest:
    """`manifest` (the desired state of `current`) with every user but the composer as an owner.

    `users` is None until Crossplane has listed them; the owners `current` already has are kept
    then, so that a co-owner is never dropped by a call that did not look.
    """
    owners: list[JsonValue]
    if users is None:
        owners = [r for r in owner_references(current) if not r.get("controller")]
    else:
        owners = co_owners(users, composer)
    if not owners:
        return manifest
    meta = manifest.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta["ownerReferences"] = owners
    return {**manifest, "metadata": meta}
