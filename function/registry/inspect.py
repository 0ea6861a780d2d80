"""What an image inspection is asked for and what it answers, and the `Inspector` interface."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final, Protocol

from function.registry.credentials import Credential
from function.registry.reference import ImageReference

MAX_ENTRYPOINT_ARGS: Final = 16
MAX_ENTRYPOINT_ARG: Final = 1024
"""An entrypoint beyond these is no image's: it counts as unknown (discovery uses the default)."""


@dataclass(frozen=True)
class InspectionRequest:
    """Inspect `image` (as the user wrote it), parsed, with the credential for its registry."""

    image: str
    reference: ImageReference
    credential: Credential | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Inspection:
    """An image's config as its registry serves it, and the digest `image` resolved to."""

    image: str
    digest: str
    labels: Mapping[str, str]
    entrypoint: tuple[str, ...] = ()


class FailureKind(StrEnum):
    """Why a registry did not answer, as a condition reason."""

    UNAUTHORIZED = "RegistryUnauthorized"
    NOT_FOUND = "ImageNotFound"
    TIMEOUT = "RegistryTimeout"
    UNREACHABLE = "RegistryUnreachable"
    RATE_LIMITED = "RegistryRateLimited"
    ERROR = "RegistryError"


@dataclass(frozen=True)
class RegistryFailure:
    """The registry refused or failed; `message` is its own words (never a credential)."""

    image: str
    kind: FailureKind
    message: str


InspectionOutcome = Inspection | RegistryFailure


class Inspector(Protocol):
    """Reads an image's config from its registry. Must not block the event loop; must time out."""

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """Inspect one image; registry problems are returned, not raised."""
        ...
