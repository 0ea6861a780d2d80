"""How soon Crossplane composes an object again when its composer chose no time of its own.

A settled object is rechecked every `ready_recheck_s`. One that waits starts at
`waiting_recheck_s` and backs off as its wait grows: the recheck is a quarter of how long it
has waited, up to `BACKOFF_CAP` rechecks, and never past the settled one. A wait that ends is
then noticed at most a quarter later than it would have been (and at most a minute, with the
default flags), while a fleet that waits long costs Crossplane one reconcile a minute per
object instead of six: measured with thousands of services waiting for KServe, the 10-second
rechecks were most of what core did, each reconcile three applies that changed nothing, and
they slowed the watch-driven reconciles that end the waits (docs/development.md).

Crossplane watches what it composes (and, from 2.4, what a composer looks up), so a watch ends
most waits at once and the recheck is a safety net; on 2.3 a service waiting for its model or
template notices it at the next recheck, hence the cap.

The wait is read from the object's `Ready` condition, which Crossplane core owns and turns False
(with its transition time) when the object stops being ready. A missing or unreadable time, or
one after this call, counts as a wait that just began.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from function.kube.contract import Observed
from function.kube.views import condition_of
from function.rules.discovery import timestamp
from function.settings import Settings

BACKOFF_SHARE: Final = 4
"""The recheck is the wait so far divided by this."""
BACKOFF_CAP: Final = 6
"""A waiting object is rechecked at least every this many `waiting_recheck_s`."""


def recheck_after(observed: Observed, settings: Settings, *, ready: bool | None) -> int:
    """Seconds until the object is composed again: settled, waiting, or without a headline."""
    if ready is not False:
        # Kinds without a headline (runtime configs) wait for nothing.
        return settings.ready_recheck_s
    first = settings.waiting_recheck_s
    cap = max(first, min(settings.ready_recheck_s, BACKOFF_CAP * first))
    since = _unready_since(observed)
    if since is None:
        return first
    waited = (observed.now - since).total_seconds()
    return int(min(cap, max(first, waited // BACKOFF_SHARE)))


def _unready_since(observed: Observed) -> datetime | None:
    ready = condition_of(observed.composite, "Ready")
    if ready is None or not ready.is_false:
        return None
    since = timestamp(ready.last_transition_time)
    return since if since is not None and since <= observed.now else None
