"""Readers of what other controllers write: a wrong type reads as absent, a huge string is cut.

Pods, Jobs, PersistentVolumeClaims, InferenceServices, HTTPRoutes and HorizontalPodAutoscalers
are written by the kubelet, KServe, a Gateway or the HPA controller, and by anyone with write
access to their status. Each reader below is given every hostile shape where it expects a string
or a count, and must answer what it answers when the field is absent, never raise. A huge string
where a string belongs must be read cut to the reader's bound: the row sees the cut in the
answer, or, where the answer cannot show it (a huge reason is no known reason, cut or not), in
what the reader read the field as. A reader is a row of `READERS`; the shapes are `SHAPES`; the
table is every pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from function.compose.cache.progress import read as read_report
from function.compose.service.route_status import route_health
from function.kube.jobs import (
    JobState,
    attempt,
    job_state,
    pod_message,
    terminated_message,
    waiting_problem,
)
from function.kube.objects import aim_status, controller_uid, labels_of, name_of, uid_of
from function.kube.views import (
    autoscaler_status,
    condition_of,
    conditions,
    gateway_listeners,
    phase_of,
    route_parents,
)
from function.rules.containers import MAX_TERMINATION_MESSAGE, container_statuses
from function.rules.pods import MAX_QUOTE, pods_health
from function.rules.text import MAX_MESSAGE, MAX_WORD
from tests.cases import Case, table

ABSENT: Final = object()
"""Where a shape goes, this leaves the field out: what every hostile shape must read as."""
HUGE: Final = "A" * 10_000_000


@dataclass(frozen=True)
class Shape(Case):
    """A value no controller should write where a string or a count belongs."""

    value: Any = field(repr=False)


SHAPES = [
    Shape("mapping", "an object where a string belongs: unhashable (the waiting.reason CI found)",
          {"ImagePullBackOff": True}),
    Shape("list", "a list: unhashable too, and iterable", ["ImagePullBackOff"]),
    Shape("number", "a number, which no string comparison matches", 7),
    Shape("float", "a float, which is not a count either", 1e308),
    Shape("null", "null, as a patch that clears the field leaves it", None),
    Shape("bool", "a bool, which Python counts as the int 1", value=True),
    Shape("huge", "a 10 MB string: read cut to its bound, never quoted whole", HUGE),
]  # fmt: skip


# Shapes of the type a field has: not hostile there.
OBJECT: Final = frozenset({"mapping"})
LIST: Final = frozenset({"list"})
COUNT: Final = frozenset({"number"})
BOUNDED_BY_THE_API_SERVER: Final = frozenset({"huge"})


@dataclass(frozen=True)
class Reader:
    """One reader: the object it reads with `value` at one place, and what it answers."""

    id: str
    reason: str
    read: Callable[[Any], Any]
    """Reads the object built with `value` at the place (`ABSENT`: the field left out)."""
    limit: int | None = None
    """A string field: a huge one is kept as this many of its characters, no more."""
    kept: Callable[[Any], Any] | None = None
    """Where `read` answers a huge string as it answers none, what it read the field as: a row
    that looked only at the answer would pass without any bound."""
    valid: frozenset[str] = frozenset()
    """Shapes of the type the field has (a count for a count): not hostile there, left out."""


def _put(**fields: Any) -> dict[str, Any]:
    """An object of `fields`, leaving out those given as `ABSENT`."""
    return {k: v for k, v in fields.items() if v is not ABSENT}


def _pod(state: Any, name: Any = "discovery", phase: Any = "Failed", **more: Any) -> dict[str, Any]:
    container = _put(name=name, state=state, **more)
    return {
        "kind": "Pod",
        "status": _put(phase=phase, containerStatuses=[container]),
    }


def _waiting(reason: Any = "ImagePullBackOff", message: Any = "back-off") -> dict[str, Any]:
    return {"waiting": _put(reason=reason, message=message)}


def _terminated(message: Any = "done", **more: Any) -> dict[str, Any]:
    return {"terminated": _put(exitCode=1, message=message, **more)}


def _container(pod: dict[str, Any]) -> Any:
    """The one container status `_pod` made, as rules.containers reads it."""
    return container_statuses(pod)[0]


def _conditions(**entry: Any) -> dict[str, Any]:
    return {"status": {"conditions": [_put(**{"type": "Ready", **entry})]}}


def _predictor(
    name: Any = "p",
    phase: Any = "Pending",
    state: Any = ABSENT,
    last: Any = ABSENT,
    scheduled: Any = ABSENT,
) -> list[dict[str, Any]]:
    """An inference pod of KServe's (its container has no spec, so the status is all it says)."""
    container = _put(name="kserve-container", state=state, lastState=last)
    unschedulable = _put(
        type="PodScheduled", status="False", reason="Unschedulable", message=scheduled
    )
    return [
        {
            "metadata": _put(name=name),
            "status": _put(phase=phase, containerStatuses=[container], conditions=[unschedulable]),
        }
    ]


