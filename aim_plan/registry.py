"""The registry a plan talks to: none, yet; every question gets a registry's failure.

Each answer is the function's own for a registry it cannot reach, in words that say why and
what to do instead.

The function asks a registry in two places: a model's image inspection (its labels, unless
`spec.imageMetadata` gives them) and a model source's listing. The plan answers both with a
failure, so the model or source shows exactly the condition it would show in a cluster that
cannot reach the registry, carrying this message; the plan counts the questions to say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from function.registry.inspect import (
    FailureKind,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.listing import ListingAnswer, ListingRequest, QueryAnswer

NOT_READ: Final = "not read: aim plan reads no registry yet; set spec.imageMetadata"
NOT_LISTED: Final = (
    "not listed: aim plan reads no registry yet; list the images as AIMClusterModels instead"
)


@dataclass
class OfflineRegistry:
    """Inspector and Lister in one, answering every question with RegistryUnreachable."""

    images: set[str] = field(default_factory=set)
    """Every image the function asked to inspect."""
    sources: set[str] = field(default_factory=set)
    """Every model source that asked for a listing."""

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """The failure the function reports for a registry it cannot reach."""
        self.images.add(request.image)
        return RegistryFailure(request.image, FailureKind.UNREACHABLE, NOT_READ)

    async def list_images(self, request: ListingRequest) -> ListingAnswer:
        """Each query answered as unreachable."""
        self.sources.add(request.source)
        return ListingAnswer(
            request.source,
            tuple(
                QueryAnswer(q, failure=FailureKind.UNREACHABLE, message=NOT_LISTED)
                for q in request.queries
            ),
        )
