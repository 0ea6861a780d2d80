"""Why a service's inference pods are or are not serving, from the pods' own status.

KServe reports an InferenceService not Ready without saying why its pods are not; the pods do
(the kubelet's container states, the scheduler's PodScheduled condition). This reads them into
one verdict a user can act on: which pod, which container, what to change. Pod status is written
by other controllers and can hold anything, so every field is read by type and cut at a bound
(the containers' states with function/rules/containers.py), at most `MAX_PODS` pods are looked at
and every quoted message is cut to `MAX_QUOTE` characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from function.rules.containers import ContainerStatus, Termination, container_statuses
from function.rules.gpu import DEVICE_ID_LABEL
from function.rules.status import ConditionType, Health, Reason
from function.rules.text import MAX_MESSAGE, text, word

PULL_FAILURES: Final = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName"})
"""Waiting reasons of a container whose image the kubelet cannot pull."""
START_FAILURES: Final = frozenset({"CreateContainerConfigError", "CreateContainerError"})
"""Waiting reasons of a container the kubelet cannot create (a Secret its env names is missing)."""
MAX_PODS: Final = 100
MAX_QUOTE: Final = 300
_PODS: Final = ConditionType.INFERENCE_SERVICE_PODS_READY
_AUTH: Final = re.compile(
    r"unauthorized|authentication required|\b401\b|\b403\b|forbidden|denied|credentials",
    re.IGNORECASE,
)
_NOT_FOUND: Final = re.compile(
    r"not found|\b404\b|manifest unknown|name unknown|does not exist", re.IGNORECASE
)
_INSUFFICIENT: Final = re.compile(r"Insufficient ([\w./-]*\w)")


@dataclass(frozen=True)
class Pod:
    """The parts of one pod the verdict reads, each of the right type or empty."""

    name: str
    phase: str
    ready: bool
    scheduling: str
    """The scheduler's message when it could not place the pod, else empty."""
    pull_secrets: tuple[str, ...]
    containers: tuple[Container, ...]


@dataclass(frozen=True)
class Container:
    """One container's (or init container's) spec and status, as the verdict needs them."""

    name: str
    image: str
    limits: Mapping[str, str]
    waiting: str
    waiting_message: str
    restarts: int
    last_reason: str
    last_exit: int | None
    last_message: str


def pods_health(pods: Sequence[Mapping[str, JsonValue]], *, serving: bool) -> Health:
    """The InferenceServicePodsReady verdict for a service's predictor pods.

    `serving`: KServe reports the InferenceService Ready. With no pods that is a service scaled
    to zero, which serves (KEDA can scale to zero); otherwise its pods are still to come.
    """
    read = [_pod(p) for p in pods[:MAX_PODS]]
    if not read and serving:
        return _PODS.ready(
            Reason.NO_PODS, "no predictor pods run; KServe reports the service Ready"
        )
    if not read:
        return _PODS.progressing(Reason.NO_PODS, "KServe has created no pods yet")
    ready = [p for p in read if p.ready]
    problem = _first_problem(read)
    if ready:
        message = f"{len(ready)} of {len(read)} predictor pods Ready"
        return _PODS.ready(Reason.PODS_READY, message + (f"; {problem.message}" if problem else ""))
    if problem is not None:
        return problem
    running = next((p for p in read if p.phase == "Running"), None)
    if running is not None:
        return _PODS.progressing(
            Reason.PODS_STARTING,
            f"pod {running.name} is running; waiting for its readiness probe",
        )
    return _PODS.progressing(
        Reason.PODS_STARTING,
        f"pod {read[0].name} is {read[0].phase or 'Pending'}",
    )


def _first_problem(pods: Sequence[Pod]) -> Health | None:
    """The first problem found, each kind looked for across all pods in turn.

    Pulls, memory, crashes, containers that cannot start, failed pods, then scheduling: what a
    user must fix comes before what may pass.
    """
    for check in (_pull, _oom, _crash, _cannot_start):
        for pod in pods:
            for container in pod.containers:
                found = check(pod, container)
                if found is not None:
                    return found
    for pod_check in (_failed, _unschedulable):
        for pod in pods:
            found = pod_check(pod)
            if found is not None:
                return found
    return None


def _pull(pod: Pod, c: Container) -> Health | None:
    if c.waiting not in PULL_FAILURES:
        return None
    quoted = _quote(c.waiting_message) or c.waiting
    cannot = f"pod {pod.name} cannot pull {c.image}"
    if _AUTH.search(c.waiting_message):
        secrets = ", ".join(pod.pull_secrets) or "none"
        return _PODS.failed(
            Reason.IMAGE_PULL_AUTH,
            f"{cannot}: the registry refused it ({quoted}); pull secrets in use: {secrets}. "
            "Name a Secret that can read the image in the service's or its runtime "
            "config's imagePullSecrets",
        )
    if _NOT_FOUND.search(c.waiting_message) or c.waiting == "InvalidImageName":
        return _PODS.failed(
            Reason.IMAGE_NOT_FOUND,
            f"{cannot}: the registry has no such image ({quoted})",
        )
    return _PODS.degraded(Reason.IMAGE_PULL_BACKOFF, f"{cannot}: {quoted}")