def _crashing(message: Any) -> list[dict[str, Any]]:
    return _predictor(
        state=_waiting(reason="CrashLoopBackOff"), last=_terminated(message, reason="Error")
    )


def _route(condition: str, message: Any) -> Any:
    """What the Gateway `gw` said of our route: `condition` False, with `message`."""
    said = _put(type=condition, status="False", reason="NotAllowedByListeners", message=message)
    parents: list[Any] = [{"parentRef": {"name": "gw"}, "conditions": [said]}]
    return route_health({"status": {"parents": parents}}, {"name": "gw"}, "team")


def _listeners(**listener: Any) -> Any:
    """A Gateway with one listener of `listener`'s fields, read as route attachment reads it."""
    return gateway_listeners({"spec": {"listeners": [_put(**listener)]}})


def _length(text: str | None) -> int:
    return len(text or "")


READERS = [
    # function/kube/jobs.py: a cache or discovery Job's result and its pull failures.
    Reader("waiting-reason", "jobs.waiting_problem: a cache or discovery Job's pull failure",
           lambda v: waiting_problem([_pod(_waiting(reason=v))], "discovery"),
           limit=MAX_WORD, kept=lambda v: _container(_pod(_waiting(reason=v))).waiting_reason),
    Reader("waiting-message", "jobs.waiting_problem: the kubelet's message is quoted",
           lambda v: waiting_problem([_pod(_waiting(message=v))], "discovery"), limit=MAX_QUOTE),
    Reader("waiting-state", "jobs.waiting_problem: `waiting` itself of another type",
           lambda v: waiting_problem([_pod(_put(waiting=v))], "discovery"), valid=OBJECT),
    Reader("container-state", "containers.container_statuses: `state` itself of another type",
           lambda v: _container(_pod(v)), valid=OBJECT),
    Reader("container-name", "containers.container_statuses: the name a container is found by",
           lambda v: _container(_pod(_waiting(), name=v)).name, limit=MAX_WORD),
    Reader("container-image", "containers.container_statuses: the image a pod cannot pull",
           lambda v: _container(_pod(_waiting(), image=v)).image, limit=MAX_WORD),
    Reader("container-restarts", "containers.container_statuses: the restarts a crash loop counts",
           lambda v: _container(_pod(_waiting(), restartCount=v)).restarts, valid=COUNT),
    Reader("last-state", "containers.container_statuses: `lastState` itself of another type",
           lambda v: _container(_pod(_waiting(), lastState=v)), valid=OBJECT),
    Reader("exit-code", "containers.container_statuses: the exit code a crash loop quotes",
           lambda v: _container(_pod(_put(terminated=_put(exitCode=v)))), valid=COUNT),
    Reader("terminated-reason", "containers.container_statuses: OOMKilled, or another reason",
           lambda v: _container(_pod(_terminated(reason=v))), limit=MAX_WORD),
    Reader("terminated-message", "jobs.terminated_message: a discovery or size-check result",
           lambda v: terminated_message(_pod(_terminated(v)), "discovery"),
           limit=MAX_TERMINATION_MESSAGE),
    Reader("terminated-state", "jobs.terminated_message: `terminated` itself of another type",
           lambda v: terminated_message(_pod(_put(terminated=v)), "discovery"), valid=OBJECT),
    Reader("pod-phase", "jobs.pod_message: the phase a result is looked for in",
           lambda v: pod_message([_pod(_terminated(), phase=v)], "discovery", "Failed"),
           limit=MAX_WORD, kept=lambda v: phase_of(_pod(_terminated(), phase=v))),
    Reader("job-condition-status", "jobs.job_state: a Job's Complete condition",
           lambda v: job_state(_conditions(type="Complete", status=v)), limit=MAX_WORD,
           kept=lambda v: condition_of(_conditions(type="Complete", status=v), "Complete")),
    Reader("job-condition-type", "jobs.job_state: a condition's type",
           lambda v: job_state(_conditions(type=v, status="True")), limit=MAX_WORD,
           kept=lambda v: conditions(_conditions(type=v, status="True")["status"]["conditions"])),
    Reader("job-failed-count", "jobs.attempt: which attempt a Job is on",
           lambda v: attempt({"status": _put(failed=v)}, 3), valid=COUNT),
    # function/kube/views.py: conditions, phases, route parents, autoscalers.
    Reader("condition-reason", "views.condition_of: a reason is compared and quoted",
           lambda v: condition_of(_conditions(reason=v), "Ready"), limit=MAX_WORD),
    Reader("condition-message", "views.condition_of: a message is quoted",
           lambda v: condition_of(_conditions(message=v), "Ready"), limit=MAX_MESSAGE),
    Reader("condition-time", "views.condition_of: lastTransitionTime (a cache's last use)",
           lambda v: condition_of(_conditions(lastTransitionTime=v), "Ready"), limit=MAX_WORD),
    Reader("conditions-list", "views.condition_of: `conditions` itself of another type",
           lambda v: condition_of({"status": {"conditions": v}}, "Ready"), valid=LIST),
    Reader("pvc-phase", "views.phase_of: a PVC's phase is compared and quoted",
           lambda v: phase_of({"status": _put(phase=v)}), limit=MAX_WORD),
    Reader("route-parent-name", "views.route_parents: the Gateway a route's parent names",
           lambda v: route_parents({"status": {"parents": [
               {"parentRef": _put(name=v), "conditions": []}]}}), limit=MAX_WORD),
    Reader("route-rejected", "route_status.route_health: the Gateway's reason for refusing, quoted",
           lambda v: _route("Accepted", v), limit=MAX_QUOTE),
    Reader("route-unresolved", "route_status.route_health: why the backend is unresolved, quoted",
           lambda v: _route("ResolvedRefs", v), limit=MAX_QUOTE),
    Reader("route-parents", "views.route_parents: `parents` itself of another type",
           lambda v: route_parents({"status": {"parents": v}}), valid=LIST),
    Reader("gateway-listeners", "views.gateway_listeners: `listeners` itself of another type",
           lambda v: gateway_listeners({"spec": _put(listeners=v)}), valid=LIST),
    Reader("listener-name", "views.gateway_listeners: the listener a refusal names",
           lambda v: _listeners(name=v, protocol="HTTP"), limit=MAX_WORD),
    Reader("listener-protocol", "views.gateway_listeners: HTTP or HTTPS take HTTPRoutes",
           lambda v: _listeners(name="web", protocol=v), limit=MAX_WORD),
    Reader("listener-port", "views.gateway_listeners: the port a gatewayRef may select",
           lambda v: _listeners(name="web", port=v), valid=COUNT),
    Reader("listener-kinds", "views.gateway_listeners: allowedRoutes.kinds of another type",
           lambda v: _listeners(name="web", allowedRoutes={"kinds": v}), valid=LIST),
    Reader("hpa-current", "views.autoscaler_status: replica counts",
           lambda v: autoscaler_status({"status": _put(currentReplicas=v)}),
           valid=COUNT),
    Reader("status", "objects.aim_status: `status` itself of another type",
           lambda v: aim_status(_put(status=v)), valid=OBJECT),
    # Metadata: the API server bounds names and uids, so only their type is hostile here.
    Reader("name", "objects.name_of: a listed object's name",
           lambda v: name_of({"metadata": _put(name=v)}), valid=BOUNDED_BY_THE_API_SERVER),
    Reader("uid", "objects.uid_of: an object's uid",
           lambda v: uid_of({"metadata": _put(uid=v)}), valid=BOUNDED_BY_THE_API_SERVER),
    Reader("labels", "objects.labels_of: labels of another type",
           lambda v: labels_of({"metadata": _put(labels=v)}), valid=OBJECT),
    Reader("controller-uid", "objects.controller_uid: who controls a listed Job",
           lambda v: controller_uid({"metadata": {"ownerReferences": [
               _put(controller=True, uid=v)]}}), valid=BOUNDED_BY_THE_API_SERVER),
    # function/rules/pods.py: why an inference pod does not serve, quoted at MAX_QUOTE with "…".
    Reader("predictor-name", "pods.pods_health: the pod a verdict names",
           lambda v: pods_health(_predictor(name=v), serving=False), limit=MAX_WORD),
    Reader("predictor-phase", "pods.pods_health: a pod's phase, compared and said",
           lambda v: pods_health(_predictor(phase=v), serving=False), limit=MAX_WORD),
    Reader("predictor-waiting", "pods.pods_health: an inference pod's waiting reason",
           lambda v: pods_health(_predictor(state=_waiting(reason=v)), serving=False),
           limit=MAX_WORD, kept=lambda v: _container(_predictor(state=_waiting(reason=v))[0])),
    Reader("predictor-pull-message", "pods.pods_health: the kubelet's pull failure, quoted",
           lambda v: pods_health(_predictor(state=_waiting(message=v)), serving=False),
           limit=MAX_QUOTE - 1),
    Reader("predictor-last-words", "pods.pods_health: a crash loop's termination message, quoted",
           lambda v: pods_health(_crashing(v), serving=False), limit=MAX_QUOTE - 1),
    Reader("predictor-scheduling", "pods.pods_health: the scheduler's message, quoted",
           lambda v: pods_health(_predictor(scheduled=v), serving=False), limit=MAX_QUOTE - 1),
    Reader("predictor-conditions", "pods.pods_health: `conditions` itself of another type",
           lambda v: pods_health([{"status": _put(conditions=v)}], serving=False), valid=LIST),
    Reader("predictor-statuses", "pods.pods_health: `containerStatuses` of another type",
           lambda v: pods_health([{"status": _put(containerStatuses=v)}], serving=False),
           valid=LIST),
    # A count written as digits: a huge string is no count whatever its bound, so its bound is
    # asserted with 10 MB of digits in test_a_huge_count_of_digits_is_no_count.
    Reader("download-report", "cache.progress.read: the download sidecar's ConfigMap",
           lambda v: read_report({"download-report": ({"data": _put(downloadedBytes=v)},)})),
]  # fmt: skip


