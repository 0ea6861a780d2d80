"""Raw reads of Kubernetes objects as Crossplane sends them: names, labels, owners, status.

Everything the function reads from an object outside the AIM API's parsed specs goes through
here, so a missing or ill-typed field is handled once: each reader answers an empty value or
None rather than raising.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from function.api.meta import Manifest


def metadata_of(manifest: Manifest) -> Mapping[str, JsonValue]:
    """An object's metadata, empty when it has none."""
    meta = manifest.get("metadata")
    return meta if isinstance(meta, dict) else {}


def name_of(manifest: Manifest) -> str:
    """An object's name, empty when it has none."""
    name = metadata_of(manifest).get("name")
    return name if isinstance(name, str) else ""


def uid_of(manifest: Manifest | None) -> str | None:
    """An object's UID, None before the API server gave it one."""
    uid = metadata_of(manifest).get("uid") if manifest is not None else None
    return uid if isinstance(uid, str) else None


def owner_references(manifest: Manifest) -> list[dict[str, JsonValue]]:
    """An object's owner references, each an object; malformed entries left out."""
    refs = metadata_of(manifest).get("ownerReferences")
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def labels_of(manifest: Manifest) -> Mapping[str, JsonValue]:
    """An object's labels, empty when it has none."""
    labels = metadata_of(manifest).get("labels")
    return labels if isinstance(labels, dict) else {}


def controller_ref(obj: Manifest) -> Mapping[str, JsonValue] | None:
    """The object's controller reference (its composing XR, for a composed object), if any."""
    return next((r for r in owner_references(obj) if r.get("controller") is True), None)


def controller_uid(obj: Manifest) -> str | None:
    """The UID of the object's controller, None when nothing controls it."""
    uid = (controller_ref(obj) or {}).get("uid")
    return uid if isinstance(uid, str) else None


def status_of(obj: Mapping[str, JsonValue] | None) -> Mapping[str, JsonValue]:
    """An object's `status`, empty when it has none yet."""
    status = obj.get("status") if obj is not None else None
    return status if isinstance(status, dict) else {}


def aim_status(obj: Mapping[str, JsonValue] | None) -> str | None:
    """The `status.status` value AIM objects report, if any."""
    value = status_of(obj).get("status")
    return value if isinstance(value, str) else None
