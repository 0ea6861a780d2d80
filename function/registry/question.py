"""One registry question and its answer: what a composer asks between two steps of one call.

A model asks for its image's labels (an inspection), a model source for repositories and tags
(a listing). Composers cannot call out (they run with a time budget, off the event loop), so the
question travels out with the composer's result, `fn.py` asks the registry, and the answer comes
back in with the call composed again (`Observed.answered` puts it where the composer reads it).
"""

from __future__ import annotations

from function.registry.inspect import InspectionOutcome, InspectionRequest
from function.registry.listing import ListingAnswer, ListingRequest

Question = InspectionRequest | ListingRequest
"""What a composer asks a registry."""
Answer = InspectionOutcome | ListingAnswer
"""What the registry answered; its failures are answers too, never exceptions."""
