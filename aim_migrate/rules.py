"""One manifest's conversion: the API group and version pick the rules, which are pure functions.

Each rule records what it changed and what it could not carry, so a person can review the result
the way they would review `kubectl convert` output. Rules never guess: a value that has no place
in the canonical API is reported, not invented around. This API's older generations' rules are
in `older`; the AIM operator's in the `operator_*` modules.
"""

from __future__ import annotations

import copy

from pydantic import JsonValue

from aim_migrate import older, operator, operator_v1alpha1, operator_v1alpha2
from aim_migrate.migration import Context, Migration, describe
from aim_migrate.objects import Head
from function.api.meta import GROUP
from function.kube.views import string_at

Manifest = dict[str, JsonValue]


def migrate(doc: JsonValue, context: Context) -> Migration:
    """Convert one manifest; anything that is not an AIM manifest passes through unchanged.

    The API group picks the rules: `aim.silogen.ai` (this API and its older generations) here,
    `aim.eai.amd.com` (the AIM operator's v1alpha1 and v1alpha2) in `operator`.
    """
    m = Migration(source=describe(doc), manifest=copy.deepcopy(doc))
    if not isinstance(m.manifest, dict):
        return m
    if operator.is_operator(m.manifest):
        _from_operator(m.manifest, m, context)
    elif is_aim(m.manifest):
        rule = older.RULES.get(Head.read(m.manifest).kind)
        if rule is not None:
            rule(m.manifest, m, context)
    else:
        return m
    if "status" in m.manifest and not m.dropped:
        del m.manifest["status"]
        m.changes.append("status: dropped; the function writes status")
    return m


def _from_operator(doc: Manifest, m: Migration, context: Context) -> None:
    head = Head.read(doc)
    version = head.version
    rules: dict[str, operator.Rule] = dict(operator_v1alpha1.RULES)
    if version == "v1alpha2":
        rules |= operator_v1alpha2.RULES
    elif version != "v1alpha1":
        rules = {}
    report = operator.Report(m.changes, m.warnings, m.not_carried)
    refused = {**operator_v1alpha1.REFUSED, **operator_v1alpha2.REFUSED}
    if not rules:
        refused = dict.fromkeys(
            [head.kind or "(no kind)"], f"{head.api_version} is not a version this converter knows"
        )
    operator.convert(doc, report, context.operator, rules, refused)
    m.dropped = report.dropped


def collect_context(docs: list[JsonValue]) -> Context:
    """What references between the manifests of a run need.

    Seed-000 AIMImages' model ids, and the operator's models (by image) and profiles (by name).
    """
    ids: dict[str, str] = {}
    for doc in docs:
        head = Head.read(doc)
        if head.group == GROUP and head.kind == "AIMImage":
            model_id = string_at(doc, "spec", "modelId")
            if model_id is not None and head.name:
                ids[model_id] = head.name
    return Context(model_ids=ids, operator=operator.collect(docs))


def is_aim(doc: Manifest) -> bool:
    """Whether the object belongs to the AIM API group (any generation)."""
    return Head.read(doc).group == GROUP


__all__ = ["Context", "Migration", "collect_context", "is_aim", "migrate"]
