"""How every composer with a runtime config ends (function/compose/frame.py)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from function.api.cache import CacheStatusValue, TemplateCacheStatus
from function.api.common import ObservedStatus
from function.api.model import ModelStatus, ModelStatusValue
from function.api.service import AIMServiceStatus, ServiceStatusValue
from function.api.template import TemplateStatus, TemplateStatusValue
from function.compose.frame import finish
from function.kube.contract import Composition, Observed
from tests.cases import Case, table


@dataclass(frozen=True)
class ReadyCase(Case):
    status: ObservedStatus
    headline: StrEnum
    ready: bool


READY_CASES = [
    ReadyCase(
        "running",
        "a service that serves",
        AIMServiceStatus(status=ServiceStatusValue.RUNNING),
        ServiceStatusValue.RUNNING,
        ready=True,
    ),
    ReadyCase(
        "ready",
        "a model with a template that serves",
        ModelStatus(status=ModelStatusValue.READY),
        ModelStatusValue.READY,
        ready=True,
    ),
    ReadyCase(
        "available",
        "a template that can be used",
        TemplateStatus(status=TemplateStatusValue.AVAILABLE),
        TemplateStatusValue.AVAILABLE,
        ready=True,
    ),
    ReadyCase(
        "cache-available",
        "a cache whose weights are downloaded",
        TemplateCacheStatus(status=CacheStatusValue.AVAILABLE),
        CacheStatusValue.AVAILABLE,
        ready=True,
    ),
    ReadyCase(
        "pending",
        "everything composed may be ready, but the object is not",
        AIMServiceStatus(status=ServiceStatusValue.PENDING),
        ServiceStatusValue.PENDING,
        ready=False,
    ),
    ReadyCase(
        "degraded",
        "a degraded object is not Ready to Crossplane",
        AIMServiceStatus(status=ServiceStatusValue.DEGRADED),
        ServiceStatusValue.DEGRADED,
        ready=False,
    ),
    ReadyCase(
        "not-available",
        "a template no node can run",
        TemplateStatus(status=TemplateStatusValue.NOT_AVAILABLE),
        TemplateStatusValue.NOT_AVAILABLE,
        ready=False,
    ),
]


@table(READY_CASES)
def test_the_xr_is_ready_only_when_its_aim_headline_says_so(case: ReadyCase) -> None:
    """Crossplane's Ready follows the AIM headline, not merely "everything composed is ready"."""
    comp = Composition()
    finish(comp, Observed({"metadata": {"name": "x"}}), case.status, case.headline)
    assert comp.ready is case.ready, case.reason
    assert comp.status["status"] == case.headline.value


def test_the_status_names_the_generation_it_describes() -> None:
    """GitOps tools tell a status that has not caught up from a current one by this field."""
    comp = Composition()
    observed = Observed({"metadata": {"name": "x", "generation": 7}})
    finish(comp, observed, TemplateStatus(observed_generation=3), TemplateStatusValue.PENDING)
    assert comp.status == {"status": "Pending", "observedGeneration": 7}


def test_an_object_without_a_generation_keeps_what_its_status_says() -> None:
    """Render and tests send XRs without one; the status is written as the composer made it."""
    comp = Composition()
    finish(comp, Observed({"metadata": {"name": "x"}}), ModelStatus(), ModelStatusValue.PENDING)
    assert comp.status == {"status": "Pending"}
