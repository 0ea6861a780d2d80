"""How this function instance is configured (command-line flags), as composers see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

DEFAULT_SYSTEM_NAMESPACE: Final = "aim-system"
DEFAULT_ENTRYPOINT: Final = ("aim-runtime",)
DEFAULT_WAITING_RECHECK_S: Final = 10
DEFAULT_READY_RECHECK_S: Final = 60


@dataclass(frozen=True)
class Settings:
    """Site-wide choices that are not part of any AIM object.

    `system_namespace` holds the work of cluster-scoped objects (discovery Jobs of cluster
    templates, pull secrets of cluster models). `discovery_entrypoint` is the AIM image's
    entrypoint, used only for images whose own entrypoint was never read from their registry.
    `waiting_recheck_s` is how soon an object that is not ready is composed again: Crossplane
    2.3 does not watch the objects a composer looks up (a service's model), only those it
    composes, so without it a service would notice its model turning Ready a minute late.
    `ready_recheck_s` is the same for objects that are ready (the SDK's one minute by default).
    """

    system_namespace: str = DEFAULT_SYSTEM_NAMESPACE
    discovery_entrypoint: tuple[str, ...] = DEFAULT_ENTRYPOINT
    waiting_recheck_s: int = DEFAULT_WAITING_RECHECK_S
    ready_recheck_s: int = DEFAULT_READY_RECHECK_S
