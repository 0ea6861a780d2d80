"""What an upgrade's XRDs break for objects already stored: the released schemas against HEAD's.

A stored object must stay valid, and mean the same, under the new schema. These changes break
that, and are reported as `Change`s (anywhere but under `status`, which the function writes):

- a kind, a served version or a field removed;
- a field's type changed;
- an enum losing values, or a bound narrowed (a lower maximum, a higher minimum, a shorter
  maxLength or maxItems, a changed pattern);
- a field newly required;
- a default changed, added or removed (the object composes differently with nothing edited);
- a validation rule (CEL) added or changed;
- unknown fields or a map's entries no longer kept (stored ones would be pruned).

A change this release's upgrading notes name (its `kind` and dotted `path`, in backticks, as
`AIMService spec.replicas`) is acknowledged: `unacknowledged` leaves it out. The claims
flavour's kinds (`XAIMService`) are named apart; its cluster kinds are the namespaced flavour's.
The released XRDs are read from git at the commit of the newest release
(devtools/gen/releases.txt), so the check needs the repository's history.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.gen.version import latest_release
from devtools.tools import ROOT, HarnessError, git

TREES: Final = ("xrds", "claims/xrds")
"""Both flavours' XRDs: the namespaced kinds and the claims flavour's."""
_BOUNDS_DOWN: Final = ("maximum", "maxLength", "maxItems", "maxProperties")
_BOUNDS_UP: Final = ("minimum", "minLength", "minItems", "minProperties")
Schema = Mapping[str, Any]


@dataclass(frozen=True, order=True)
class Change:
    """One breaking change: the kind, the version, the field's dotted path and what happened."""

    kind: str
    version: str
    path: str
    what: str

    def named(self) -> str:
        """How the CHANGELOG's upgrading notes name it: `` `Kind path` ``, or `` `Kind` ``."""
        return f"`{self.kind} {self.path}`" if self.path else f"`{self.kind}`"

    def __str__(self) -> str:
        """`AIMService v1alpha1 spec.replicas: the default changes from 1 to 2`."""
        return f"{self.kind} {self.version} {self.path or '(root)'}: {self.what}"


def breaking(released: Mapping[str, Schema], head: Mapping[str, Schema]) -> list[Change]:
    """The breaking changes from `released` to `head`: XRDs by file, each change by its kind."""
    changes: list[Change] = []
    for where, old in sorted(released.items()):
        kind = _kind(old) or where
        new = head.get(where)
        if new is None:
            changes.append(Change(kind, "", "", "the kind is removed"))
            continue
        old_versions, new_versions = _served(old), _served(new)
        for version, schema in sorted(old_versions.items()):
            if version not in new_versions:
                changes.append(Change(kind, version, "", "the version is no longer served"))
                continue
            changes += (
                Change(kind, version, path, what)
                for path, what in _compare(schema, new_versions[version], "")
            )
    return sorted(set(changes))  # a cluster kind is in both flavours: told once


def unacknowledged(changes: list[Change], changelog: str) -> list[Change]:
    """The changes this release's upgrading notes do not name.

    A change is named as `` `Kind path` `` (`` `Kind` `` for one of the whole kind or version)
    in the `### Upgrading` section under `## Unreleased`: an older release's notes acknowledged
    that release's changes, not a later one at the same path. Line breaks inside the name count
    as spaces, as Markdown reads them.
    """
    notes = " ".join(_unreleased_upgrading(changelog).split())
    return [c for c in changes if c.named() not in notes]


def _unreleased_upgrading(changelog: str) -> str:
    release = re.split(r"^## ", changelog, flags=re.MULTILINE)
    unreleased = next((r for r in release if r.startswith("Unreleased")), "")
    sections = re.split(r"^### ", unreleased, flags=re.MULTILINE)
    return "\n".join(s for s in sections if s.startswith("Upgrading"))


def _kind(xrd: Schema) -> str | None:
    kind = ((xrd.get("spec") or {}).get("names") or {}).get("kind")
    return str(kind) if kind else None


def _served(xrd: Schema) -> dict[str, Schema]:
    versions = (xrd.get("spec") or {}).get("versions") or []
    return {
        str(v["name"]): (v.get("schema") or {}).get("openAPIV3Schema") or {}
        for v in versions
        if v.get("served")
    }


