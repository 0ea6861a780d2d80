"""Reference resolution through Crossplane required resources: namespace first, then cluster.

A lookup asks Crossplane for both candidates at once (one extra call, not two) and resolves to
one of three outcomes, kept apart on purpose: `Pending` (Crossplane has not fetched them yet),
`Absent` (fetched, nothing matched) and `Found`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from function.api.meta import API_VERSION, Kind, Scope
from function.build import Manifest
from function.state import Requirement


@dataclass(frozen=True)
class Pending:
    """Crossplane has not answered the lookup yet; it will call the function again."""


@dataclass(frozen=True)
class Absent:
    """Neither the namespaced nor the cluster-scoped object exists."""


@dataclass(frozen=True)
class Found:
    """The object the reference resolved to, and where it was found."""

    manifest: Manifest
    kind: Kind
    scope: Scope


Resolution = Pending | Absent | Found


@dataclass(frozen=True)
class Lookup:
    """A by-name reference that a namespaced object shadows over a cluster-scoped one."""

    key: str
    name: str
    namespace: str
    namespaced_kind: Kind
    cluster_kind: Kind

    @property
    def _cluster_key(self) -> str:
        return f"{self.key}-cluster"

    def requirements(self) -> list[Requirement]:
        """What to ask Crossplane for. Returned on every call, so the answers keep coming."""
        return [
            Requirement(
                self.key, API_VERSION, self.namespaced_kind, self.name, namespace=self.namespace
            ),
            Requirement(self._cluster_key, API_VERSION, self.cluster_kind, self.name),
        ]

    def resolve(self, required: Mapping[str, tuple[Manifest, ...]]) -> Resolution:
        """Resolve from what Crossplane fetched; a namespaced match wins."""
        namespaced = required.get(self.key)
        if namespaced:
            return Found(namespaced[0], self.namespaced_kind, Scope.NAMESPACE)
        cluster = required.get(self._cluster_key)
        if cluster:
            return Found(cluster[0], self.cluster_kind, Scope.CLUSTER)
        if namespaced is None or cluster is None:
            return Pending()
        return Absent()
