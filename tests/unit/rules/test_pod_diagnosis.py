"""function/rules/pods.py: why a service's inference pods are or are not serving.

Each pod below is shaped as the kubelet and scheduler of Kubernetes 1.35 write it (the messages
are theirs, as seen on the tier's real node or quoted from their source).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from function.rules.pods import MAX_QUOTE, pods_health
from function.rules.status import ConditionType, Reason, State
from tests.cases import table

IMAGE = "registry.example/org/llama:1"


def pod(
    name: str = "chat-predictor-7d9-x2",
    *,
    phase: str = "Pending",
    ready: bool = False,
    waiting: dict[str, Any] | None = None,
    last: dict[str, Any] | None = None,
    restarts: int = 0,
    unschedulable: str = "",
    secrets: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A predictor pod with one `kserve-container` (1 GPU, 48Gi)."""
    conditions: list[dict[str, Any]] = [{"type": "Ready", "status": "True" if ready else "False"}]
    if unschedulable:
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable,
            }
        )
    status: dict[str, Any] = {"phase": phase, "conditions": conditions}
    if waiting or last or phase == "Running":
        state = {"waiting": waiting} if waiting else {"running": {"startedAt": "t"}}
        status["containerStatuses"] = [
            {
                "name": "kserve-container",
                "image": IMAGE,
                "ready": ready,
                "restartCount": restarts,
                "state": state,
                "lastState": {"terminated": last} if last else {},
            }
        ]
    limits = {"amd.com/gpu": "1", "memory": "48Gi", "cpu": "4"}
    return {
        "metadata": {"name": name},
        "spec": {
            "imagePullSecrets": [{"name": s} for s in secrets],
            "containers": [
                {"name": "kserve-container", "image": IMAGE, "resources": {"limits": limits}}
            ],
        },
        "status": status,
    }


@dataclass(frozen=True)
class Verdict:
    id: str
    reason: str
    pods: list[dict[str, Any]]
    state: State
    why: str
    says: tuple[str, ...] = field(default=())
    serving: bool = False