def _compare(old: Schema, new: Schema, path: str) -> Iterator[tuple[str, str]]:
    """What `new` breaks of `old`, field by field (an iterative walk: schemas nest deeply)."""
    pending = [(old, new, path)]
    while pending:
        before, after, at = pending.pop()
        yield from _compare_node(before, after, at)
        old_props, new_props = before.get("properties") or {}, after.get("properties") or {}
        for name in sorted(old_props):
            if not at and name == "status":
                continue  # the function writes status: stored objects are not held to it
            child = f"{at}.{name}" if at else name
            if name not in new_props:
                yield child, "the field is removed"
            else:
                pending.append((old_props[name], new_props[name], child))
        for key, suffix in (("items", "[]"), ("additionalProperties", "{}")):
            old_sub, new_sub = before.get(key), after.get(key)
            if isinstance(old_sub, dict) and isinstance(new_sub, dict):
                pending.append((old_sub, new_sub, f"{at}{suffix}"))


def _compare_node(old: Schema, new: Schema, at: str) -> Iterator[tuple[str, str]]:
    if old.get("type") != new.get("type"):
        yield at, f"the type changes from {old.get('type')} to {new.get('type')}"
    yield from ((at, what) for what in _narrowed(old, new))
    for name in sorted(set(new.get("required") or ()) - set(old.get("required") or ())):
        yield f"{at}.{name}" if at else name, "the field becomes required"
    if old.get("default") != new.get("default"):
        yield at, f"the default changes from {old.get('default')!r} to {new.get('default')!r}"
    if old.get("x-kubernetes-preserve-unknown-fields") and not new.get(
        "x-kubernetes-preserve-unknown-fields"
    ):
        yield at, "unknown fields are no longer kept (stored ones would be pruned)"
    if old.get("additionalProperties") and not new.get("additionalProperties"):
        yield at, "a map's entries are no longer kept (stored ones would be pruned)"
    old_rules = {r.get("rule") for r in old.get("x-kubernetes-validations") or ()}
    for rule in new.get("x-kubernetes-validations") or ():
        if rule.get("rule") not in old_rules:
            yield at, f"a validation rule is added or changed: {rule.get('rule')}"


def _narrowed(old: Schema, new: Schema) -> Iterator[str]:
    """How the values `new` accepts are fewer than `old`'s: enums, bounds, patterns."""
    if "enum" in new:
        if "enum" not in old:
            yield "an enum is added"
        elif lost := [v for v in old["enum"] if v not in new["enum"]]:
            yield f"the enum loses {', '.join(map(str, lost))}"
    for key in _BOUNDS_DOWN:
        if key in new and (key not in old or new[key] < old[key]):
            yield f"{key} narrows from {old.get(key, 'none')} to {new[key]}"
    for key in _BOUNDS_UP:
        if key in new and (key not in old or new[key] > old[key]):
            yield f"{key} narrows from {old.get(key, 'none')} to {new[key]}"
    if "pattern" in new and new.get("pattern") != old.get("pattern"):
        yield "the pattern changes"


def xrds_at(commit: str | None, root: Path = ROOT) -> dict[str, Schema]:
    """Both flavours' XRDs by file (`claims/xrds/x.yaml`).

    At `commit` (read from git), or in the working tree.
    """
    texts: dict[str, str] = {}
    for tree in TREES:
        if commit is None:
            texts |= {
                f"{tree}/{p.name}": p.read_text() for p in sorted((root / tree).glob("*.yaml"))
            }
        else:
            listed = git("ls-tree", "--name-only", commit, f"{tree}/", root=root)
            texts |= {
                name: git("show", f"{commit}:{name}", root=root)
                for name in listed.splitlines()
                if name.endswith(".yaml")
            }
    found: dict[str, Schema] = {}
    for name, text in texts.items():
        xrd = yaml.safe_load(text)
        if not isinstance(xrd, dict) or xrd.get("kind") != "CompositeResourceDefinition":
            msg = f"{name} at {commit or 'the working tree'} is no XRD"
            raise HarnessError(msg)
        found[name] = xrd
    return found


def released_commit() -> str:
    """The commit of the newest release."""
    return latest_release().commit


def has_commit(commit: str, root: Path = ROOT) -> bool:
    """Whether this clone's history holds `commit` (a shallow clone or an archive may not)."""
    try:
        git("cat-file", "-e", f"{commit}^{{commit}}", root=root)
    except HarnessError:
        return False
    return True
