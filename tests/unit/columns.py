"""What a `kubectl get` column shows for an object, read the way the API server reads it."""

from __future__ import annotations

from typing import Any

from function.api.definitions import DEFINITIONS
from function.api.meta import Kind


def column_value(kind: Kind, name: str, obj: Any) -> Any:
    """The value the column `name` of `kind` reads in `obj`; None where its path finds nothing."""
    [column] = [c for d in DEFINITIONS if d.kind == kind for c in d.columns if c.name == name]
    value = obj
    for part in column.json_path.strip(".").split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value