@dataclass(frozen=True)
class Row(Case):
    """One reader given one shape."""

    reader: Reader
    shape: Shape


ROWS = [
    Row(f"{r.id}-{s.id}", f"{r.reason}; {s.reason}", r, s)
    for r in READERS
    for s in SHAPES
    if s.id not in r.valid
]


@table(ROWS)
def test_a_hostile_shape_reads_as_absent_or_cut(case: Row) -> None:
    """Another controller's status never crashes a composer: a shape of the wrong type reads as
    the field left out, and a huge string is cut to the reader's bound."""
    reader, value = case.reader, case.shape.value
    got = reader.read(value)
    if value is HUGE and reader.limit is not None:
        kept = repr(got if reader.kept is None else reader.kept(value))
        assert "A" * reader.limit in kept, f"{case.reason}: not read"
        assert "A" * (reader.limit + 1) not in kept, f"{case.reason}: not cut"
        if reader.kept is None:
            return
    assert got == reader.read(ABSENT), case.reason


def test_the_waiting_reason_ci_found_is_no_pull_failure() -> None:
    """The shape the fuzz tier found (a mapping for waiting.reason) raised TypeError; a real
    pull failure beside it is still reported."""
    hostile = _pod(_waiting(reason={"a": 1}))
    real = _pod(_waiting(reason="ErrImagePull", message="pull access denied"))
    assert waiting_problem([hostile], "discovery") is None
    assert waiting_problem([hostile, real], "discovery") == "ErrImagePull: pull access denied"


