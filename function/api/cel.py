"""CEL validation rules (`x-kubernetes-validations`) attached to the API models.

The API server evaluates these at admission, so a rule here rejects a bad manifest before the
function ever sees it. Messages say what to do, in the user's terms (field paths as written in
a manifest).
"""

from __future__ import annotations

from pydantic import JsonValue

Rule = dict[str, JsonValue]


def rule(expression: str, message: str) -> Rule:
    """One `x-kubernetes-validations` entry."""
    return {"rule": expression, "message": message}


def validations(*rules: Rule) -> dict[str, JsonValue]:
    """A `json_schema_extra` carrying the rules; the schema converter keeps and merges them."""
    return {"x-kubernetes-validations": list(rules)}


def immutable(path: str) -> Rule:
    """A transition rule: the field, once set, keeps its value.

    The API server only evaluates it on updates where the field exists before and after; pair it
    with `fixed_presence` on the parent when removing or adding the field must be refused too.
    """
    return rule(
        "self == oldSelf", f"{path} is immutable; delete and recreate the object to change it"
    )


def fixed_presence(field: str, path: str) -> Rule:
    """A transition rule on a parent: `field` cannot be added or removed after creation."""
    return rule(
        f"has(self.{field}) == has(oldSelf.{field})",
        f"{path} cannot be added or removed after creation",
    )


def exactly_one(fields: tuple[str, ...], path: str) -> Rule:
    """Exactly one of the optional `fields` of this object is set."""
    count = " + ".join(f"(has(self.{f}) ? 1 : 0)" for f in fields)
    names = ", ".join(f"{path}.{f}" for f in fields)
    return rule(f"{count} == 1", f"set exactly one of {names}")


def at_least_one(fields: tuple[str, ...], path: str) -> Rule:
    """At least one of the optional `fields` of this object is set."""
    expression = " || ".join(f"has(self.{f})" for f in fields)
    names = " or ".join(f"{path}.{f}" for f in fields)
    return rule(expression, f"set at least one of {names}")
