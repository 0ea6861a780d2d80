"""How this function instance is configured (command-line flags), as composers see it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

DEFAULT_SYSTEM_NAMESPACE: Final = "aim-system"
DEFAULT_ENTRYPOINT: Final = ("aim-runtime",)
DEFAULT_WAITING_RECHECK_S: Final = 10
DEFAULT_READY_RECHECK_S: Final = 600
DEFAULT_DOWNLOAD_STALL_S: Final = 600
DEFAULT_WARNING_REPEAT_S: Final = 600
DEFAULT_EVENTS_PER_MINUTE: Final = 20
DEFAULT_EVENT_MEMORY: Final = 100_000


@dataclass(frozen=True)
class Settings:
    """Site-wide choices that are not part of any AIM object.

    `system_namespace` holds the work of cluster-scoped objects (discovery Jobs of cluster
    templates, pull secrets of cluster models). `discovery_entrypoint` is the AIM image's
    entrypoint, used only for images whose own entrypoint was never read from their registry.
    `waiting_recheck_s` is how soon an object that is not ready is first composed again (a long
    wait backs off from it: function/server/recheck.py), and
    `ready_recheck_s` how soon a ready one is (docs/catalog.md#how-often-objects-are-composed):
    Crossplane 2.4 watches what a composer looks up, so these are a safety net there, but 2.3
    watches only what it composes, and there a service notices its model turning Ready only
    at the next recheck. Settled objects are the many, so theirs is long.
    `download_stall_s` is how long a model cache's download may go without writing a byte
    before its attempt is stopped (and the Job's next one starts).
    `warning_repeat_s` is how soon the same warning is sent to the same XR again,
    `events_per_minute` how many events one XR may be sent in a minute, and `event_memory` how
    many XRs the server remembers what it told (0: none, every call tells all, as `crossplane
    render` expects): the server's, not the composers' (function/server/told.py). Kubernetes
    keeps events an hour, so a warning repeated every 10 minutes stays listed while it lasts.
    """

    system_namespace: str = DEFAULT_SYSTEM_NAMESPACE
    discovery_entrypoint: tuple[str, ...] = DEFAULT_ENTRYPOINT
    waiting_recheck_s: int = DEFAULT_WAITING_RECHECK_S
    ready_recheck_s: int = DEFAULT_READY_RECHECK_S
    download_stall_s: int = DEFAULT_DOWNLOAD_STALL_S
    warning_repeat_s: int = DEFAULT_WARNING_REPEAT_S
    events_per_minute: int = DEFAULT_EVENTS_PER_MINUTE
    event_memory: int = DEFAULT_EVENT_MEMORY
