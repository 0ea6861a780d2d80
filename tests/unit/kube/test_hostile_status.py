"""Readers of what other controllers write: a wrong type reads as absent, a huge string is cut.

Pods, Jobs, PersistentVolumeClaims, InferenceServices, HTTPRoutes and HorizontalPodAutoscalers
are written by the kubelet, KServe, a Gateway or the HPA controller, and by anyone with write
access to their status. Each reader below is given every hostile shape where it expects a string
or a count, and must answer what it answers when the field is absent (or, for a string it
quotes, the string cut to its bound), never raise. A reader is a row of `READERS`; the shapes
are `SHAPES`; the table is every pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from function.compose.cache.progress import read as read_report
from function.kube.jobs import (
    MAX_TERMINATION_MESSAGE,
    JobState,
    attempt,
    container_states,
    job_state,
    pod_message,
    terminated_message,
    waiting_problem,
)
from function.kube.objects import aim_status, controller_uid, labels_of, name_of, uid_of
from function.kube.views import (
    MAX_MESSAGE,
    MAX_WORD,
    autoscaler_status,
    condition_of,
    phase_of,
    route_parents,
)
from function.rules.pods import MAX_QUOTE, pods_health
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
    """A string it quotes: a huge one is cut to this many characters, not read as absent."""
    valid: frozenset[str] = frozenset()
    """Shapes of the type the field has (a count for a count): not hostile there, left out."""


def _put(**fields: Any) -> dict[str, Any]:
    """An object of `fields`, leaving out those given as `ABSENT`."""
    return {k: v for k, v in fields.items() if v is not ABSENT}


def _pod(state: dict[str, Any], name: Any = "discovery", phase: Any = "Failed") -> dict[str, Any]:
    container = _put(name=name, state=state)
    return {
        "kind": "Pod",
        "status": _put(phase=phase, containerStatuses=[container]),
    }


def _waiting(reason: Any = "ImagePullBackOff", message: Any = "back-off") -> dict[str, Any]:
    return {"waiting": _put(reason=reason, message=message)}


def _terminated(message: Any) -> dict[str, Any]:
    return {"terminated": _put(exitCode=1, message=message)}


def _conditions(**entry: Any) -> dict[str, Any]:
    return {"status": {"conditions": [_put(**{"type": "Ready", **entry})]}}


def _length(text: str | None) -> int:
    return len(text or "")


READERS = [
    Reader("waiting-reason", "jobs.waiting_problem: a cache or discovery Job's pull failure",
           lambda v: waiting_problem([_pod(_waiting(reason=v))], "discovery")),
    Reader("waiting-message", "jobs.waiting_problem: the kubelet's message is quoted",
           lambda v: waiting_problem([_pod(_waiting(message=v))], "discovery"),
           limit=len("ImagePullBackOff: ") + MAX_QUOTE),
    Reader("waiting-state", "jobs.waiting_problem: `waiting` itself of another type",
           lambda v: waiting_problem([_pod(_put(waiting=v))], "discovery"), valid=OBJECT),
    Reader("container-name", "jobs.container_states: the name a container is found by",
           lambda v: container_states(_pod(_waiting(), name=v))[0].name, limit=MAX_WORD),
    Reader("terminated-message", "jobs.terminated_message: a discovery or size-check result",
           lambda v: terminated_message(_pod(_terminated(v)), "discovery"),
           limit=MAX_TERMINATION_MESSAGE),
    Reader("terminated-state", "jobs.terminated_message: `terminated` itself of another type",
           lambda v: terminated_message(_pod(_put(terminated=v)), "discovery"), valid=OBJECT),
    Reader("pod-phase", "jobs.pod_message: the phase a result is looked for in",
           lambda v: pod_message([_pod(_terminated("done"), phase=v)], "discovery", "Failed")),
    Reader("job-condition-status", "jobs.job_state: a Job's Complete condition",
           lambda v: job_state(_conditions(type="Complete", status=v))),
    Reader("job-condition-type", "jobs.job_state: a condition's type",
           lambda v: job_state(_conditions(type=v, status="True"))),
    Reader("job-failed-count", "jobs.attempt: which attempt a Job is on",
           lambda v: attempt({"status": _put(failed=v)}, 3), valid=COUNT),
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
    Reader("route-parents", "views.route_parents: `parents` itself of another type",
           lambda v: route_parents({"status": {"parents": v}}), valid=LIST),
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
    Reader("predictor-waiting", "rules.pods.pods_health: an inference pod's waiting reason",
           lambda v: pods_health([{"metadata": {"name": "p"}, "status": {"containerStatuses": [
               {"name": "kserve-container", "state": _waiting(reason=v)}]}}], serving=False)),
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
    the field left out, and a huge string as absent or cut to the reader's bound."""
    reader, value = case.reader, case.shape.value
    got = reader.read(value)
    if value is HUGE and reader.limit is not None:
        assert 0 < len(repr(got)) < reader.limit + 1000, case.reason
        return
    assert got == reader.read(ABSENT), case.reason


def test_the_waiting_reason_ci_found_is_no_pull_failure() -> None:
    """The shape the fuzz tier found (a mapping for waiting.reason) raised TypeError; a real
    pull failure beside it is still reported."""
    hostile = _pod(_waiting(reason={"a": 1}))
    real = _pod(_waiting(reason="ErrImagePull", message="pull access denied"))
    assert waiting_problem([hostile], "discovery") is None
    assert waiting_problem([hostile, real], "discovery") == "ErrImagePull: pull access denied"


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
    pod = {"status": {"initContainerStatuses": many, "containerStatuses": many}}
    assert terminated_message(pod, "discovery") == "{}"