def _oom(pod: Pod, c: Container) -> Health | None:
    if c.last_reason != "OOMKilled" or not (c.waiting or pod.phase == "Failed"):
        return None
    memory = c.limits.get("memory")
    limit = f"its memory limit, {memory}" if memory else "its memory"
    return _PODS.degraded(
        Reason.POD_OOM_KILLED,
        f"container {c.name} of pod {pod.name} was killed for using more than {limit} "
        f"({c.restarts} restarts); raise spec.resources.limits.memory",
    )


def _crash(pod: Pod, c: Container) -> Health | None:
    if c.waiting != "CrashLoopBackOff":
        return None
    code = f"code {c.last_exit}" if c.last_exit is not None else "an unknown code"
    why = f" ({c.last_reason})" if c.last_reason else ""
    said = f": {_quote(c.last_message)}" if c.last_message.strip() else ""
    return _PODS.degraded(
        Reason.CRASH_LOOP,
        f"container {c.name} of pod {pod.name} keeps exiting, last with {code}{why}{said} "
        f"({c.restarts} restarts)",
    )


def _cannot_start(pod: Pod, c: Container) -> Health | None:
    if c.waiting not in START_FAILURES:
        return None
    return _PODS.degraded(
        Reason.POD_FAILED,
        f"container {c.name} of pod {pod.name} cannot start: {c.waiting}: "
        f"{_quote(c.waiting_message)}",
    )


def _failed(pod: Pod) -> Health | None:
    if pod.phase != "Failed":
        return None
    return _PODS.degraded(Reason.POD_FAILED, f"pod {pod.name} failed")


def _unschedulable(pod: Pod) -> Health | None:
    said = pod.scheduling
    if not said:
        return None
    quoted = _quote(said)
    short = _INSUFFICIENT.search(said)
    if short is not None:
        resource = short.group(1)
        count = next((c.limits[resource] for c in pod.containers if resource in c.limits), "")
        return _PODS.pending(
            Reason.INSUFFICIENT_GPU if "gpu" in resource else Reason.INSUFFICIENT_RESOURCES,
            f"pod {pod.name} waits for a node with {count or 'enough'} free {resource} "
            f"(the scheduler: {quoted})",
        )
    if "node affinity" in said or "node selector" in said:
        return _PODS.pending(
            Reason.NO_MATCHING_GPU_NODE,
            f"pod {pod.name} waits for a node with the template's GPU (its {DEVICE_ID_LABEL} "
            f"label) (the scheduler: {quoted})",
        )
    if "PersistentVolumeClaim" in said:
        return _PODS.pending(
            Reason.PVC_PENDING,
            f"pod {pod.name} waits for a volume claim it mounts to be bound (the scheduler: "
            f"{quoted})",
        )
    return _PODS.pending(Reason.UNSCHEDULABLE, f"pod {pod.name} cannot be scheduled: {quoted}")


def _quote(said: str) -> str:
    # Only the first MAX_MESSAGE characters are split: what is quoted is far shorter, and real
    # messages (a kubelet keeps 4 KiB of a termination message) are read whole.
    said = " ".join(said[:MAX_MESSAGE].split())
    return said if len(said) <= MAX_QUOTE else said[: MAX_QUOTE - 1] + "…"


# -- reading a pod by type ------------------------------------------------------------------------


def _pod(pod: Mapping[str, JsonValue]) -> Pod:
    meta = _map(pod.get("metadata"))
    spec = _map(pod.get("spec"))
    status = _map(pod.get("status"))
    conditions = [_map(c) for c in _list(status.get("conditions"))]
    ready = any(
        word(c.get("type")) == "Ready" and word(c.get("status")) == "True" for c in conditions
    )
    scheduling = next(
        (
            text(c.get("message"))
            for c in conditions
            if word(c.get("type")) == "PodScheduled"
            and word(c.get("status")) == "False"
            and word(c.get("reason")) == "Unschedulable"
        ),
        "",
    )
    specs = {
        word(c.get("name")): c
        for c in (
            _map(x) for x in [*_list(spec.get("initContainers")), *_list(spec.get("containers"))]
        )
    }
    statuses = container_statuses(pod)
    return Pod(
        name=word(meta.get("name")),
        phase=word(status.get("phase")),
        ready=ready,
        scheduling=scheduling,
        pull_secrets=tuple(
            n for n in (word(_map(s).get("name")) for s in _list(spec.get("imagePullSecrets"))) if n
        ),
        containers=tuple(_container(s, specs.get(s.name, {})) for s in statuses)
        or tuple(_container(ContainerStatus(), c) for c in specs.values()),
    )


def _container(status: ContainerStatus, spec: Mapping[str, JsonValue]) -> Container:
    last = status.ended or Termination()
    limits = {
        k: word(v)
        for k, v in _map(_map(spec.get("resources")).get("limits")).items()
        if isinstance(v, str)
    }
    return Container(
        name=status.name or word(spec.get("name")),
        image=word(spec.get("image")) or status.image,
        limits=limits,
        waiting=status.waiting_reason,
        waiting_message=status.waiting_message,
        restarts=status.restarts,
        last_reason=last.reason,
        last_exit=last.exit_code,
        last_message=last.message,
    )


def _map(value: JsonValue | None) -> Mapping[str, JsonValue]:
    return value if isinstance(value, dict) else {}


PREDICTOR_LABEL: Final = "serving.kserve.io/inferenceservice"
"""The label KServe puts on an InferenceService's pods, naming it."""


def _list(value: JsonValue | None) -> list[JsonValue]:
    return value[:MAX_PODS] if isinstance(value, list) else []
