"""function/kube/transitions.py: an event per condition that changed, and only then."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.kube.contract import Notice
from function.kube.transitions import carried, transitions
from function.rules.status import Condition, ConditionStatus
from tests.cases import table

T, F, U = ConditionStatus.TRUE, ConditionStatus.FALSE, ConditionStatus.UNKNOWN
PODS_READY = Condition("InferenceServicePodsReady", T, "PodsReady", "1 of 1 predictor pods Ready")
NO_DEFAULT = Condition(
    "RuntimeConfigReady", T, "DefaultRuntimeConfigMissing", "using the built-in defaults", warn=True
)


def xr(*had: tuple[str, str, str]) -> dict[str, Any]:
    """An XR whose status carries conditions (type, status, reason), as Crossplane wrote them."""
    conditions = [{"type": t, "status": s, "reason": r, "message": "old"} for t, s, r in had]
    return {"status": {"conditions": conditions}}


@dataclass(frozen=True)
class Change:
    id: str
    reason: str
    composite: dict[str, Any]
    conditions: list[Condition]
    told: list[Notice]
    warnings: tuple[str, ...] = ()


CHANGES = [
    Change(
        "first",
        "an object's first condition is news",
        xr(),
        [PODS_READY],
        [Notice("InferenceServicePodsReady is True: PodsReady: 1 of 1 predictor pods Ready")],
    ),
    Change(
        "unchanged",
        "the same status and reason again is not news, whatever the message now says (a count)",
        xr(("InferenceServicePodsReady", "True", "PodsReady")),
        [PODS_READY],
        [],
    ),
    Change(
        "new-reason",
        "the same status for another reason is news (Pending: no GPUs -> Pending: no volume)",
        xr(("InferenceServicePodsReady", "False", "InsufficientGPU")),
        [Condition("InferenceServicePodsReady", F, "VolumePending", "waits for a claim")],
        [Notice("InferenceServicePodsReady is False: VolumePending: waits for a claim")],
    ),
    Change(
        "unknown",
        "a condition still being resolved is not news yet",
        xr(),
        [Condition("ModelReady", U, "Resolving", "")],
        [],
    ),
    Change(
        "already-a-warning",
        "a failure is already a warning event: not told twice",
        xr(("InferenceServicePodsReady", "True", "PodsReady")),
        [Condition("InferenceServicePodsReady", F, "ImagePullAuthFailure", "cannot pull")],
        [],
        ("cannot pull",),
    ),
    Change(
        "warns",
        "seed 004: a missing default runtime config is a warning with its reason, though all works",
        xr(),
        [NO_DEFAULT],
        [
            Notice(
                "RuntimeConfigReady is True: DefaultRuntimeConfigMissing: using the built-in "
                "defaults",
                warning_reason="DefaultRuntimeConfigMissing",
            )
        ],
    ),
    Change(
        "warns-once",
        "the warning is not repeated on every call while the cluster stays without a default",
        xr(("RuntimeConfigReady", "True", "DefaultRuntimeConfigMissing")),
        [NO_DEFAULT],
        [],
    ),
    Change(
        "told-by-another",
        "a condition that repeats another's news (a template's Progressing, its Discovered) is "
        "told once, by the first",
        xr(),
        [
            Condition("Discovered", F, "DiscoveryRunning", "Job ns/d is running"),
            Condition("Progressing", T, "DiscoveryRunning", "Job ns/d is running"),
        ],
        [Notice("Discovered is False: DiscoveryRunning: Job ns/d is running")],
    ),
    Change(
        "repeat-not-told-before",
        "a condition whose twin did not change is news on its own",
        xr(("Discovered", "False", "DiscoveryRunning")),
        [
            Condition("Discovered", F, "DiscoveryRunning", "Job ns/d is running"),
            Condition("Progressing", T, "DiscoveryRunning", "Job ns/d is running"),
        ],
        [Notice("Progressing is True: DiscoveryRunning: Job ns/d is running")],
    ),
    Change(
        "no-message",
        "conditions without a message are not twins of each other",
        xr(),
        [Condition("A", T, "Fine"), Condition("B", T, "Fine")],
        [Notice("A is True: Fine"), Notice("B is True: Fine")],
    ),
    Change(
        "hostile-status",
        "conditions of the wrong shape in the XR read as absent",
        {"status": {"conditions": ["x", None, {"type": ["a"]}]}},
        [PODS_READY],
        [Notice("InferenceServicePodsReady is True: PodsReady: 1 of 1 predictor pods Ready")],
    ),
]


@table(CHANGES)
def test_an_event_for_each_condition_that_changed(case: Change) -> None:
    """`kubectl describe` shows each step once: on the call that changes the condition; Normal,
    or a Warning with the condition's reason for a condition that warns."""
    assert transitions(carried(case.composite), case.conditions, case.warnings) == case.told
