"""The scale benchmark's readings: what it counts as a write, and when a line counts as before
Running. Its smoke run (test_smoke.py) proves it runs; these prove its figures mean what its
report says, since nothing else checks a benchmark's arithmetic."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from benchmarks.floor import replayable
from benchmarks.plane import Etcd, Requests, parse_etcd, served, since, write_requests
from benchmarks.scale import _COMPOSED, _RECONCILING, log_times, within
from devtools.cluster.kube import Response


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


def test_every_request_counts_as_served_whatever_its_outcome() -> None:
    """What the API server had to serve includes reads and refused writes (a 409 still cost it
    a request), and still leaves out heartbeats and the stand-in's status writes."""
    kube: Any = MetricsOnly(METRICS)
    assert served(kube).all == Counter(
        {
            ("APPLY", "aimservices/status"): 12,
            ("PUT", "aimservices/status"): 8,
            ("POST", "events"): 4,
            ("LIST", "aimservices"): 40,
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


def test_a_window_counts_the_seconds_core_stamped_inside_it() -> None:
    """The rest window's reconciles and calls: core stamps whole seconds, so a window's bounds
    are widened to whole seconds rather than a line in its first second being lost."""
    stamps = {"team-0/svc-0": [99.0, 100.0, 130.5, 160.0], "team-0/svc-1": [159.9]}
    assert within(stamps, 100.4, 159.2) == 3  # 100 (its second), 130.5, 159.9


def test_etcd_readings_come_from_its_own_counters() -> None:
    """Revisions are etcd's count of writes that changed something: read from its metrics, the
    gauge named, not a neighbouring counter of a similar name."""
    text = (
        "etcd_debugging_mvcc_current_revision 4242\n"
        "etcd_debugging_mvcc_compact_revision 1000\n"
        "etcd_mvcc_db_total_size_in_bytes 1.048576e+06\n"
        "etcd_mvcc_db_total_size_in_use_in_bytes 524288\n"
    )
    assert parse_etcd(text) == Etcd(revision=4242, db_bytes=1 << 20)


def test_the_floor_replays_no_logic() -> None:
    """What the floor replays is the objects, status, conditions and readiness alone: a
    recording that kept requirements, events, a recheck or a precondition would make core spend
    what the floor exists to leave out."""
    rsp = fnv1.RunFunctionResponse()
    rsp.desired.composite.resource.update(
        {"metadata": {"resourceVersion": "9"}, "status": {"status": "Running"}}
    )
    rsp.desired.composite.ready = fnv1.READY_TRUE
    rsp.desired.resources["isvc"].resource.update({"kind": "InferenceService"})
    rsp.conditions.add(type="ModelReady", status=fnv1.STATUS_CONDITION_TRUE, reason="Ready")
    rsp.results.add(severity=fnv1.SEVERITY_NORMAL, message="ModelReady is True")
    rsp.requirements.resources["model"].api_version = "aim.silogen.ai/v1alpha1"
    rsp.meta.ttl.FromSeconds(600)
    out = replayable(rsp)
    assert dict(out.desired.composite.resource) == {
        "status": rsp.desired.composite.resource["status"]
    }
    assert out.desired.composite.ready == fnv1.READY_TRUE
    assert list(out.desired.resources) == ["isvc"]
    assert [c.type for c in out.conditions] == ["ModelReady"]
    assert not out.results
    assert not out.requirements.resources
    assert not out.meta.HasField("ttl")