def test_a_quoted_message_is_marked_cut() -> None:
    """A Job's pull failure quotes the kubelet's message cut as other quotes are, marked `...`,
    so a reader of the condition knows the kubelet said more."""
    said = waiting_problem([_pod(_waiting(message=HUGE))], "discovery")
    assert said == f"ImagePullBackOff: {'A' * MAX_QUOTE}..."


def test_a_gateway_message_is_marked_cut() -> None:
    """A Gateway's message in HTTPRouteReady is cut as other quotes are, marked `...`."""
    assert _route("Accepted", HUGE).message == (
        f"Gateway gw rejected the HTTPRoute: {'A' * MAX_QUOTE}..."
    )


def test_a_huge_count_of_digits_is_no_count() -> None:
    """The sidecar's byte count is digits: 10 MB of them is no count (Python refuses to parse
    more than 4,300 digits, so without the bound this raises)."""
    report = read_report({"download-report": ({"data": {"downloadedBytes": "9" * 10_000_000}},)})
    assert report is not None
    assert report.downloaded_bytes is None


def test_job_state_reads_a_real_job() -> None:
    """The table's absent answers are not vacuous: a well-formed Job reads as it is."""
    assert job_state(_conditions(type="Complete", status="True")) is JobState.COMPLETE
    assert attempt({"status": {"failed": 1}}, 3) == 2
    assert terminated_message(_pod(_terminated("{}")), "discovery") == "{}"
    assert _length(terminated_message(_pod(_terminated(HUGE)), "discovery")) == (
        MAX_TERMINATION_MESSAGE
    )


class _Unread(list[Any]):
    """A status list too long to walk: iterating it whole fails the test."""

    def __iter__(self) -> Iterator[Any]:
        msg = "a reader walked a whole status list"
        raise AssertionError(msg)


def test_a_long_container_status_list_is_cut_before_it_is_read() -> None:
    """A Pod listing millions of container statuses costs a reader no more than a few: each list
    is cut to `MAX_CONTAINERS` entries before any is looked at."""
    many = _Unread([{"name": "discovery", "state": _terminated("{}")}] * 1000)
    pod: dict[str, Any] = {"status": {"initContainerStatuses": many, "containerStatuses": many}}
    assert terminated_message(pod, "discovery") == "{}"
