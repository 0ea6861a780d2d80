"""Typed reads of the objects a plan handles, as function/kube/views.py reads them for composers.

The plan's objects are YAML and JSON as read (`aim_plan.load.Obj`): a user's manifests, a live
cluster's answers, what the function composed. Everything the plan reads of them goes through
here, so an absent or ill-typed field reads as empty ("", {}, no entries) once, rather than each
caller digging with its own `or {}`. Sizes are bounded where the objects come in (the files'
and the API server's answers' bounds): these readers cut nothing, so what the plan prints of a
field is the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from function.kube.views import field_at, string_at


def text_at(obj: Mapping[str, JsonValue] | JsonValue, key: str, *path: str) -> str:
    """The string at `key, *path`, "" where there is none (absent, null, or not a string)."""
    return string_at(obj, key, *path) or ""


def mapping_at(
    obj: Mapping[str, JsonValue] | JsonValue, key: str, *path: str
) -> Mapping[str, JsonValue]:
    """The mapping at `key, *path`, empty where there is none."""
    value = field_at(obj, key, *path)
    return value if isinstance(value, dict) else {}


def entries_at(
    obj: Mapping[str, JsonValue] | JsonValue, key: str, *path: str
) -> list[Mapping[str, JsonValue]]:
    """The mappings of the list at `key, *path`, in order; entries of another type left out."""
    value = field_at(obj, key, *path)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def meta_text(obj: Mapping[str, JsonValue], key: str) -> str:
    """A string of the object's metadata (`name`, `namespace`, `uid`), "" when it has none."""
    return text_at(obj, "metadata", key)


def annotation(obj: Mapping[str, JsonValue], name: str) -> str:
    """One of the object's annotations, "" when it has none (or one that is not a string)."""
    return text_at(obj, "metadata", "annotations", name)


@dataclass(frozen=True)
class Condition:
    """One entry of `status.conditions` as the plan compares and prints it: uncut, unbounded.

    function/kube/views.py's `ObjectCondition` cuts what another controller wrote; the plan's
    conditions were written by the function or read within the plan's own bounds, and the
    plan prints them whole.
    """

    type: str
    status: str = ""
    reason: str = ""
    message: str = ""

    @classmethod
    def read(cls, entry: Mapping[str, JsonValue]) -> Condition:
        """From a condition's mapping; a field that is not a string reads as ""."""
        return cls(*(text_at(entry, k) for k in ("type", "status", "reason", "message")))


def conditions_of(obj: Mapping[str, JsonValue] | JsonValue) -> list[Condition]:
    """The object's `status.conditions`, in order; entries that are not mappings left out."""
    return [Condition.read(c) for c in entries_at(obj, "status", "conditions")]


def condition_of(obj: Mapping[str, JsonValue] | JsonValue, ctype: str) -> Condition | None:
    """The object's first condition of type `ctype`, None when it has none."""
    return next((c for c in conditions_of(obj) if c.type == ctype), None)
