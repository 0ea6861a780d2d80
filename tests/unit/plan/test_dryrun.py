"""The discovery stand-in's answer for an image no model describes: the older-API catalog's
cluster model has discovery disabled, so the function never reads its image, and its template's
dry-run is answered from the image's labels, read through the plan's registry (a stand-in
inspector here; tests/registry/test_plan.py reads a real registry)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aim_plan.load import load
from aim_plan.registry import Answers, OfflineRegistry
from aim_plan.rounds import plan
from aim_plan.simulate import gpu_node
from aim_plan.world import World
from function.registry.inspect import (
    FailureKind,
    Inspection,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from tests.cases import Case, table
from tests.e2e.images import SEED002_CLUSTER

CATALOG = Path(__file__).parents[3] / "examples" / "journeys" / "older-api-catalog"


@dataclass
class StandIn:
    """An inspector answering every image with `answer`, recording what it was asked."""

    answer: Callable[[InspectionRequest], InspectionOutcome]
    asked: list[InspectionRequest] = field(default_factory=list)

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        self.asked.append(request)
        return self.answer(request)


def labelled(labels: dict[str, str]) -> Callable[[InspectionRequest], InspectionOutcome]:
    return lambda r: Inspection(r.image, "sha256:" + "1" * 64, labels)


def unreachable(request: InspectionRequest) -> InspectionOutcome:
    return RegistryFailure(request.image, FailureKind.UNREACHABLE, "no route to host")


@dataclass(frozen=True)
class Row(Case):
    answer: Callable[[InspectionRequest], InspectionOutcome]
    status: str
    message: str = ""


ROWS = [
    Row(
        "labels-read",
        "the image's labels give the profile: the dry-run succeeds and the template is Available",
        labelled(SEED002_CLUSTER.labels()),
        "Available",
    ),
    Row(
        "registry-unreachable",
        "no labels: the dry-run fails saying where the plan looked and which field to give",
        unreachable,
        "Failed",
        "add it to the model's spec.imageMetadata",
    ),
    Row(
        "labels-unreadable",
        "a deployments label that is not a list is no answer: the dry-run fails the same way",
        labelled({**SEED002_CLUSTER.labels(), "com.amd.aim.model.recommendedDeployments": "{"}),
        "Failed",
        "add it to the model's spec.imageMetadata",
    ),
]


@table(ROWS)
def test_a_discovery_disabled_models_template_is_answered_from_its_image(case: Row) -> None:
    """The cluster template's dry-run answers from what the registry says of its image."""
    stand_in = StandIn(case.answer)
    offline = OfflineRegistry()
    loaded = load([CATALOG])
    result = plan(
        World([*loaded.objects, gpu_node("MI300X", 8)]), registry=Answers(stand_in, offline)
    )
    [template] = result.world.of_kind("aim.silogen.ai/v1alpha1", "AIMClusterServiceTemplate")
    assert template["status"]["status"] == case.status
    messages = " ".join(c.get("message", "") for c in template["status"]["conditions"])
    assert case.message in messages
    # Asked once in the whole plan, without a credential (the catalog's Job pulls anonymously).
    cluster = [r for r in stand_in.asked if r.image == SEED002_CLUSTER.image]
    assert len(cluster) == 1
    assert cluster[0].credential is None
