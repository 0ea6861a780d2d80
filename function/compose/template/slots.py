"""The cluster-wide cap on discovery Jobs running at once, and the queue of templates it holds.

Every discovery Job pulls a model image of many GB; when a catalog of models arrives at once, all
their templates would pull together. A template therefore starts its Job only while fewer than
`maxConcurrentDiscoveryJobs` (of its AIMClusterRuntimeConfig) discovery Jobs run in the cluster,
counting the templates queued ahead of it as taken slots.

A composer cannot take a lock, and Crossplane composes many templates at the same time, so each
decides alone from the same two lists: the running discovery Jobs and the templates waiting to
start one. Jobs are listed by the discovery labels in every namespace, but anyone who may create a
Job in a namespace can put those labels on it; a Job counts only when a template of ours composed
it: its controller is an AIMServiceTemplate (or a claim's XAIMServiceTemplate) or an
AIMClusterServiceTemplate that is listed too, and it runs where that template composes its Job (the
template's namespace; the system namespace for a cluster template), one Job per template. The
waiting templates are ordered oldest first (creation time, then kind, namespace and name), so
callers that see the same lists agree on who takes the free slots instead of all taking the last
one. Lists a caller reads can be a moment old, which is where the cap can be overrun;
docs/catalog.md says by how much.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from pydantic import JsonValue

from function.api.meta import API_VERSION, GROUP, Kind, Manifest
from function.kube.claims import COMPOSITE_PREFIX, as_claim
from function.kube.contract import Observed, Requirement
from function.kube.jobs import JobState, job_state
from function.kube.objects import controller_ref, metadata_of, name_of, uid_of
from function.kube.views import condition_of, field_at, string_at
from function.rules import discovery, labels
from function.rules.status import ConditionType, Reason

JOB_LABELS: Final = {
    "app.kubernetes.io/name": "aim-discovery",
    "app.kubernetes.io/component": "discovery",
    **labels.MANAGED_BY,
}
"""Labels every discovery Job carries (the AIM operator's, with our manager), and counted by."""

NEW_TEMPLATE_GRACE: Final = timedelta(minutes=5)
"""How long a template that has never reported discovery counts as queued.

A burst of new templates has no status yet while each is composed for the first time; counting
them keeps the burst within the cap. One that never reports (its spec refused) stops counting.
"""

_JOBS: Final = "discovery-slots-jobs"
_TEMPLATES: Final = "discovery-queue-templates"
_CLUSTER_TEMPLATES: Final = "discovery-queue-cluster-templates"
_QUEUED_REASONS: Final = frozenset({Reason.DISCOVERY_CAP_REACHED, Reason.DISCOVERY_STARTING})
_PAUSED: Final = "crossplane.io/paused"
_TEMPLATE_KINDS: Final = frozenset(
    {
        Kind.SERVICE_TEMPLATE.value,
        COMPOSITE_PREFIX + Kind.SERVICE_TEMPLATE.value,
        Kind.CLUSTER_SERVICE_TEMPLATE.value,
    }
)
"""Kinds whose discovery Jobs take slots: the templates, as Crossplane names them in owners."""
_UNKNOWN_AGE: Final = datetime.max.replace(tzinfo=UTC)

Identity = tuple[str, str, str]
"""(kind, namespace, name) of a template."""
QueueKey = tuple[datetime, str, str, str]


@dataclass(frozen=True)
class Slot:
    """Whether this template may start its discovery Job now, and what it waits behind."""

    granted: bool
    running: int
    """Discovery Jobs of other templates of ours running in the cluster."""
    ahead: int
    """Templates queued before this one."""
    limit: int


def requirements(observed: Observed) -> list[Requirement]:
    """The running discovery Jobs and every template, in every namespace (no namespace set).

    In the claims flavour the namespaced templates are listed as their composites: Crossplane
    copies the function's conditions to the composite only, and the queue is read from them.
    """
    namespaced = Kind.SERVICE_TEMPLATE.value
    return [
        Requirement(_JOBS, "batch/v1", "Job", match_labels=JOB_LABELS),
        Requirement(
            _TEMPLATES,
            API_VERSION,
            COMPOSITE_PREFIX + namespaced if observed.claims else namespaced,
        ),
        Requirement(_CLUSTER_TEMPLATES, API_VERSION, Kind.CLUSTER_SERVICE_TEMPLATE),
    ]


def decide(observed: Observed, *, limit: int, job: str, namespace: str) -> Slot | None:
    """Whether the Job `namespace/job` may start; None until Crossplane has listed what counts."""
    jobs = observed.required.get(_JOBS)
    templates = observed.required.get(_TEMPLATES)
    cluster_templates = observed.required.get(_CLUSTER_TEMPLATES)
    if jobs is None or templates is None or cluster_templates is None:
        return None
    listed = {_identity(t): t for t in (*map(as_claim, templates), *cluster_templates)}
    composers = _work_namespaces(listed.values(), observed.settings.system_namespace)
    composers.pop(uid_of(observed.composite) or "", None)
    running = len(
        {
            uid
            for j in jobs
            if (uid := _composed_by(j, composers)) is not None
            and job_state(j) is JobState.RUNNING
            and (metadata_of(j).get("namespace"), name_of(j)) != (namespace, job)
        }
    )
    me = (observed.kind, observed.namespace, observed.name)
    mine = _key(me, observed.composite)
    queue = {_key(who, t) for who, t in listed.items() if who != me and _queued(t, observed.now)}
    ahead = sum(1 for key in queue if key < mine)
    return Slot(granted=running + ahead < limit, running=running, ahead=ahead, limit=limit)


def _work_namespaces(templates: Iterable[Manifest], system_namespace: str) -> dict[str, str]:
    """Where each listed template composes its discovery Job, by the template's UID."""
    where = {}
    for t in templates:
        uid = uid_of(t)
        if uid is None:
            continue
        if t.get("kind") == Kind.CLUSTER_SERVICE_TEMPLATE:
            where[uid] = system_namespace
        elif namespace := string_at(t, "metadata", "namespace"):
            where[uid] = namespace
    return where


def _composed_by(job: Manifest, composers: Mapping[str, str]) -> str | None:
    """The UID of the listed template that composed `job` where it composes its Job, else None.

    A Job's controller reference is its composing XR's (Crossplane sets it); the XR must be a
    template of ours that is listed, and the Job in that template's namespace.
    """
    ref = controller_ref(job) or {}
    uid, kind, api = ref.get("uid"), ref.get("kind"), ref.get("apiVersion")
    if (
        not isinstance(uid, str)
        or kind not in _TEMPLATE_KINDS
        or not isinstance(api, str)
        or api.partition("/")[0] != GROUP
        or composers.get(uid) != string_at(job, "metadata", "namespace")
    ):
        return None
    return uid


def waiting_message(slot: Slot) -> str:
    """What a template that waits for a slot says about it."""
    return (
        f"waiting for a discovery slot: {slot.running} of at most {slot.limit} discovery Jobs "
        f"run in the cluster (maxConcurrentDiscoveryJobs of the AIMClusterRuntimeConfig), "
        f"{slot.ahead} template(s) queued ahead of this one"
    )


def _queued(template: Manifest, now: datetime) -> bool:
    """Whether another template waits for a slot (or has just taken one) as it is listed."""
    meta = metadata_of(template)
    if meta.get("deletionTimestamp") or field_at(meta, "annotations", _PAUSED) == "true":
        return False
    if field_at(template, "spec", "modelSources"):
        return False
    discovered = condition_of(template, ConditionType.DISCOVERED)
    if discovered is not None:
        return discovered.reason in _QUEUED_REASONS
    created = _created(meta)
    return created is None or now - created < NEW_TEMPLATE_GRACE


def _identity(template: Manifest) -> Identity:
    return (
        str(template.get("kind", "")),
        string_at(template, "metadata", "namespace") or "",
        name_of(template),
    )


def _key(who: Identity, template: Manifest) -> QueueKey:
    return (_created(metadata_of(template)) or _UNKNOWN_AGE, *who)


def _created(meta: Mapping[str, JsonValue]) -> datetime | None:
    return discovery.timestamp(meta.get("creationTimestamp"))
