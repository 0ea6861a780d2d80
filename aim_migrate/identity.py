"""A manifest's apiVersion, kind, name and namespace: refused unless the API server takes them."""

from __future__ import annotations

import re
from typing import Final

from pydantic import JsonValue

from aim_migrate.bounds import UnreadableError, a, quoted

_API_VERSION: Final = re.compile(
    r"(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
)
"""`group/version` (a DNS subdomain and a label) or a core `version`, as Kubernetes names them."""
_KIND: Final = re.compile(r"[A-Za-z](?:[-A-Za-z0-9]*[A-Za-z0-9])?")
"""A kind, as the API server accepts one for a resource (a DNS label, any case)."""
_FORM: Final = {
    "apiVersion": ": group/version in lower case, as apps/v1, or a core version, as v1",
    "kind": " of letters, digits and -, as Deployment",
}
_LONGEST: Final = {"apiVersion": 253 + 1 + 63, "kind": 63, "name": 253, "namespace": 63}


def check_identity(doc: JsonValue, where: str) -> None:
    """Refuse an apiVersion, kind, name or namespace the API server would not take, if named.

    Checked before anything prints them: a report line quotes them whole.
    """
    if not isinstance(doc, dict):
        return
    for key in ("apiVersion", "kind"):
        value = doc.get(key)
        if value is not None:
            pattern = _API_VERSION if key == "apiVersion" else _KIND
            _check_name(value, pattern, key, where)
    meta = doc.get("metadata")
    if meta is None:
        return
    kind = doc.get("kind") or "the object"
    if not isinstance(meta, dict):
        msg = f"{where}: {kind}'s metadata is {a(meta)}, not a mapping"
        raise UnreadableError(msg)
    for key in ("name", "namespace"):
        value = meta.get(key)
        if value is not None:
            _check_name(value, None, f"{kind}'s metadata.{key}", where, _LONGEST[key])


def _check_name(
    value: JsonValue, pattern: re.Pattern[str] | None, what: str, where: str, longest: int = 0
) -> None:
    longest = longest or _LONGEST[what]
    if not isinstance(value, str):
        msg = (
            f"{where}: {what} is {a(value)}, not a string; write it as one (quote it if YAML "
            "reads it as a number)"
        )
        raise UnreadableError(msg)
    if len(value) > longest or (pattern is not None and not pattern.fullmatch(value)):
        form = _FORM.get(what, "")
        msg = (
            f"{where}: {what} {quoted(value)} is not one Kubernetes accepts (at most {longest} "
            f"characters{form})"
        )
        raise UnreadableError(msg)
