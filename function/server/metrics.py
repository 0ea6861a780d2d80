"""Prometheus metrics of the function, served on `--metrics-address`.

Composing happens in worker processes, which share no memory with the server; so workers count
nothing themselves. Each call's outcome comes back with its response (`call.Composed`: the XR's
kind, how the call ended, and the events worth counting), and the server, one process, records
it here. Names follow Prometheus' conventions: seconds, `_total` counters, a `function_aim_`
prefix.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from function.api.meta import Kind
from function.kube.claims import COMPOSITE_PREFIX
from function.kube.counted import Counted, DiscoveryStarted, TemplateSelected

_KINDS: Final = frozenset({*Kind, *(COMPOSITE_PREFIX + k for k in Kind)})
"""The kinds a call is labelled with; any other (a request's kind is its sender's to choose) is
`other`, so odd requests cannot grow the series without bound."""

# A call composes in about a millisecond and may take up to the budget (10 s by default).
_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The function's metric families, in a registry of their own (tests make several)."""

    def __init__(self) -> None:
        """Create the families, empty."""
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Histogram(
            "function_aim_run_function_seconds",
            "RunFunction calls by the XR's kind (other: none the function composes) and how they "
            "ended (composed; invalid: the XR "
            "cannot be composed as written; refused: a kind or composite the function does not "
            "compose, or an XR of the wrong scope; too-large; error: a bug; timeout; "
            "worker-lost), with the time each took.",
            ["kind", "outcome"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self._inspections = Counter(
            "function_aim_registry_inspections",
            "Model images whose labels were read from their registry, by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        self._listings = Counter(
            "function_aim_registry_listings",
            "Model sources' registry queries (one per filter that lists a registry), by outcome "
            "(ok, the failure's reason, or RegistryTooLarge for each query of a sync given up).",
            ["outcome"],
            registry=self.registry,
        )
        self._selections = Counter(
            "function_aim_template_selections",
            "Services' template resolutions by the reason of their TemplateReady condition.",
            ["reason"],
            registry=self.registry,
        )
        self._suppressed = Counter(
            "function_aim_events_suppressed",
            "Events (results) a call did not send, by reason: told (a transition the XR's copy "
            "still shows as news, told already: a stale copy), repeat (a warning sent within "
            "--warning-repeat), rate (past --events-per-minute for the XR).",
            ["reason"],
            registry=self.registry,
        )
        self._discoveries = Counter(
            "function_aim_discovery_jobs_started",
            "Discovery Jobs composed for templates (first attempts and retries).",
            registry=self.registry,
        )

    def call(self, kind: str, outcome: str, seconds: float, events: Iterable[Counted] = ()) -> None:
        """Record one RunFunction call and the events its composer reported."""
        self._calls.labels(kind if kind in _KINDS else "other", outcome).observe(seconds)
        for event in events:
            match event:
                case TemplateSelected(reason):
                    self._selections.labels(reason).inc()
                case DiscoveryStarted():
                    self._discoveries.inc()

    def inspection(self, outcome: str) -> None:
        """Record one registry inspection, by the type of its outcome."""
        self._inspections.labels(outcome).inc()

    def listing(self, outcome: str) -> None:
        """Record one registry query of a model source's sync, by outcome."""
        self._listings.labels(outcome).inc()

    def suppressed(self, reason: str, count: int = 1) -> None:
        """Record events held back, by reason (function/server/told.py)."""
        self._suppressed.labels(reason).inc(count)

    def serve(self, host: str, port: int) -> None:
        """Serve `/metrics` over plain HTTP on a thread of its own."""
        start_http_server(port, addr=host, registry=self.registry)
