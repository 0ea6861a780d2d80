"""One registry question and its answer: what a composer asks between two steps of one call.

A model asks for its image's labels (an inspection), a model source for repositories and tags
(a listing). Composers cannot call out (they run with a time budget, off the event loop), so the
question travels out with the composer's result, `fn.py` asks the registry, and the answer comes
back in with the call composed again. `Registry` is the one place that tells the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from function.registry.inspect import InspectionOutcome, InspectionRequest, Inspector
from function.registry.listing import Lister, ListingAnswer, ListingRequest

Question = InspectionRequest | ListingRequest
"""What a composer asks a registry."""
Answer = InspectionOutcome | ListingAnswer
"""What the registry answered; its failures are answers too, never exceptions."""


@dataclass(frozen=True)
class Registry:
    """Answers questions: inspections with `inspector`, listings with `lister`."""

    inspector: Inspector
    lister: Lister

    @overload
    async def ask(self, question: InspectionRequest) -> InspectionOutcome: ...
    @overload
    async def ask(self, question: ListingRequest) -> ListingAnswer: ...
    async def ask(self, question: Question) -> Answer:
        """The registry's answer to `question`."""
        if isinstance(question, InspectionRequest):
            return await self.inspector.inspect(question)
        return await self.lister.list_images(question)
