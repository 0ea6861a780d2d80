"""What a composer reports for the function's metrics to count (`Composition.counted`).

Composing happens in worker processes; the server, which holds the metrics, learns of these with
the call's response. The composer that knows an event happened reports it, so the server reads no
composer's internals (which resource is a discovery Job, which condition ends a selection).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TemplateSelected:
    """A service's template resolution ended with this reason of its TemplateReady condition."""

    reason: str


@dataclass(frozen=True)
class DiscoveryStarted:
    """A template composed a discovery Job that did not exist yet (a first attempt or a retry)."""


Counted = TemplateSelected | DiscoveryStarted
