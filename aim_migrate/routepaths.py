"""Route templates of the older generations, rewritten to read the canonical AIMService.

A route template's `{...}` fragments are JSONPath the function evaluates against the AIMService
(function/rules/routepath.py); each must find one scalar, else the service is Degraded with
`RouteTemplateInvalid`. A fragment naming a field that moved between generations would find
nothing (or an object) after migration, so its leading field path is rewritten to where the value
lives now. Whatever still names no field of the canonical AIMService is reported, never left to
fail on the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from pydantic import JsonValue

from function.api.service import AIMServiceSpec, AIMServiceStatus

_FRAGMENT: Final = re.compile(r"\{([^{}]*)\}")
# One step of a plain field path: `.name`, `['name']` or `["name"]`. Anything else (an index, a
# wildcard, a filter, `..`) ends the part of the path that can be checked and moved.
_STEP: Final = re.compile(
    r"""\.(?P<dot>[A-Za-z_][\w-]*)|\[\s*'(?P<single>[^']*)'\s*\]|\[\s*"(?P<double>[^"]*)"\s*\]"""
)

_MOVED: Final[dict[tuple[str, ...], tuple[str, ...]]] = {
    ("spec", "aimImageName"): ("spec", "model", "ref"),
    ("spec", "aimModelId"): ("spec", "model", "ref"),
    ("spec", "templateRef"): ("spec", "template", "name"),
    ("spec", "configRef"): ("spec", "runtimeConfigName"),
    ("spec", "routing", "routeTemplate"): ("spec", "routing", "pathTemplate"),
    ("spec", "overrides", "gpuSelector", "count"): (
        "spec",
        "overrides",
        "hardware",
        "gpu",
        "requests",
    ),
    ("spec", "overrides", "gpuSelector"): ("spec", "overrides", "hardware", "gpu"),
    ("status", "resolvedImage"): ("status", "resolvedModel"),
    # The AIM operator's AIMService (aim.eai.amd.com), v1alpha1 releases and v1alpha2.
    ("spec", "model", "name"): ("spec", "model", "ref"),
    ("spec", "templateName"): ("spec", "template", "name"),
    ("spec", "profile", "name"): ("spec", "template", "name"),
    ("status", "cache", "templateCacheRef", "name"): ("status", "templateCache"),
}
"""Old field path → canonical one, for every AIMService field the migration renames or moves."""

_MODEL: Final = ("spec", "model")


class ModelForm(StrEnum):
    """How the service a template is rendered for names its model (`spec.model.<form>`)."""

    REF = "ref"
    IMAGE = "image"
    CUSTOM = "custom"
    ANY = "any"
    """A runtime config's template: it serves services of every form."""