PULL_401 = (
    'failed to pull and unpack image "registry.example/org/llama:1": failed to resolve '
    "reference: unexpected status from HEAD request: 401 Unauthorized"
)
LONG_REFERENCE = f"registry.example/{'team/' * 60}llama:1"
"""An image reference of 375 characters: the kubelet's refusal comes after the first 300."""
BURIED = " " * 10_000_000 + "0/1 nodes are available: 1 Insufficient cpu."
"""A scheduler message of 10 MB whose words lie past what is read of it."""
VERDICTS = [
    Verdict(
        "ready",
        "a Ready pod serves: the condition is True and counts the pods",
        [pod(phase="Running", ready=True), pod("b", phase="Running")],
        State.READY,
        Reason.PODS_READY,
        ("1 of 2 predictor pods Ready",),
    ),
    Verdict(
        "ready-with-a-broken-rollout",
        "one pod serving while a new one cannot pull still serves, and says what is wrong",
        [
            pod(phase="Running", ready=True),
            pod("new", waiting={"reason": "ImagePullBackOff", "message": PULL_401}),
        ],
        State.READY,
        Reason.PODS_READY,
        ("1 of 2 predictor pods Ready; pod new cannot pull",),
    ),
    Verdict(
        "pull-unauthorized",
        "a refused pull names the image and the pull secrets in use, and where to name another",
        [pod(waiting={"reason": "ErrImagePull", "message": PULL_401}, secrets=("team-pull",))],
        State.FAILED,
        Reason.IMAGE_PULL_AUTH,
        (
            f"cannot pull {IMAGE}",
            "401 Unauthorized",
            "pull secrets in use: team-pull",
            "imagePullSecrets",
        ),
    ),
    Verdict(
        "pull-unauthorized-no-secret",
        "without any pull secret the message says so, rather than listing nothing",
        [pod(waiting={"reason": "ImagePullBackOff", "message": PULL_401})],
        State.FAILED,
        Reason.IMAGE_PULL_AUTH,
        ("pull secrets in use: none",),
    ),
    Verdict(
        "pull-not-found",
        "a tag the registry does not have is the user's to fix: Failed, ImageNotFound",
        [
            pod(
                waiting={
                    "reason": "ErrImagePull",
                    "message": f'failed to resolve reference "{IMAGE}": {IMAGE}: not found',
                }
            )
        ],
        State.FAILED,
        Reason.IMAGE_NOT_FOUND,
        ("the registry has no such image",),
    ),
    Verdict(
        "pull-network",
        "a registry that cannot be reached may come back: Degraded, with the kubelet's words",
        [pod(waiting={"reason": "ImagePullBackOff", "message": "dial tcp: i/o timeout"})],
        State.DEGRADED,
        Reason.IMAGE_PULL_BACKOFF,
        ("dial tcp: i/o timeout",),
    ),
    Verdict(
        "oom",
        "a server killed for memory says which limit and which field raises it",
        [
            pod(
                phase="Running",
                waiting={"reason": "CrashLoopBackOff", "message": "back-off 40s"},
                last={"reason": "OOMKilled", "exitCode": 137},
                restarts=3,
            )
        ],
        State.DEGRADED,
        Reason.POD_OOM_KILLED,
        ("memory limit, 48Gi", "3 restarts", "spec.resources.limits.memory"),
    ),
    Verdict(
        "crash-loop",
        "a server that keeps exiting gives its exit code and its last words (termination "
        "message, which FallbackToLogsOnError fills from the log)",
        [
            pod(
                phase="Running",
                waiting={"reason": "CrashLoopBackOff", "message": "back-off 20s"},
                last={"reason": "Error", "exitCode": 1, "message": "ValueError: bad --tp 3\n"},
                restarts=2,
            )
        ],
        State.DEGRADED,
        Reason.CRASH_LOOP,
        ("keeps exiting, last with code 1 (Error): ValueError: bad --tp 3 (2 restarts)",),
    ),
    Verdict(
        "pull-refused-late-in-a-long-message",
        "the refusal is looked for in the kubelet's whole message, not only in what is quoted: "
        "a long image reference pushes it past the quote's 300 characters",
        [
            pod(
                waiting={
                    "reason": "ErrImagePull",
                    "message": f'failed to pull and unpack image "{LONG_REFERENCE}": '
                    "unexpected status from HEAD request: 401 Unauthorized",
                }
            )
        ],
        State.FAILED,
        Reason.IMAGE_PULL_AUTH,
        (f'the registry refused it (failed to pull and unpack image "{LONG_REFERENCE[:250]}',),
    ),
    Verdict(
        "crash-loop-traceback",
        "last words over several lines (a traceback the log fallback kept) are quoted on one",
        [
            pod(
                phase="Running",
                waiting={"reason": "CrashLoopBackOff", "message": "back-off 20s"},
                last={
                    "reason": "Error",
                    "exitCode": 1,
                    "message": 'Traceback (most recent call last):\n  File "serve.py", line 3\n'
                    "ValueError: bad --tp 3\n",
                },
                restarts=2,
            )
        ],
        State.DEGRADED,
        Reason.CRASH_LOOP,
        ('(Error): Traceback (most recent call last): File "serve.py", line 3 ValueError',),
    ),
    Verdict(
        "scheduler-message-past-its-bound",
        "a 10 MB scheduler message is read to its first 32 KiB: words past them are not looked "
        "for (nor quoted), so the pod reads as unschedulable for no reason it can name",
        [pod(unschedulable=BURIED)],
        State.PENDING,
        Reason.UNSCHEDULABLE,
        ("cannot be scheduled: ",),
    ),
    Verdict(
        "no-gpus",
        "the scheduler's want of GPUs becomes Pending, naming how many the pod asks",
        [
            pod(
                unschedulable="0/3 nodes are available: 3 Insufficient amd.com/gpu. preemption: "
                "0/3 nodes are available: 3 No preemption victims found for incoming pod."
            )
        ],
        State.PENDING,
        Reason.INSUFFICIENT_GPU,
        ("waits for a node with 1 free amd.com/gpu", "3 Insufficient amd.com/gpu"),
    ),
    Verdict(
        "no-cpu",
        "want of another resource is named as such, not as GPUs",
        [pod(unschedulable="0/1 nodes are available: 1 Insufficient cpu.")],
        State.PENDING,
        Reason.INSUFFICIENT_RESOURCES,
        ("waits for a node with 4 free cpu",),
    ),
    Verdict(
        "no-matching-gpu-node",
        "nodes without the template's GPU model fail the pod's affinity: say which label",
        [
            pod(
                unschedulable="0/2 nodes are available: 2 node(s) didn't match Pod's node "
                "affinity/selector."
            )
        ],
        State.PENDING,
        Reason.NO_MATCHING_GPU_NODE,
        ("amd.com/gpu.device-id",),
    ),
    Verdict(
        "pvc-pending",
        "a cache claim not bound yet keeps the pod from a node",
        [
            pod(
                unschedulable="0/1 nodes are available: pod has unbound immediate "
                "PersistentVolumeClaims."
            )
        ],
        State.PENDING,
        Reason.PVC_PENDING,
        ("volume claim",),
    ),
    Verdict(
        "starting",
        "a running container not yet ready is on its way (model loading)",
        [pod(phase="Running")],
        State.PROGRESSING,
        Reason.PODS_STARTING,
        ("waiting for its readiness probe",),
    ),
    Verdict(
        "creating",
        "a scheduled pod whose container is being created is on its way",
        [pod(waiting={"reason": "ContainerCreating"})],
        State.PROGRESSING,
        Reason.PODS_STARTING,
    ),
    Verdict(
        "config-error",
        "a container the kubelet cannot create (a missing Secret for env) is named",
        [
            pod(
                waiting={
                    "reason": "CreateContainerConfigError",
                    "message": 'secret "hf-token" not found',
                }
            )
        ],
        State.DEGRADED,
        Reason.POD_FAILED,
        ('secret "hf-token" not found',),
    ),
    Verdict(
        "no-pods-yet",
        "before KServe made any pod the service is still starting",
        [],
        State.PROGRESSING,
        Reason.NO_PODS,
    ),
    Verdict(
        "scaled-to-zero",
        "no pods while KServe says Ready is a service scaled to zero, which serves",
        [],
        State.READY,
        Reason.NO_PODS,
        serving=True,
    ),
]


@table(VERDICTS)
def test_the_pods_say_why_the_service_is_or_is_not_serving(case: Verdict) -> None:
    """The verdict a user reads on InferenceServicePodsReady: its state, reason and message."""
    health = pods_health(case.pods, serving=case.serving)
    assert health.condition is ConditionType.INFERENCE_SERVICE_PODS_READY
    assert (health.state, health.reason) == (case.state, case.why), health.message
    for text in case.says:
        assert text in health.message


def test_hostile_pod_status_is_read_by_type_and_quoted_short() -> None:
    """Pod status is another controller's: wrong types read as absent, and a huge message is
    cut, marked, so one pod cannot blow up a condition."""
    weird: dict[str, Any] = {
        "metadata": {"name": 7},
        "spec": {"containers": "no", "imagePullSecrets": [None, {"name": 3}]},
        "status": {
            "phase": ["Running"],
            "conditions": [
                None,
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "x" * 10_000_000,
                },
            ],
            "containerStatuses": [{"name": None, "restartCount": True, "state": []}],
        },
    }
    health = pods_health([weird], serving=False)
    assert health.reason == Reason.UNSCHEDULABLE
    assert health.message == f"pod  cannot be scheduled: {'x' * (MAX_QUOTE - 1)}…"
