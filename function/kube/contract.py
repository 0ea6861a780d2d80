"""What a composer is given and what it answers: the contract between the server and composers.

`Observed` is one call's view of the world; a composer answers a `Composition` (or asks for a
registry's answer first with an `AskRegistry`: `Inspect` or `ListRegistry`). Plain dataclasses,
no protobuf: `function.kube.wire` converts both ways, so composers are trivially testable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import JsonValue

from function.api.meta import Manifest
from function.kube.counted import Counted
from function.registry.inspect import InspectionOutcome, InspectionRequest
from function.registry.listing import ListingAnswer, ListingRequest
from function.registry.question import Answer, Question
from function.rules.status import Condition
from function.settings import Settings


@dataclass(frozen=True)
class Observed:
    """What Crossplane tells a composer about the world on this call.

    `required` holds only the requirements Crossplane has resolved: a name that is absent was not
    fetched yet, a name mapped to `()` was fetched and matched nothing. The two must never be
    confused (the first means "wait", the second can mean "the user named something missing").
    """

    composite: Manifest
    resources: Mapping[str, Manifest] = field(default_factory=dict)
    required: Mapping[str, tuple[Manifest, ...]] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    """The time of this call: backoff windows are measured against it (tests pin it)."""
    settings: Settings = field(default_factory=Settings)
    inspection: InspectionOutcome | None = None
    """The registry's answer, when `fn.py` inspected an image for this call."""
    listing: ListingAnswer | None = None
    """The registry's repositories and tags, when `fn.py` listed them for this call."""
    claims: bool = False
    """The XR is a claim's composite (the claims flavour): `composite` shows it as the namespaced
    XR it stands for (function/kube/claims.py)."""

    def answered(self, answer: Answer | None) -> Observed:
        """This call with the registry's answer where the composer that asked reads it."""
        if isinstance(answer, ListingAnswer):
            return dataclasses.replace(self, listing=answer)
        return dataclasses.replace(self, inspection=answer)

    @property
    def kind(self) -> str:
        """Kind of the composite resource (XR)."""
        return str(self.composite.get("kind", ""))

    @property
    def metadata(self) -> Mapping[str, JsonValue]:
        """The XR's metadata, empty if absent."""
        meta = self.composite.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        """The XR's name."""
        return str(self.metadata.get("name", ""))

    @property
    def namespace(self) -> str:
        """The XR's namespace; empty for cluster-scoped XRs.

        The server refuses an XR whose namespace contradicts its kind's XRD before any composer
        runs (function/server/call.py `scope_mismatch`), so composers can rely on it. A value that
        is no string (null, a number) counts as none.
        """
        namespace = self.metadata.get("namespace")
        return namespace if isinstance(namespace, str) else ""

    @property
    def generation(self) -> int | None:
        """The XR's metadata.generation: which version of its spec this call composes."""
        generation = self.metadata.get("generation")
        return generation if isinstance(generation, int) else None


@dataclass(frozen=True)
class Notice:
    """An event for a condition that changed (function/kube/transitions.py)."""

    message: str
    warning_reason: str | None = None
    """Set for a condition that warns (`Condition.warn`): a Warning event with this reason."""


@dataclass(frozen=True)
class Requirement:
    """Objects the composer needs Crossplane to fetch: one by name, or every one of a kind.

    With `match_name` unset Crossplane lists every object of the kind (in `namespace`, or in the
    whole cluster for cluster-scoped kinds).
    """

    name: str
    api_version: str
    kind: str
    match_name: str | None = None
    namespace: str | None = None
    match_labels: Mapping[str, str] | None = None


@dataclass(frozen=True)
class AskRegistry:
    """A composer's answer when it needs a registry's answer first (`function.registry.question`).

    The function asks the registry (its only network calls, made outside the composer) and
    calls the composer again with the answer in `Observed.inspection` or `Observed.listing`.
    """

    request: Question


@dataclass(frozen=True)
class Inspect(AskRegistry):
    """Asking for an image's labels (a model's); the answer is `Observed.inspection`."""

    request: InspectionRequest


@dataclass(frozen=True)
class ListRegistry(AskRegistry):
    """Asking for a registry's repositories and tags (a model source's): `Observed.listing`."""

    request: ListingRequest


@dataclass(frozen=True)
class Desired:
    """A composed resource the composer wants to exist, and whether it is ready."""

    manifest: Manifest
    ready: bool


@dataclass
class Composition:
    """Everything one composer call decides. Built up by the composer, applied by `fn.py`."""

    resources: dict[str, Desired] = field(default_factory=dict)
    status: Manifest = field(default_factory=dict)
    """The XR's AIM status as the composer wrote it (`function.compose.frame.finish` writes it)."""
    ready: bool | None = None
    """Whether the XR is Ready: its AIM headline is a ready one. None for kinds without a
    headline (runtime configs), whose readiness Crossplane decides from what they compose."""
    conditions: list[Condition] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Warning events: what failed or degraded. The server sends each at most once per
    `--warning-repeat` per XR (function/server/told.py), not on every call."""
    ttl_seconds: int | None = None
    """Call again after this long (a backoff window ending, nodes to re-check); None: default."""
    propagated_labels: dict[str, str] = field(default_factory=dict)
    """Labels of the XR to add to every composed object (and Jobs' pods) that lacks them."""
    counted: list[Counted] = field(default_factory=list)
    """What the function's metrics count of this call (function/kube/counted.py)."""


def keep(current: Manifest, *, ready: bool) -> Desired:
    """An existing composed object as it is (identity and spec), to keep it from being deleted.

    Dropping an object from the desired state deletes it; composers use this when an object's
    inputs went missing but the object itself must survive until they are back.
    """
    meta = current.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    kept_meta: Manifest = {
        k: meta[k] for k in ("name", "namespace", "labels", "annotations") if k in meta
    }
    manifest: Manifest = {
        "apiVersion": current.get("apiVersion"),
        "kind": current.get("kind"),
        "metadata": kept_meta,
    }
    if "spec" in current:
        manifest["spec"] = current["spec"]
    return Desired(manifest, ready=ready)
