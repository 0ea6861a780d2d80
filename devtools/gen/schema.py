"""Turn the API's pydantic models into Kubernetes structural OpenAPI v3 schemas.

Pydantic speaks JSON Schema; the API server wants a structural schema: every level typed, no
`$ref`, no `anyOf` over types, no `additionalProperties: false`. This module does that translation
and nothing else, and refuses (raises) a model shape it cannot express, so an unsupported type in
the API is caught when the XRDs are generated rather than at admission.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, JsonValue

Schema = dict[str, JsonValue]

# The keywords a structural schema may carry that we take from pydantic's output unchanged.
_KEPT: Final = frozenset(
    {
        "type",
        "description",
        "default",
        "enum",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "maxProperties",
        "required",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)


_CEL: Final = "x-kubernetes-validations"


class UnsupportedSchemaError(ValueError):
    """A model uses a type that has no structural-schema equivalent."""


def structural_schema(model: type[BaseModel]) -> Schema:
    """Return the structural OpenAPI v3 schema of `model` (validation mode, camelCase names)."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    defs = raw.pop("$defs", {})
    if not isinstance(defs, dict):
        msg = f"{model.__name__}: $defs is not an object"
        raise UnsupportedSchemaError(msg)
    return _convert(raw, defs, model.__name__)


def _convert(node: Schema, defs: dict[str, JsonValue], where: str) -> Schema:
    node = _inline(node, defs, where)
    if node.get("x-kubernetes-int-or-string"):
        # Its anyOf [integer, string] is the one union a structural schema allows; keep it whole.
        return {k: node[k] for k in sorted(node) if k in _KEPT or k == "anyOf"}
    # Sorted keys, so the generated YAML is stable and diffs of it read well.
    out: Schema = {k: node[k] for k in sorted(node) if k in _KEPT}
    if out.get("default", 0) is None:
        # `None` is pydantic's "optional"; a null default would make the API server store nulls.
        del out["default"]
    if "required" in out and not out["required"]:
        del out["required"]

    properties = node.get("properties")
    if isinstance(properties, dict):
        out["type"] = "object"
        out["properties"] = {
            name: _convert(_as_schema(sub, where), defs, f"{where}.{name}")
            for name, sub in properties.items()
        }
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        out["additionalProperties"] = _convert(additional, defs, f"{where}[*]")
    items = node.get("items")
    if isinstance(items, dict):
        out["items"] = _convert(items, defs, f"{where}[]")

    if "type" not in out:
        msg = f"{where}: no structural type for {sorted(node)}"
        raise UnsupportedSchemaError(msg)
    return out


def _inline(node: Schema, defs: dict[str, JsonValue], where: str) -> Schema:
    """Resolve `$ref` and optional (`anyOf [X, null]`) wrappers, keeping the outer annotations."""
    if node.get("x-kubernetes-int-or-string"):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _as_schema(defs.get(ref.rsplit("/", 1)[-1]), where)
        outer = {k: v for k, v in node.items() if k != "$ref"}
        return _inline(_merge(target, outer), defs, where)
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        options = [o for o in any_of if o != {"type": "null"}]
        if len(options) != 1:
            msg = f"{where}: a union of several types cannot be expressed ({options})"
            raise UnsupportedSchemaError(msg)
        outer = {k: v for k, v in node.items() if k != "anyOf"}
        return _inline(_merge(_as_schema(options[0], where), outer), defs, where)
    return node


def _merge(inner: Schema, outer: Schema) -> Schema:
    """The field's annotations over its type's, keeping the CEL rules of both.

    A type's rules (say, a one-of) and a field's rules (say, immutability) must all hold.
    """
    merged = {**inner, **outer}
    rules = [*_rules(inner), *_rules(outer)]
    if rules:
        merged[_CEL] = rules
    return merged


def _rules(node: Schema) -> list[JsonValue]:
    rules = node.get(_CEL, [])
    return list(rules) if isinstance(rules, list) else []


def _as_schema(value: JsonValue, where: str) -> Schema:
    if not isinstance(value, dict):
        msg = f"{where}: expected a schema object, got {value!r}"
        raise UnsupportedSchemaError(msg)
    return value
