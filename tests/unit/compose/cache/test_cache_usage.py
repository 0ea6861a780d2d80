"""status.lastUsed of a model cache: when a service mounting it last started."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from function.compose.cache import usage
from function.compose.cache.model_cache import compose_model_cache
from function.compose.cache.steps import PVC
from function.kube.contract import Observed
from tests.cases import table
from tests.unit.compose.service.test_caching import downloading, model_cache, reconcile

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
MINE = "org-model-cache"


def isvc(claims: list[str], *, ready: str = "True", since: Any = "2026-11-23T10:00:00Z") -> Any:
    """An InferenceService mounting `claims`, its Ready condition `ready` since `since`."""
    volumes = [
        {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)
    ]
    ready_condition = {"type": "Ready", "status": ready, "lastTransitionTime": since}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "chat", "namespace": "ml-team"},
        "spec": {"predictor": {"volumes": volumes}},
        "status": {"conditions": [ready_condition]},
    }


@dataclass(frozen=True)
class Use:
    id: str
    reason: str
    services: list[Any]
    want: str | None
    previous: str | None = field(default=None)


USES = [
    Use("never", "no service mounts it: never used, nothing invented", [isvc(["other"])], None),
    Use(
        "started",
        "a Ready service mounting the PVC: the time it turned Ready",
        [isvc(["other", MINE])],
        "2026-11-23T10:00:00Z",
    ),
    Use(
        "latest-of-two",
        "two services: the later start",
        [isvc([MINE]), isvc([MINE], since="2026-11-23T11:30:00+00:00")],
        "2026-11-23T11:30:00Z",
    ),
    Use(
        "not-ready",
        "a service still starting has not used it yet",
        [isvc([MINE], ready="False")],
        None,
    ),
    Use(
        "kept",
        "its services gone, the cache keeps when it was last used",
        [],
        "2026-11-20T08:00:00Z",
        previous="2026-11-20T08:00:00Z",
    ),
    Use(
        "never-back",
        "an older start than the one recorded does not move it back",
        [isvc([MINE], since="2026-11-01T00:00:00Z")],
        "2026-11-20T08:00:00Z",
        previous="2026-11-20T08:00:00Z",
    ),
    Use(
        "future",
        "a start after this call is another clock's error: not believed",
        [isvc([MINE], since="2027-01-01T00:00:00Z")],
        None,
    ),
    Use(
        "hostile",
        "times and volumes of the wrong shape read as absent",
        [isvc([MINE], since=["x"]), {"spec": {"predictor": {"volumes": "all"}}}, "junk"],
        None,
    ),
]


@table(USES)
def test_last_used_is_when_a_service_mounting_the_cache_last_started(case: Use) -> None:
    """A platform team reads lastUsed to find caches nobody has started a service with lately."""
    observed = Observed({}, required={usage.INFERENCE_SERVICES: tuple(case.services)}, now=NOW)
    assert usage.last_used(observed, MINE, case.previous) == case.want


def test_an_available_cache_asks_for_its_namespaces_inference_services() -> None:
    """Once its PVC exists the cache lists the InferenceServices and records the last start."""
    _, pvc, _ = downloading()
    cache = model_cache({"status": "Available", "size": "1Gi"}, size="1Gi")
    comp = reconcile(compose_model_cache, cache, resources={PVC: pvc}, pool=[isvc([MINE])])
    assert comp.status["lastUsed"] == "2026-11-23T10:00:00Z"
    assert usage.INFERENCE_SERVICES in {r.name for r in comp.requirements}
