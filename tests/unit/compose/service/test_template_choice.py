"""Why a service does not run on its model's other templates (`explain_template_choice`).

The function records only the template chosen; tools (aim plan) ask this pure explanation, from
the same observed state the composer decided on, which other templates were passed over and why.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from function.api.meta import Manifest
from function.compose.service import catalog_requirements, compose_service, explain_template_choice
from function.kube.contract import Composition, Observed
from tests.cases import Case, table
from tests.unit import loop
from tests.unit.compose.service.test_compose_service import (
    NS,
    auto,
    model,
    service,
    status,
    template,
)

MI325X = {"gpu": {"requests": 1, "model": "MI325X"}}
MI210 = {"gpu": {"requests": 1, "model": "MI210"}}


def not_chosen(
    xr: Manifest, pool: list[Manifest], observed: dict[str, Manifest] | None = None
) -> tuple[str | None, dict[str, str]]:
    """The template the service resolves to, and each other one's reason by `Kind/name`.

    The observed state is the composer's last call (its requirements answered from `pool`),
    with the model's template listings added, as aim plan adds them.
    """
    start = Observed(xr, observed or {})
    comp = loop.reconcile(compose_service, start, pool)
    asked = Composition(requirements=[*comp.requirements, *catalog_requirements(NS)])
    last = dataclasses.replace(start, required=loop.answer(asked, pool))
    resolved = (status(comp).get("resolvedTemplate") or {}).get("name")
    why = {f"{a.kind}/{a.name}": a.why for a in explain_template_choice(last)}
    return resolved, why


@dataclass(frozen=True)
class ChoiceCase(Case):
    xr: Manifest
    pool: list[Manifest]
    chosen: str | None
    why: dict[str, str] = field(default_factory=dict)
    """`Kind/name` of each template not chosen: a part of the reason it must give."""


NOT_AVAILABLE = "not Available (status NotAvailable): no node of the cluster has its GPU (MI325X)"

CASES = [
    ChoiceCase(
        "gpu-not-in-cluster",
        "a template for a GPU no node has is NotAvailable: the reason names the GPU",
        auto(),
        [model(), template("best"), template("mi325x", status="NotAvailable", hardware=MI325X)],
        "best",
        {"AIMServiceTemplate/mi325x": NOT_AVAILABLE},
    ),
    ChoiceCase(
        "unoptimized",
        "an unoptimized profile is filtered out unless the service allows it, and says how",
        auto(),
        [model(), template("best"), template("raw", type="unoptimized")],
        "best",
        {"AIMServiceTemplate/raw": "unoptimized profile; set spec.template.allowUnoptimized"},
    ),
    ChoiceCase(
        "lower-rank-metric",
        "latency is preferred over throughput: the loser names the metric and the order",
        auto(),
        [model(), template("best"), template("thr", metric="throughput")],
        "best",
        {
            "AIMServiceTemplate/thr": "ranks below the chosen template: metric throughput "
            "ranks after latency (preferred: latency, throughput)"
        },
    ),
    ChoiceCase(
        "lower-rank-precision",
        "equal but for precision: the loser names the precision it ranks lower on",
        auto(),
        [model(), template("best"), template("fp16", precision="fp16")],
        "best",
        {"AIMServiceTemplate/fp16": "precision fp16 ranks after fp8"},
    ),
    ChoiceCase(
        "lower-rank-gpu",
        "the GPU outweighs the metric: a latency template on an older GPU loses on the GPU",
        auto(),
        [model(), template("best", metric="throughput"), template("mi210", hardware=MI210)],
        "best",
        {"AIMServiceTemplate/mi210": "GPU MI210 ranks after MI300X"},
    ),
    ChoiceCase(
        "overrides-not-matching",
        "overrides narrow selection: a template with another metric says it is not the override",
        auto(overrides={"metric": "throughput"}),
        [model(), template("best", metric="throughput"), template("lat")],
        "best",
        {
            "AIMServiceTemplate/lat": "metric latency is not the overridden throughput "
            "(spec.overrides)"
        },
    ),
    ChoiceCase(
        "default-template",
        "the model's defaultServiceTemplate is used before ranking: the others were not looked at",
        auto(),
        [model(defaultServiceTemplate="fp16"), template("fp16", precision="fp16"), template("fp8")],
        "fp16",
        {
            "AIMServiceTemplate/fp8": "not considered: AIMModel 'qwen3' names 'fp16' in "
            "spec.defaultServiceTemplate"
        },
    ),
    ChoiceCase(
        "explicit-name",
        "a service naming its template considers no other, even a better one",
        service(template={"name": "fp16"}),
        [model(), template("fp16", precision="fp16"), template("fp8")],
        "fp16",
        {"AIMServiceTemplate/fp8": "not considered: spec.template.name names AIMServiceTemplate"},
    ),
    ChoiceCase(
        "cluster-behind-namespace",
        "a cluster model's catalog template loses to the team's eligible namespace template",
        auto(),
        [
            model(kind="AIMClusterModel"),
            template("team"),
            template("catalog", kind="AIMClusterServiceTemplate"),
        ],
        "team",
        {"AIMClusterServiceTemplate/catalog": "the model has an eligible namespace template"},
    ),
    ChoiceCase(
        "unreadable",
        "a template that cannot be read is named with its field, not left out",
        auto(),
        [model(), template("best"), template("broken", hardware={"gpu": {"requests": "many"}})],
        "best",
        {"AIMServiceTemplate/broken": "AIMServiceTemplate 'broken' cannot be used: spec.hardware"},
    ),
    ChoiceCase(
        "nothing-chosen",
        "a tie chooses nothing: TemplateReady says why, there is no 'other' to explain",
        auto(),
        [model(), template("a"), template("b")],
        None,
        {},
    ),
]


@table(CASES)
def test_each_template_not_chosen_says_why(case: ChoiceCase) -> None:
    """Every other template of the model is listed once, with the reason it lost."""
    chosen, why = not_chosen(case.xr, case.pool)
    assert chosen == case.chosen, case.reason
    assert set(why) == set(case.why), (case.reason, why)
    for key, part in case.why.items():
        assert part in why[key], (case.reason, why[key])


def test_a_service_kept_on_its_template_says_so_for_a_better_one() -> None:
    """Selection is sticky: a better template that appeared later is named as eligible, with
    the running template kept, not as ranking below it."""
    xr: Any = auto()
    xr["status"] = {"resolvedTemplate": {"name": "fp16", "scope": "Namespace"}}
    chosen, why = not_chosen(xr, [model(), template("fp16", precision="fp16"), template("fp8")])
    assert chosen == "fp16"
    assert why["AIMServiceTemplate/fp8"].startswith("eligible (optimized, 1 x MI300X, latency")
    assert "already runs on fp16" in why["AIMServiceTemplate/fp8"]