@dataclass
class Rewrite:
    """A template's rewritten text and what a reviewer should know about it."""

    template: str
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Rewritten, but the rendered path differs from before or fails for some services."""
    unmapped: list[str] = field(default_factory=list)
    """Fragments left as they were that will not render on the canonical AIMService."""


def rewrite_template(template: str, where: str, model: ModelForm) -> Rewrite:
    """Rewrite each `{...}` fragment of `template` (the field `where`) for the canonical API."""
    out = Rewrite(template)
    out.template = _FRAGMENT.sub(
        lambda m: "{" + _fragment(m.group(1), where, model, out) + "}", template
    )
    return out


def _fragment(expression: str, where: str, model: ModelForm, out: Rewrite) -> str:
    steps, rest = _steps(expression.strip())
    if not steps:
        out.unmapped.append(
            f"{where}: {{{expression}}} does not start with a field path (like "
            "{.metadata.name}) that migrate can check; rewrite it against the canonical "
            "AIMService (docs/api.md)"
        )
        return expression
    names = tuple(name for name, _ in steps)
    new = _moved(names)
    if new is not None:
        old, canonical = new
        out.changes.append(
            f"{where}: JSONPath {{.{'.'.join(old)}}} now reads {{.{'.'.join(canonical)}}}"
        )
        if old == ("spec", "aimModelId"):
            out.warnings.append(
                f"{where}: {{.spec.aimModelId}} rendered the model id and "
                "{.spec.model.ref} renders the model's name, so the path changes; tell the "
                "clients that call it"
            )
        steps = [(n, f".{n}") for n in canonical] + steps[len(old) :]
    elif names == _MODEL and not rest:
        form = _model_field(expression, where, model, out)
        if form is None:
            return expression
        steps = [*steps, (form, f".{form}")]
        if model is not ModelForm.ANY:  # the warning says it
            out.changes.append(
                f"{where}: JSONPath {{.spec.model}} now reads {{.spec.model.{form}}}"
            )
    names = tuple(name for name, _ in steps)
    problem = _unknown(names)
    if problem is not None:
        out.unmapped.append(
            f"{where}: {{{expression}}} reads {problem}, which the canonical AIMService does "
            "not have and migrate has no mapping for; a service rendering it is Degraded with "
            "RouteTemplateInvalid: rewrite it against docs/api.md (e.g. {.spec.model.ref}, "
            "{.metadata.name})"
        )
        return expression
    return "".join(raw for _, raw in steps) + rest


def _model_field(expression: str, where: str, model: ModelForm, out: Rewrite) -> str | None:
    """The field of `spec.model` that names the model, which the old `{.spec.model}` meant.

    In the older generations a service named its model by one string; `spec.model` is now an
    object, which a route template cannot render.
    """
    if model in {ModelForm.REF, ModelForm.IMAGE}:
        return model.value
    if model is ModelForm.ANY:
        out.warnings.append(
            f"{where}: {{.spec.model}} became {{.spec.model.ref}}, the model's name; a service "
            "using this runtime config that names its model by spec.model.image or "
            "spec.model.custom has no spec.model.ref and is Degraded with RouteTemplateInvalid "
            "unless it sets its own spec.routing.pathTemplate"
        )
        return ModelForm.REF.value
    out.unmapped.append(
        f"{where}: {{{expression}}} names the model, but this service gives it as "
        "spec.model.custom weights, which have no name to put in a path; use {.metadata.name} "
        "or a label"
    )
    return None


def _steps(expression: str) -> tuple[list[tuple[str, str]], str]:
    """The leading plain field path as (name, text as written), and the rest of the expression."""
    steps: list[tuple[str, str]] = []
    pos = 0
    while match := _STEP.match(expression, pos):
        name = match.group("dot") or match.group("single") or match.group("double") or ""
        steps.append((name, match.group(0)))
        pos = match.end()
    return steps, expression[pos:]


def _moved(names: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    for old in sorted(_MOVED, key=len, reverse=True):
        if names[: len(old)] == old:
            return old, _MOVED[old]
    return None


_SCHEMAS: Final[Mapping[str, dict[str, JsonValue]]] = {
    "spec": AIMServiceSpec.model_json_schema(by_alias=True),
    "status": AIMServiceStatus.model_json_schema(by_alias=True),
}
# What Crossplane adds to every composite, beside the AIM fields.
_CROSSPLANE: Final = {"spec": {"crossplane"}, "status": {"conditions", "crossplane"}}


def _unknown(names: tuple[str, ...]) -> str | None:
    """The first part of `names` the canonical AIMService lacks, as `.a.b`, or None."""
    head, tail = names[0], names[1:]
    if head in {"apiVersion", "kind"} and not tail:
        return None
    if head == "metadata":
        return None
    if head not in _SCHEMAS:
        return f".{head}"
    if tail and tail[0] in _CROSSPLANE[head]:
        return None
    root = _SCHEMAS[head]
    defs = root.get("$defs")
    return _walk(root, defs if isinstance(defs, dict) else {}, names, 1)


def _walk(
    schema: JsonValue, defs: Mapping[str, JsonValue], names: tuple[str, ...], depth: int
) -> str | None:
    if depth == len(names):
        return None
    missing = "." + ".".join(names[: depth + 1])
    for branch in _branches(schema, defs):
        if branch.get("type") == "array" or branch.get("x-kubernetes-preserve-unknown-fields"):
            return None  # an index or a free-form value: nothing to check a name against
        properties = branch.get("properties")
        extra = branch.get("additionalProperties")
        if isinstance(properties, dict) and names[depth] in properties:
            inner = properties[names[depth]]
        elif isinstance(extra, dict):
            inner = extra
        else:
            continue
        found = _walk(inner, defs, names, depth + 1)
        if found is None:
            return None
        missing = found
    return missing


def _branches(schema: JsonValue, defs: Mapping[str, JsonValue]) -> list[dict[str, JsonValue]]:
    """The object shapes `schema` allows, with `$ref`s resolved and `null` left out."""
    if not isinstance(schema, dict):
        return []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _branches(defs.get(ref.rsplit("/", 1)[-1]), defs)
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        return [b for s in any_of for b in _branches(s, defs)]
    return [] if schema.get("type") == "null" else [schema]
