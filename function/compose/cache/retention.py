"""How long a template cache a service made is kept once no service relies on it.

Relying is read off the namespace's services (`status.templateCache`). A cache nobody relies on
counts down the runtime config's `caching.retention` (`status.unusedSince`,
`status.retainedUntil`, the `Retained` condition); past that it gives up its model caches, and so
their PVCs and the weights in them. A service relying on it again, before or after, stops the
clock; after, the downloads start anew.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from function.api.cache import TemplateCacheStatus
from function.api.meta import Kind
from function.api.runtimeconfig import DEFAULT_CACHE_RETENTION
from function.compose.cache.usage import relied_on
from function.kube.contract import Composition, Observed
from function.kube.lookup import Listing
from function.kube.objects import labels_of, name_of
from function.kube.parse import parse_status
from function.rules import caching, labels
from function.rules.discovery import rfc3339, timestamp
from function.rules.durations import duration_seconds
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import Condition, ConditionStatus, ConditionType, Health, Reason

_SERVICES: Final = "services"
_USERS_SHOWN: Final = 5


@dataclass(frozen=True)
class Kept:
    """Where a service-made cache stands in its retention (nothing for any other cache)."""

    unused_since: str | None = None
    retained_until: str | None = None
    expired: bool = False
    conditions: tuple[Condition, ...] = ()
    health: Health | None = None
    seconds_left: int | None = None
    """Until the cache gives up its model caches, while it counts down."""


def retention(
    observed: Observed, comp: Composition, config: RuntimeConfig | None, *, config_waiting: bool
) -> Kept:
    """Whether a service still relies on this cache, and if not, how long it is kept.

    Relying is read off the namespace's services (`status.templateCache`), so a service that
    waits for the downloads counts as much as one whose InferenceService mounts the PVCs. While
    the services or the runtime config are not fetched yet the status stays as it was: a cache
    is never given up on a call that did not look.
    """
    if labels.SERVICE not in labels_of(observed.composite):
        return Kept()
    listing = Listing(_SERVICES, Kind.SERVICE, observed.namespace)
    comp.requirements.append(listing.requirement())
    previous = parse_status(observed.composite, TemplateCacheStatus) or TemplateCacheStatus()
    services = listing.items(observed.required)
    if services is None or config_waiting:
        return Kept(previous.unused_since, previous.retained_until)
    users = sorted(name_of(s) for s in services if relied_on(s) == observed.name)
    if users:
        return _in_use(users)
    return _unused(observed, previous, config)


def _in_use(users: list[str]) -> Kept:
    """A cache some service relies on: kept, saying by whom."""
    return Kept(
        conditions=(
            Condition(
                ConditionType.RETAINED,
                ConditionStatus.FALSE,
                Reason.CACHE_IN_USE,
                f"used by AIMService {', '.join(users[:_USERS_SHOWN])}"
                + (f" and {len(users) - _USERS_SHOWN} more" if len(users) > _USERS_SHOWN else ""),
            ),
        )
    )


def _retention_of(config: RuntimeConfig | None) -> tuple[str, float]:
    """The runtime config's `caching.retention`, as written and in seconds (the default if bad)."""
    caching_config = config.spec.caching if config else None
    text = (caching_config.retention if caching_config else None) or DEFAULT_CACHE_RETENTION
    seconds = duration_seconds(text)
    if seconds is None:
        text = DEFAULT_CACHE_RETENTION
        seconds = duration_seconds(text) or 0.0
    return text, seconds


def _unused(
    observed: Observed, previous: TemplateCacheStatus, config: RuntimeConfig | None
) -> Kept:
    """A cache no service relies on: counting down its retention, or past it."""
    text, seconds = _retention_of(config)
    now = observed.now
    since = timestamp(previous.unused_since) if previous.unused_since else None
    ended = timestamp(previous.retained_until) if previous.retained_until else None
    if since is not None and ended is not None and ended <= now:
        # Expired stays expired until a service relies on it again: a longer retention set
        # later does not bring the model caches back to download with nobody to use them.
        ret = caching.Retention(since, ended)
    else:
        ret = caching.retention(since, now=now, keep_for_s=seconds)
    config_name = config.ref.name if config and config.ref else "none"
    unused, until = rfc3339(ret.unused_since), rfc3339(ret.until)
    if not ret.expired(now):
        return Kept(
            unused,
            until,
            seconds_left=ret.seconds_left(now),
            conditions=(
                Condition(
                    ConditionType.RETAINED,
                    ConditionStatus.TRUE,
                    Reason.CACHE_UNUSED,
                    f"no AIMService uses this cache since {unused}; its model caches and their "
                    f"PVCs are deleted at {until} (caching.retention {text} of runtime config "
                    f"{config_name!r}) unless a service relies on it again",
                ),
            ),
        )
    message = (
        f"no AIMService used this cache from {unused} to {until} (caching.retention {text}); "
        "its model caches and their PVCs were deleted, and a service that uses it again "
        "downloads the weights anew"
    )
    return Kept(
        unused,
        until,
        expired=True,
        conditions=(
            Condition(
                ConditionType.RETAINED, ConditionStatus.FALSE, Reason.RETENTION_EXPIRED, message
            ),
        ),
        health=ConditionType.CACHE_READY.pending(Reason.RETENTION_EXPIRED, message),
    )
