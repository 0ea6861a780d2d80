"""One manifest's conversion and what the run tells each conversion: the rules' shared types."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import JsonValue

from aim_migrate.objects import Head
from aim_migrate.operator import OperatorContext


@dataclass
class Migration:
    """One manifest's conversion: the result and what a reviewer should know about it."""

    source: str
    manifest: JsonValue
    changes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Carried over, but it behaves differently from before or not for every object."""
    not_carried: list[str] = field(default_factory=list)
    dropped: bool = False
    """No counterpart: the object is left out of the output (not_carried says why)."""

    @property
    def target(self) -> str:
        """`Kind/name` of the result."""
        return describe(self.manifest)


@dataclass(frozen=True)
class Context:
    """What the other manifests of the same run tell about model ids (seed 000)."""

    model_ids: dict[str, str] = field(default_factory=dict)
    """Old `spec.modelId` of an AIMImage → that image's `metadata.name`."""
    operator: OperatorContext = field(default_factory=OperatorContext)
    """Models and profiles among the AIM operator's manifests of the run."""


def describe(doc: JsonValue) -> str:
    """`Kind/name` of a manifest, as a report heads its lines."""
    if not isinstance(doc, dict):
        return "(not an object)"
    return Head.read(doc).describe()
