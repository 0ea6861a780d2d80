"""AIM image labels to `ImageMetadata`.

`com.amd.aim.*` labels are read first, the legacy `org.amd.silogen.*` next, and the standard
`org.opencontainers.image.*` ones too.

Publishers write the recommended deployments by hand, or with AMD's label generator, which
writes a list of objects as Python prints it; so their parsing is forgiving where that is
unambiguous (a Python literal, single quotes, objects listed without brackets) and exact otherwise:
a label that still does not parse is an error naming the label, never a silently empty list.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Final

from pydantic import JsonValue, ValidationError

from function.api.model import ImageMetadata, ModelMetadata, OciMetadata, RecommendedDeployment
from function.rules import jsontext

PREFIXES: Final = ("com.amd.aim.", "org.amd.silogen.")
OCI_PREFIX: Final = "org.opencontainers.image."
MAX_LABEL_BYTES: Final = 65536
"""More than any image's recommended deployments need; a longer label is refused, not parsed."""
_MAX_TEXT: Final = 4096
_MAX_ITEMS: Final = 64
_MAX_ITEM: Final = 256

_TEXT: Final = {
    "model.canonicalName": "canonical_name",
    "model.source": "source",
    "title": "title",
    "description.full": "description_full",
    "release.notes": "release_notes",
}
_LISTS: Final = {"model.tags": "tags", "model.versions": "versions", "model.variants": "variants"}
REQUIRED: Final = ("model.canonicalName",)
"""Suffixes of the labels without which an image is no AIM model image (seed 004: its model is
Failed). The recommended deployments are not among them: an image may recommend none, and its
templates are then made by hand (`NoRecommendedTemplates`)."""
# Seed 004 calls the label `model.deployments`; published images use `model.recommendedDeployments`.
_DEPLOYMENTS: Final = ("model.recommendedDeployments", "model.deployments")
_OCI: Final = (
    "title",
    "description",
    "licenses",
    "vendor",
    "authors",
    "source",
    "documentation",
    "created",
    "revision",
    "version",
)


# Publishers add their own keys (tensor parallelism, notes); only the ones AIM uses are kept.
_DEPLOYMENT_KEYS: Final = frozenset(
    f.alias or n for n, f in RecommendedDeployment.model_fields.items()
)


class LabelError(ValueError):
    """A label the function needs has a value it cannot read; the message names the label."""


def kept(labels: Mapping[str, str]) -> dict[str, str]:
    """The labels `image_metadata` reads, each no longer than it reads, in key order.

    A model keeps these in its status (so the registry is asked once per image); an image may
    carry any number of labels of any size, and a status over etcd's limit could not be written.
    """
    wanted = {p + s for p in PREFIXES for s in (*_TEXT, *_LISTS, "hfToken.required")}
    wanted |= {OCI_PREFIX + key for key in _OCI}
    deployments = next((p + s for s in _DEPLOYMENTS for p in PREFIXES if p + s in labels), None)
    out = {k: labels[k][:_MAX_TEXT] for k in sorted(wanted) if k in labels}
    if deployments is not None:
        # One character over the bound keeps a too-long label too long, so it is still refused.
        out[deployments] = labels[deployments][: MAX_LABEL_BYTES + 1]
    return dict(sorted(out.items()))


def missing_required(labels: Mapping[str, str]) -> list[str]:
    """The required AIM labels `labels` lacks, each named with its legacy alternative.

    An empty value counts as missing.
    """
    return [
        " or ".join(prefix + suffix for prefix in PREFIXES)
        for suffix in REQUIRED
        if not any(labels.get(prefix + suffix, "").strip() for prefix in PREFIXES)
    ]


