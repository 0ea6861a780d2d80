"""Reference resolution through Crossplane required resources: namespace first, then cluster.

A lookup asks Crossplane for both candidates at once (one extra call, not two) and resolves to
one of three outcomes, kept apart on purpose: `Pending` (Crossplane has not fetched them yet),
`Absent` (fetched, nothing matched) and `Found`. A listing asks for every object of a kind, for
searches by content (a model by image, the templates of a model); `None` again means "not yet".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from pydantic import BaseModel, JsonValue

from function.api.common import ResolvedReference
from function.api.meta import API_VERSION, Kind, Manifest, Scope
from function.kube.contract import Requirement
from function.kube.convert import FieldPath, required_where
from function.kube.objects import labels_of, metadata_of, name_of
from function.kube.parse import parse_headline, parse_status

SpecT = TypeVar("SpecT", bound=BaseModel)
StatusT = TypeVar("StatusT", bound=BaseModel)
HeadlineT = TypeVar("HeadlineT", bound=StrEnum)


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
    """A by-name reference that a namespaced object shadows over a cluster-scoped one.

    With `only` set it looks in that scope alone (a template cache that names its template's
    scope, a cluster template's model), under the same requirement names.
    """

    key: str
    name: str
    namespace: str
    namespaced_kind: Kind
    cluster_kind: Kind
    only: Scope | None = None

    @property
    def _cluster_key(self) -> str:
        return f"{self.key}-cluster"

    def requirements(self) -> list[Requirement]:
        """What to ask Crossplane for. Returned on every call, so the answers keep coming."""
        wanted = []
        if self.only is not Scope.CLUSTER:
            wanted.append(
                Requirement(
                    self.key, API_VERSION, self.namespaced_kind, self.name, namespace=self.namespace
                )
            )
        if self.only is not Scope.NAMESPACE:
            wanted.append(Requirement(self._cluster_key, API_VERSION, self.cluster_kind, self.name))
        return wanted

    def resolve(self, required: Mapping[str, tuple[Manifest, ...]]) -> Resolution:
        """Resolve from what Crossplane fetched; a namespaced match wins."""
        if self.only is Scope.NAMESPACE:
            return _one(required.get(self.key), self.namespaced_kind, Scope.NAMESPACE)
        if self.only is Scope.CLUSTER:
            return _one(required.get(self._cluster_key), self.cluster_kind, Scope.CLUSTER)
        namespaced = required.get(self.key)
        if namespaced:  # it wins, whatever the cluster-scoped answer is (or is not yet)
            return Found(namespaced[0], self.namespaced_kind, Scope.NAMESPACE)
        if namespaced is None:
            return Pending()
        return _one(required.get(self._cluster_key), self.cluster_kind, Scope.CLUSTER)

    def fetch(
        self, required: Mapping[str, tuple[Manifest, ...]]
    ) -> tuple[Manifest | None, Manifest | None] | None:
        """Both candidates (each None when absent), or None until Crossplane fetched both."""
        namespaced = required.get(self.key)
        cluster = required.get(self._cluster_key)
        if namespaced is None or cluster is None:
            return None
        return (namespaced[0] if namespaced else None, cluster[0] if cluster else None)


def _one(fetched: tuple[Manifest, ...] | None, kind: Kind, scope: Scope) -> Resolution:
    if fetched is None:
        return Pending()
    return Found(fetched[0], kind, scope) if fetched else Absent()


@dataclass(frozen=True)
class Listing:
    """Every object of one kind: in a namespace, or cluster-wide for a cluster-scoped kind."""

    key: str
    kind: Kind
    namespace: str | None = None

    def requirement(self) -> Requirement:
        """What to ask Crossplane for (no name: Crossplane lists the kind)."""
        return Requirement(self.key, API_VERSION, self.kind, namespace=self.namespace)

    def items(self, required: Mapping[str, tuple[Manifest, ...]]) -> tuple[Manifest, ...] | None:
        """The listed objects, or None when Crossplane has not listed them yet."""
        return required.get(self.key)

    def items_where(
        self, required: Mapping[str, tuple[Manifest, ...]], path: FieldPath, value: str
    ) -> tuple[Manifest, ...] | None:
        """The listed objects whose string field at `path` is `value`; None as for `items`."""
        return required_where(required, self.key, path, value)


@dataclass(frozen=True)
class Resolved(Generic[SpecT, StatusT, HeadlineT]):
    """An AIM object a reference resolved to, with its spec and status parsed once.

    Build one with `resolved`, which parses the status.
    """

    manifest: Manifest
    kind: Kind
    scope: Scope
    spec: SpecT
    status: StatusT
    """Its status as its composer last wrote it; the model's defaults when it has none readable."""
    headline: HeadlineT | None
    """Its `status.status`, None until its composer reported one."""

    @property
    def name(self) -> str:
        """The object's name."""
        return name_of(self.manifest)

    @property
    def labels(self) -> Mapping[str, JsonValue]:
        """The object's labels."""
        return labels_of(self.manifest)

    def reference(self) -> ResolvedReference:
        """How status records it."""
        meta = metadata_of(self.manifest)
        uid = meta.get("uid")
        namespace = meta.get("namespace")
        return ResolvedReference(
            name=self.name,
            namespace=namespace if isinstance(namespace, str) else None,
            scope=self.scope,
            kind=self.kind,
            uid=uid if isinstance(uid, str) else None,
        )


def resolved(  # noqa: PLR0913 - the object, where it was found, and the three types it parses to
    manifest: Manifest,
    kind: Kind,
    scope: Scope,
    spec: SpecT,
    *,
    status: type[StatusT],
    headline: type[HeadlineT],
) -> Resolved[SpecT, StatusT, HeadlineT]:
    """`manifest`, whose spec parsed as `spec`, with its status parsed as `status`/`headline`."""
    return Resolved(
        manifest,
        kind,
        scope,
        spec,
        parse_status(manifest, status) or status(),
        parse_headline(manifest, headline),
    )
