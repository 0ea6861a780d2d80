"""The scale benchmark's readings: what it counts as a write, and when a line counts as before
Running. Its smoke run (test_smoke.py) proves it runs; these prove its figures mean what its
report says, since nothing else checks a benchmark's arithmetic."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.scale import (
    _COMPOSED,
    _RECONCILING,
    Requests,
    log_times,
    since,
    split,
    write_requests,
)
from devtools.cluster.kube import Response
from tests.cases import Case, table


def sample(verb: str, resource: str, subresource: str, code: str, value: str) -> str:
    """One line of the API server's counter, with the labels it carries (some left out)."""
    return (
        f'apiserver_request_total{{code="{code}",component="apiserver",dry_run="",'
        f'resource="{resource}",scope="resource",subresource="{subresource}",verb="{verb}"}} '
        f"{value}"
    )


METRICS = "\n".join(
    [
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests.",
        "# TYPE apiserver_request_total counter",
        sample("APPLY", "aimservices", "status", "200", "12"),
        sample("PUT", "aimservices", "status", "200", "3"),
        sample("PUT", "aimservices", "status", "409", "5"),
        sample("POST", "events", "", "201", "4"),
        sample("PUT", "leases", "", "200", "900"),
        sample("PATCH", "inferenceservices", "status", "200", "7"),
        sample("LIST", "aimservices", "", "200", "40"),
        sample("APPLY", "inferenceservices", "", "201", "2.0"),
        'apiserver_request_duration_seconds_count{resource="aimservices",verb="PUT"} 99',
    ]
)


@dataclass
class MetricsOnly:
    """A Kube that answers /metrics only, as the API server's text exposition."""

    text: str

    def request(self, method: str, path: str, **_: Any) -> Response:
        assert (method, path) == ("GET", "/metrics")
        return Response({"message": self.text})


def test_writes_are_the_platforms_successful_write_requests_by_verb_and_resource() -> None:
    """Reads and lists are no writes; a refused PUT (409) changed nothing; leases are every
    component's heartbeat and the InferenceService status is the KServe stand-in's, so neither is
    the platform's doing; a subresource is named with its resource."""
    kube: Any = MetricsOnly(METRICS)  # stands in for devtools.cluster.kube.Kube
    assert write_requests(kube) == Counter(
        {
            ("APPLY", "aimservices/status"): 12,
            ("PUT", "aimservices/status"): 3,
            ("POST", "events"): 4,
            ("APPLY", "inferenceservices"): 2,
        }
    )


def test_writes_between_two_readings_leave_out_what_did_not_grow() -> None:
    """A batch's writes are the difference of two readings; a series that did not move is no
    row of the report."""
    then: Requests = Counter({("APPLY", "aimservices"): 10, ("POST", "events"): 3})
    now: Requests = Counter(
        {("APPLY", "aimservices"): 25, ("POST", "events"): 3, ("PUT", "aimservices"): 2}
    )
    assert since(now, then) == Counter({("APPLY", "aimservices"): 15, ("PUT", "aimservices"): 2})


@dataclass(frozen=True)
class SplitCase(Case):
    stamps: tuple[float, ...]
    running: float | None
    expected: tuple[int, int]


SPLITS = [
    SplitCase(
        "same-second",
        "core stamps whole seconds: a reconcile in the second the service turned Running may "
        "have been the one that made it so, so it counts before",
        (100.0, 101.0),
        100.4,
        (2, 0),
    ),
    SplitCase(
        "after", "a reconcile a second later is after Running", (100.0, 102.0), 100.4, (1, 1)
    ),
    SplitCase(
        "never-running",
        "a service never seen Running has every reconcile before (it is still converging)",
        (100.0, 200.0),
        None,
        (2, 0),
    ),
]


@table(SPLITS)
def test_a_line_counts_before_or_after_the_service_turned_running(case: SplitCase) -> None:
    """Reconciles and calls are split at each service's own Running."""
    assert split({"team-0/svc-0": list(case.stamps)}, lambda _: case.running) == case.expected


def test_log_lines_are_read_with_their_time_and_service(tmp_path: Path) -> None:
    """Core's and the function's log lines, as they are written (the function's in colour),
    give the service and the time; another kind's or another service's lines do not count."""
    core = tmp_path / "crossplane.log"
    core.write_text(
        '2026-11-26T03:46:47Z\tDEBUG\tcrossplane\tReconciling\t{"controller": '
        '"composite/aimservices.aim.silogen.ai", "request": '
        '{"name":"svc-7","namespace":"team-7"}}\n'
        '2026-11-26T03:46:48Z\tDEBUG\tcrossplane\tReconciling\t{"controller": '
        '"composite/aimmodels.aim.silogen.ai", "request": '
        '{"name":"svc-7","namespace":"team-7"}}\n'
    )
    fn = tmp_path / "function-aim.log"
    fn.write_text(
        "\x1b[2m2026-11-26T03:46:48.074532Z\x1b[0m [\x1b[32m\x1b[1mdebug    \x1b[0m] "
        "\x1b[1mcomposed                      \x1b[0m "
        "\x1b[36mkind\x1b[0m=\x1b[35mAIMService\x1b[0m "
        "\x1b[36mxr\x1b[0m=\x1b[35mteam-7/svc-7\x1b[0m\n"
        "2026-11-26T03:46:49.000000Z [debug    ] composed kind=AIMService xr=team-7/svc-8\n"
    )
    names = {"team-7/svc-7"}
    assert log_times(core, _RECONCILING, names) == {"team-7/svc-7": [1795664807.0]}
    assert log_times(fn, _COMPOSED, names) == {"team-7/svc-7": [1795664808.074532]}
