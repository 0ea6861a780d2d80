"""The AIM operator's manifests (`aim.eai.amd.com/v1alpha1`) converted to this package's API.

The operator (github.com/amd-enterprise-ai/aim-engine) serves the same kinds under another API
group, and its v1alpha1 schema changed shape over its releases (`templateName` became
`template.name`, `gpuSelector` became `hardware`, `model.ref` became `model.name`, ...). Each rule
here takes a spec field by field: what has a place here is moved to it, and whatever is left is
reported by name, so nothing is dropped without saying.

This module holds what every rule shares (the report, the run's context, `Fields`, the
metadata every kind drops); the rules are in `operator_configs`, `operator_models`,
`operator_services` and `operator_caches`, v1alpha1's table of them in `operator_v1alpha1`,
and the kinds only v1alpha2 has in `operator_v1alpha2`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from aim_migrate.objects import Head, field_at, mapping_at, owner_refs
from function.api.meta import API_VERSION, Kind
from function.kube.views import string_at

OPERATOR_GROUP: Final = "aim.eai.amd.com"

Obj = dict[str, JsonValue]

_SERVER_FIELDS: Final = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
)
_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
_CLUSTER_KINDS: Final = frozenset(
    {
        Kind.CLUSTER_MODEL,
        Kind.CLUSTER_SERVICE_TEMPLATE,
        Kind.CLUSTER_RUNTIME_CONFIG,
        Kind.CLUSTER_MODEL_SOURCE,
    }
)


@dataclass
class Report:
    """What one conversion changed, warns of, and could not carry (a Migration's lists)."""

    changes: list[str]
    warnings: list[str]
    not_carried: list[str]
    dropped: bool = False
    """The object has no counterpart: it is left out of the output."""


@dataclass(frozen=True)
class OperatorContext:
    """What the other operator manifests of the same run say, for references between them."""

    models: dict[tuple[str | None, str], str] = field(default_factory=dict)
    """(namespace, or None for AIMClusterModel; spec.image) → the model's name."""
    profiles: dict[tuple[str | None, str], str] = field(default_factory=dict)
    """(namespace, or None for AIMClusterProfile; name) → the profile's spec.image."""

    def model_for_image(self, image: str, namespace: str | None) -> str | None:
        """The model in the run serving `image`: the namespace's, else a cluster one."""
        if namespace is not None and (namespace, image) in self.models:
            return self.models[namespace, image]
        return self.models.get((None, image))


Rule = Callable[[Obj, Report, OperatorContext], Kind]
"""Converts one manifest in place and returns the kind it became."""


def is_operator(doc: Obj) -> bool:
    """Whether the object belongs to the AIM operator's API group (any version)."""
    return Head.read(doc).group == OPERATOR_GROUP


def collect(docs: list[JsonValue]) -> OperatorContext:
    """Models by image and profiles by name among the operator manifests of a run."""
    ctx = OperatorContext()
    for doc in docs:
        if not (isinstance(doc, dict) and is_operator(doc)):
            continue
        head, image = Head.read(doc), string_at(doc, "spec", "image")
        if not (head.name and image is not None):
            continue
        namespace = head.namespace or None
        if head.kind in ("AIMModel", "AIMClusterModel"):
            key = (namespace if head.kind == "AIMModel" else None, image)
            ctx.models.setdefault(key, head.name)
        elif head.kind in ("AIMProfile", "AIMClusterProfile"):
            ctx.profiles[namespace if head.kind == "AIMProfile" else None, head.name] = image
    return ctx


class Fields:
    """An operator spec being taken apart: fields move to the new spec, the rest is reported."""

    def __init__(self, src: JsonValue, path: str, report: Report) -> None:
        """Take apart `src` (the object at `path`), reporting into `report`."""
        self.src: Obj = dict(src) if isinstance(src, dict) else {}
        self.out: Obj = {}
        self.path = path
        self.report = report

    def peek(self, key: str) -> JsonValue:
        """The value of `key` still left (None when absent or already taken), left in place."""
        return self.src.get(key)

    def take(self, key: str) -> JsonValue:
        """Remove `key` from what is left and return its value (None when absent)."""
        return self.src.pop(key, None)

    def carry(self, key: str, new: str | None = None) -> None:
        """Move `key` unchanged (same meaning here), under `new` when renamed."""
        if key in self.src:
            value = self.src.pop(key)
            self.out[new or key] = value
            if new is not None:
                self.report.changes.append(f"{self.path}.{key}: renamed {self.path}.{new}")

    def drop(self, key: str, why: str) -> None:
        """Not carried: `key` has no place here; `why` says what to do instead."""
        if key in self.src:
            value = self.src.pop(key)
            self.report.not_carried.append(f"{self.path}.{key}: {show(value)}; {why}")

    def warn_drop(self, key: str, why: str) -> None:
        """Left out, with no loss to report as not carried (the operator did not use it)."""
        if key in self.src:
            value = self.src.pop(key)
            self.report.warnings.append(f"{self.path}.{key}: {show(value)} left out; {why}")

    def finish(self, kind: str) -> Obj:
        """The new spec; every field still left is reported as having no counterpart."""
        for key, value in self.src.items():
            self.report.not_carried.append(
                f"{self.path}.{key}: {show(value)}; {kind} here has no such field "
                "(see docs/api.md for what it offers)"
            )
        self.src = {}
        return self.out


_SHOWN: Final = 120
"""Longest value quoted in a report line."""


def show(value: JsonValue) -> str:
    """`value` as JSON on one line, cut to `_SHOWN` characters, for a report line."""
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def one_of(value: JsonValue, choices: Collection[str]) -> bool:
    """Whether `value` is one of the strings `choices`.

    False for a list or a mapping, which a hostile or mistaken manifest may hold where a string
    belongs (they are not hashable: `in` a set would raise).
    """
    return isinstance(value, str) and value in choices


def convert(
    doc: Obj,
    report: Report,
    ctx: OperatorContext,
    rules: Mapping[str, Rule],
    refused: Mapping[str, str],
) -> None:
    """Convert one `aim.eai.amd.com` manifest in place with the rule for its kind and version."""
    head = Head.read(doc)
    kind = head.kind or "(no kind)"
    rule = rules.get(kind)
    if rule is None:
        report.not_carried.append(
            f"the whole {kind}: "
            + refused.get(kind, "an operator kind this converter does not know; nothing carried")
        )
        report.dropped = True
        return
    _metadata(doc, report)
    new_kind = rule(doc, report, ctx)
    report.changes.append(f"apiVersion: {head.api_version} became {API_VERSION}")
    doc["apiVersion"] = API_VERSION
    if new_kind != kind:
        report.changes.append(f"kind: {kind} became {new_kind}")
    doc["kind"] = new_kind.value
    meta = mapping_at(doc, "metadata")
    if new_kind in _CLUSTER_KINDS and meta is not None and meta.pop("namespace", None):
        report.changes.append(f"metadata.namespace: dropped; {new_kind} is cluster-scoped")


def _metadata(doc: Obj, report: Report) -> None:
    """Drop what the API server and the operator wrote; keep names, labels and annotations."""
    meta = mapping_at(doc, "metadata")
    if meta is None:
        return
    server = [k for k in _SERVER_FIELDS if meta.pop(k, None) is not None]
    if server:
        report.changes.append(f"metadata.{{{','.join(server)}}}: dropped; the API server sets them")
    annotations = mapping_at(meta, "annotations")
    if annotations is not None and annotations.pop(_LAST_APPLIED, None) is not None:
        report.changes.append(f"metadata.annotations[{_LAST_APPLIED}]: dropped")
        if not annotations:
            del meta["annotations"]
    if meta.pop("finalizers", None):
        report.changes.append(
            "metadata.finalizers: dropped; they are the operator's, and no controller here "
            "would remove them"
        )
    owners = meta.pop("ownerReferences", None)
    if isinstance(owners, list) and owners:
        names = ", ".join(f"{o.kind or None}/{o.name or None}" for o in owner_refs(owners))
        report.warnings.append(
            f"metadata.ownerReferences: dropped; the operator created this object for {names}. "
            "Converted, that owner creates its own here, so leave this one out unless you want "
            "it kept as a hand-written object"
        )


def spec_fields(doc: Obj, report: Report) -> Fields:
    """The object's spec, to be taken apart field by field."""
    return Fields(field_at(doc, "spec"), "spec", report)
