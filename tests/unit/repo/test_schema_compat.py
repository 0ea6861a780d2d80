"""Upgrades keep stored objects valid: HEAD's XRDs are held to the released ones, and a breaking
change must be named in the CHANGELOG's upgrading notes with its migration."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from devtools.gen import compat
from devtools.tools import ROOT, HarnessError
from tests.cases import Case, table


def xrd(spec: dict[str, Any], *, served: bool = True) -> dict[str, Any]:
    """An XRD of one kind, `Thing`, whose v1 schema's `spec` is `spec`."""
    schema = {
        "type": "object",
        "properties": {
            "spec": spec,
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }
    return {
        "kind": "CompositeResourceDefinition",
        "spec": {
            "names": {"kind": "Thing"},
            "versions": [{"name": "v1", "served": served, "schema": {"openAPIV3Schema": schema}}],
        },
    }


BASE: dict[str, Any] = {
    "type": "object",
    "required": ["model"],
    "properties": {
        "model": {"type": "string", "maxLength": 64, "pattern": "^[a-z]+$"},
        "replicas": {"type": "integer", "default": 1, "minimum": 0, "maximum": 10},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


GONE = object()
"""An edit's value that deletes the field."""


@dataclass(frozen=True)
class Edit(Case):
    """BASE with the value at `at` (keys from the spec's schema) set, or deleted for GONE."""

    at: tuple[str, ...]
    value: Any
    want: list[str] = field(default_factory=list)


def _edited(at: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(BASE)
    node = spec
    for key in at[:-1]:
        node = node[key]
    if value is GONE:
        del node[at[-1]]
    else:
        node[at[-1]] = value
    return spec


P = "properties"
EDITS = [
    Edit("same", "nothing changed, nothing to report", (P, "mode", "type"), "string"),
    Edit("description", "a description says nothing of validity",
         (P, "model", "description"), "x"),
    Edit("new-optional", "a new optional field breaks no stored object",
         (P, "new"), {"type": "string"}),
    Edit("enum-widened", "more values accepted", (P, "mode", "enum"), ["a", "b", "c"]),
    Edit("bound-widened", "a higher maximum accepts more", (P, "replicas", "maximum"), 20),
    Edit("removed", "a stored object's field would be pruned", (P, "mode"), GONE,
         ["spec.mode: the field is removed"]),
    Edit("type", "a stored value may no longer parse", (P, "replicas", "type"), "string",
         ["spec.replicas: the type changes from integer to string"]),
    Edit("enum-narrowed", "a stored `b` becomes invalid", (P, "mode", "enum"), ["a"],
         ["spec.mode: the enum loses b"]),
    Edit("enum-added", "an enum on a free field narrows it", (P, "model", "enum"), ["x"],
         ["spec.model: an enum is added"]),
    Edit("max-lowered", "a long stored name becomes invalid", (P, "model", "maxLength"), 8,
         ["spec.model: maxLength narrows from 64 to 8"]),
    Edit("min-raised", "a stored 0 becomes invalid", (P, "replicas", "minimum"), 1,
         ["spec.replicas: minimum narrows from 0 to 1"]),
    Edit("items-bound", "bounds inside array items count",
         (P, "tags", "items", "maxLength"), 3, ["spec.tags[]: maxLength narrows from none to 3"]),
    Edit("map-values", "bounds on a map's values count",
         (P, "env", "additionalProperties", "pattern"), "^x$", ["spec.env{}: the pattern changes"]),
    Edit("pattern", "another pattern may refuse a stored value",
         (P, "model", "pattern"), "^[a-z0-9]+$", ["spec.model: the pattern changes"]),
    Edit("required", "a stored object without it becomes invalid", ("required",),
         ["model", "mode"], ["spec.mode: the field becomes required"]),
    Edit("default", "an unedited object composes differently",
         (P, "replicas", "default"), 2, ["spec.replicas: the default changes from 1 to 2"]),
    Edit("default-added", "an unedited object gains a value", (P, "mode", "default"), "a",
         ["spec.mode: the default changes from None to 'a'"]),
    Edit("unknown-fields", "a free-form field's stored content would be pruned",
         (P, "extra", "x-kubernetes-preserve-unknown-fields"), GONE,
         ["spec.extra: unknown fields are no longer kept (stored ones would be pruned)"]),
    Edit("map-dropped", "a map's stored entries would be pruned",
         (P, "env", "additionalProperties"), GONE,
         ["spec.env: a map's entries are no longer kept (stored ones would be pruned)"]),
    Edit("rule", "a new CEL rule may refuse a stored object", ("x-kubernetes-validations",),
         [{"rule": "self.replicas < 5"}],
         ["spec: a validation rule is added or changed: self.replicas < 5"]),
]  # fmt: skip


@table(EDITS)
def test_breaking_changes_are_found_and_others_are_not(case: Edit) -> None:
    """Each edit of a released schema is reported when it can break a stored object, by its
    dotted path, and not otherwise."""
    released = {"Thing": xrd(BASE)}
    head = {"Thing": xrd(_edited(case.at, case.value))}

    found = [f"{c.path}: {c.what}" for c in compat.breaking(released, head)]

    assert found == case.want, case.reason


def test_status_is_not_held_to_the_released_schema() -> None:
    """The function writes status: a status field removed breaks no stored object."""
    head = xrd(BASE)
    del head["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]

    assert compat.breaking({"Thing": xrd(BASE)}, {"Thing": head}) == []


def test_a_removed_kind_or_version_is_breaking() -> None:
    """Stored objects of a kind or version no longer served cannot be read."""
    assert [str(c) for c in compat.breaking({"Thing": xrd(BASE)}, {})] == [
        "Thing  (root): the kind is removed"
    ]
    gone = compat.breaking({"Thing": xrd(BASE)}, {"Thing": xrd(BASE, served=False)})
    assert [c.what for c in gone] == ["the version is no longer served"]


@dataclass(frozen=True)
class Notes(Case):
    """A CHANGELOG, and whether it acknowledges `spec.replicas`' change of AIMService."""

    changelog: str
    acknowledged: bool


REPLICAS = "- `AIMService spec.replicas` now defaults to 2.\n"


@table(
    [
        Notes("upgrading", "named in this release's upgrading notes",
              f"## Unreleased\n\n### Upgrading\n\n{REPLICAS}", acknowledged=True),
        Notes("wrapped", "a name wrapped over two lines is the same name in Markdown",
              "## Unreleased\n\n### Upgrading\n\n- `AIMService\n  spec.replicas` now 2.\n",
              acknowledged=True),
        Notes("changed-section", "the same words outside the upgrading notes do not count",
              f"## Unreleased\n\n### Changed\n\n{REPLICAS}", acknowledged=False),
        Notes("older-release", "an older release's notes acknowledged that release's change",
              f"## Unreleased\n\n### Added\n\n- x\n\n## 0.1.0\n\n### Upgrading\n\n{REPLICAS}",
              acknowledged=False),
        Notes("prefix", "a longer path is another field",
              "## Unreleased\n\n### Upgrading\n\n- `AIMService spec.replicasMax` is new.\n",
              acknowledged=False),
    ]
)  # fmt: skip
def test_only_this_releases_upgrading_notes_acknowledge_a_change(case: Notes) -> None:
    """A change is acknowledged by its kind and path in backticks in the Unreleased upgrading
    notes, and nowhere else."""
    change = compat.Change("AIMService", "v1alpha1", "spec.replicas", "the default changes")

    assert (compat.unacknowledged([change], case.changelog) == []) is case.acknowledged, case.reason


def test_a_change_of_a_whole_kind_is_named_by_the_kind() -> None:
    """A kind or version removed is acknowledged as `` `Kind` ``."""
    gone = compat.breaking({"Thing": xrd(BASE)}, {})
    notes = "## Unreleased\n\n### Upgrading\n\n- `Thing` is gone: delete its objects first.\n"

    assert compat.unacknowledged(gone, notes) == []


def test_both_flavours_are_checked_and_a_shared_kind_is_told_once() -> None:
    """A cluster kind is in both flavours' XRDs: a change to either copy is found, and the
    same change to both is one change."""
    released = {"xrds/t.yaml": xrd(BASE), "claims/xrds/t.yaml": xrd(BASE)}
    changed = xrd(_edited((P, "mode"), GONE))

    only_claims = compat.breaking(
        released, {"xrds/t.yaml": xrd(BASE), "claims/xrds/t.yaml": changed}
    )
    both = compat.breaking(released, {"xrds/t.yaml": changed, "claims/xrds/t.yaml": changed})

    assert [str(c) for c in only_claims] == ["Thing v1 spec.mode: the field is removed"]
    assert both == only_claims


def test_heads_xrds_break_nothing_the_changelog_does_not_name() -> None:
    """The upgrade from the released XRDs (the newest in devtools/gen/releases.txt) to HEAD's: every
    breaking change is named in the CHANGELOG's upgrading notes."""
    released = compat.released_commit()
    if not compat.has_commit(released):
        pytest.skip(f"the released commit {released[:12]} is not in this clone's history")
    changes = compat.breaking(compat.xrds_at(released), compat.xrds_at(None))

    missing = compat.unacknowledged(changes, (ROOT / "CHANGELOG.md").read_text())

    assert missing == [], "\n".join(
        ["breaking changes the CHANGELOG's Upgrading notes do not name (`Kind path`):"]
        + [f"  {c}" for c in missing]
    )


def test_the_check_finds_a_real_breaking_change_of_this_projects_history() -> None:
    """Held to the first XRDs, today's break stored objects in ways that happened: discovery
    turned on by default is found, so the check above is no check that cannot fail."""
    first = "fc861b0"
    if not compat.has_commit(first):
        pytest.skip(f"commit {first} is not in this clone's history")
    changes = compat.breaking(compat.xrds_at(first), compat.xrds_at(None))

    assert (
        compat.Change(
            "AIMModel",
            "v1alpha1",
            "spec.discovery.enabled",
            "the default changes from False to True",
        )
        in changes
    )


def test_an_unknown_commit_is_a_clear_error() -> None:
    """A released commit git does not know names itself in the error."""
    with pytest.raises(HarnessError, match="0000000"):
        compat.xrds_at("0000000000000000000000000000000000000000")
