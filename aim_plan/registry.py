"""The registries a plan reads: the function's own client, or none (`--offline`).

The function asks a registry in two places: a model's image inspection (its labels, unless
`spec.imageMetadata` gives them) and a model source's listing. By default a plan asks as the
function does in a cluster, with `OrasInspector` and `OrasLister` (bounded, time-limited, the
credentials of the pull secrets the function found, oras reading no credential file of its own).

Offline (`--offline`, or no oras to run), every question gets the failure the function reports
for a registry it cannot reach, in words that say why and what to do instead, so the model or
source shows exactly the condition it would show in a cluster that cannot reach the registry.

One `aim plan` run asks each question once (`Answers`): a model re-reconciled every round, and
the baseline and the change of `--against`, get the same answer without asking again. Each plan
records what it asked and what was answered (`Asked`), for the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from function.registry.inspect import (
    FailureKind,
    InspectionOutcome,
    InspectionRequest,
    Inspector,
    RegistryFailure,
)
from function.registry.listing import (
    MAX_SYNC_TAGS,
    Lister,
    ListingAnswer,
    ListingRequest,
    QueryAnswer,
)
from function.registry.oras import DEFAULT_TIMEOUT_S, OrasInspector
from function.registry.oras_listing import DEFAULT_TIMEOUT_S as DEFAULT_LISTING_TIMEOUT_S
from function.registry.oras_listing import OrasLister

NOT_READ: Final = (
    "not read: aim plan --offline reads no registry; set spec.imageMetadata, or drop --offline"
)
NOT_LISTED: Final = (
    "not listed: aim plan --offline reads no registry; list the images as AIMClusterModels "
    "instead, or drop --offline"
)
NO_ORAS_READ: Final = (
    "not read: aim plan found no oras to read registries with; install oras or pass --oras PATH, "
    "or set spec.imageMetadata"
)
NO_ORAS_LISTED: Final = (
    "not listed: aim plan found no oras to read registries with; install oras or pass --oras "
    "PATH, or list the images as AIMClusterModels instead"
)
NO_ORAS_NOTE: Final = (
    "no oras on PATH: planned offline, no registry read; install oras (https://oras.land) or "
    "pass --oras PATH to read registries as the function does, or pass --offline to silence "
    "this note"
)


@dataclass(frozen=True)
class OfflineRegistry:
    """Inspector and Lister in one, answering every question with RegistryUnreachable."""

    not_read: str = NOT_READ
    """The message of an inspection: why nothing was read and what to do instead."""
    not_listed: str = NOT_LISTED
    """The message of each query of a listing."""

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """The failure the function reports for a registry it cannot reach."""
        return RegistryFailure(request.image, FailureKind.UNREACHABLE, self.not_read)

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Each query answered as unreachable."""
        return ListingAnswer(
            request.source,
            tuple(
                QueryAnswer(q, failure=FailureKind.UNREACHABLE, message=self.not_listed)
                for q in request.queries
            ),
        )


@dataclass
class Answers:
    """One run's registry: each question (with its credential) asked of the client once.

    The plan reconciles one XR at a time, so no two identical questions are in flight together;
    a question is answered from here from its second asking on, whatever the answer was (a
    failure too: a registry that timed out is not waited for again in the same run).
    """

    inspector: Inspector
    lister: Lister
    inspections: dict[InspectionRequest, InspectionOutcome] = field(default_factory=dict)
    listings: dict[ListingRequest, ListingAnswer] = field(default_factory=dict)

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """The image's inspection, asked of the registry the first time only."""
        if request not in self.inspections:
            self.inspections[request] = await self.inspector.inspect(request)
        return self.inspections[request]

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """The source's listing, asked of the registries the first time only."""
        if request not in self.listings:
            self.listings[request] = await self.lister.list_images(request)
        return self.listings[request]


def offline_answers(*, no_oras: bool = False) -> Answers:
    """Answers that read no registry: `--offline`, or (`no_oras`) no oras binary found."""
    registry = OfflineRegistry(NO_ORAS_READ, NO_ORAS_LISTED) if no_oras else OfflineRegistry()
    return Answers(registry, registry)


def oras_answers(  # noqa: PLR0913 - the function's registry flags, one by one
    path: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    insecure: frozenset[str] = frozenset(),
    mirrors: Mapping[str, str] | None = None,
    listing_timeout_s: float = DEFAULT_LISTING_TIMEOUT_S,
    listing_max_tags: int = MAX_SYNC_TAGS,
) -> Answers:
    """Answers read with the function's production client, the oras binary at `path`.

    `timeout_s` bounds one image inspection; `listing_timeout_s` and `listing_max_tags` one
    model source's sync, as the function's --registry-listing-* flags do.
    """
    inspector = OrasInspector(
        oras=path, timeout_s=timeout_s, insecure=insecure, mirrors=dict(mirrors or {})
    )
    lister = OrasLister(inspector, timeout_s=listing_timeout_s, max_tags=listing_max_tags)
    return Answers(inspector, lister)


@dataclass
class Asked:
    """What one plan asked the registries and what they answered, through a run's `Answers`."""

    answers: Answers = field(default_factory=offline_answers)
    images: dict[InspectionRequest, InspectionOutcome] = field(default_factory=dict)
    sources: dict[ListingRequest, ListingAnswer] = field(default_factory=dict)

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """The run's answer, recorded for this plan."""
        self.images[request] = await self.answers.inspect(request)
        return self.images[request]

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """The run's answer, recorded for this plan."""
        self.sources[request] = await self.answers.list_images(request)
        return self.sources[request]