def image_metadata(labels: Mapping[str, str]) -> ImageMetadata:
    """What an image's labels say about its model. Labels it does not know are ignored.

    Raises:
        LabelError: the recommended-deployments label is not a list of deployments.
    """
    model: dict[str, object] = {}
    for suffix, attr in _TEXT.items():
        found = _aim_label(labels, suffix)
        if found is not None:
            model[attr] = _text(found[1])
    for suffix, attr in _LISTS.items():
        found = _aim_label(labels, suffix)
        if found is not None:
            items = (item.strip() for item in found[1].split(",", _MAX_ITEMS) if item.strip())
            model[attr] = [_text(item, _MAX_ITEM) for item in items][:_MAX_ITEMS]
    found = _aim_label(labels, "hfToken.required")
    if found is not None:
        model["hf_token_required"] = found[1].strip().lower() in {"1", "t", "true", "yes"}
    for suffix in _DEPLOYMENTS:
        found = _aim_label(labels, suffix)
        if found is not None:
            model["recommended_deployments"] = recommended_deployments(*found)
            break
    oci = {key: _text(labels[OCI_PREFIX + key]) for key in _OCI if OCI_PREFIX + key in labels}
    return ImageMetadata(
        model=ModelMetadata.model_validate(model) if model else None,
        oci=OciMetadata.model_validate(oci) if oci else None,
    )


def _text(value: str, limit: int = _MAX_TEXT) -> str:
    """A label cut to what a status can carry.

    What a registry serves ends up in the model's status, and a status over etcd's object limit
    could not be written at all.
    """
    return value if len(value) <= limit else value[: limit - 1] + "…"


def recommended_deployments(label: str, text: str) -> list[RecommendedDeployment]:
    """Parse a recommended-deployments label: a JSON list of objects, leniently quoted.

    Raises:
        LabelError: it is not a list of deployment objects after the lenient fixes.
    """
    body = text.strip()
    if not body:
        return []
    if not body.startswith("["):
        body = f"[{body}]"
    items = _listed(label, body)
    deployments = []
    for index, item in enumerate(items if isinstance(items, list) else [None]):
        if not isinstance(item, dict):
            msg = f'label {label}: expected a list of objects such as [{{"gpuModel": "MI300X"}}]'
            raise LabelError(msg)
        try:
            known = {k: v for k, v in item.items() if k in _DEPLOYMENT_KEYS}
            deployments.append(RecommendedDeployment.model_validate(known))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            msg = f"label {label}: deployment [{index}].{where}: {first['msg']}"
            raise LabelError(msg) from None
    return deployments


def _listed(label: str, body: str) -> JsonValue:
    """The label's value: JSON, a Python literal, or JSON in single quotes, in that order.

    AMD's label generator (aim-build) writes a list of objects as Python prints it: single
    quotes, `True`, `None`, and double quotes around a text holding an apostrophe.
    """
    try:
        return jsontext.loads(body, max_bytes=MAX_LABEL_BYTES)
    except jsontext.JsonTextError:
        pass
    value = _python_literal(body)
    if value is not None:
        return value
    try:
        return jsontext.loads(body.replace("'", '"'), max_bytes=MAX_LABEL_BYTES)
    except jsontext.JsonTextError as e:
        msg = f"label {label}: not a list of deployments: it {e}"
        raise LabelError(msg) from None


def _python_literal(text: str) -> JsonValue:
    # Bounded before parsing: Python's parser recurses on nesting, and a label is anyone's text.
    if len(text) > MAX_LABEL_BYTES or jsontext.nesting(text) > jsontext.MAX_DEPTH:
        return None
    try:
        return _json(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _json(value: object) -> JsonValue:
    """A Python literal as the JSON value it spells; ValueError for what JSON has no word for."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _json(v) for k, v in value.items()}
    msg = f"{type(value).__name__} is no JSON value"
    raise ValueError(msg)


def _aim_label(labels: Mapping[str, str], suffix: str) -> tuple[str, str] | None:
    for prefix in PREFIXES:
        key = prefix + suffix
        if key in labels:
            return key, labels[key]
    return None
