"""Typed views of the manifests aim-migrate converts: what the rules read, read once.

The manifests are anyone's (an operator's export, a hand-edited file), so, as function/kube/views
reads what other controllers write, a view tolerates what it cannot use: an absent or ill-typed
field reads as empty ("" or None, a mapping that is not one as none), lists are read up to a
bound and strings are cut at function/rules/text's `word`. The files were read within bounds
(`aim_migrate.manifests`), which also refused an ill-typed identity; these views hold for
documents handed to `convert` by other callers too.

What a rule takes apart field by field, reporting what is left, is a `Fields`
(`aim_migrate.operator`); what it edits in place it reaches through `mapping_at`, which names the
mapping it needs rather than digging for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from function.kube.views import field_at
from function.rules.text import word

__all__ = ["Head", "OwnerRef", "field_at", "mapping_at", "owner_refs"]

_MAX_OWNERS: Final = 64
"""Owner references named in a report line; the operator writes one."""


@dataclass(frozen=True)
class Head:
    """A manifest's apiVersion, kind, name and namespace; "" where one is absent or no string."""

    api_version: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""

    @classmethod
    def read(cls, doc: JsonValue) -> Head:
        """The head of `doc` (all empty if it is no mapping)."""
        return cls(
            api_version=word(field_at(doc, "apiVersion")),
            kind=word(field_at(doc, "kind")),
            name=word(field_at(doc, "metadata", "name")),
            namespace=word(field_at(doc, "metadata", "namespace")),
        )

    @property
    def group(self) -> str:
        """What comes before the `/` (`aim.eai.amd.com`), the whole apiVersion if it has none."""
        return self.api_version.split("/", 1)[0]

    @property
    def version(self) -> str:
        """The version within the group (`v1alpha1`); "" when the apiVersion names no group."""
        return self.api_version.partition("/")[2]

    def describe(self) -> str:
        """`Kind/name`, as a report heads the object's lines."""
        return f"{self.kind or '(no kind)'}/{self.name or '(no name)'}"


@dataclass(frozen=True)
class OwnerRef:
    """One entry of `metadata.ownerReferences`: the object that made this one."""

    kind: str
    name: str


def owner_refs(value: JsonValue) -> tuple[OwnerRef, ...]:
    """The entries of an `ownerReferences` list that are mappings, up to a bound."""
    if not isinstance(value, list):
        return ()
    return tuple(
        OwnerRef(word(field_at(o, "kind")), word(field_at(o, "name")))
        for o in value[:_MAX_OWNERS]
        if isinstance(o, dict)
    )


def mapping_at(obj: JsonValue, key: str, *path: str) -> dict[str, JsonValue] | None:
    """The mapping at `key, *path` of `obj`, itself (to edit in place); None if there is none."""
    value = field_at(obj, key, *path)
    return value if isinstance(value, dict) else None
