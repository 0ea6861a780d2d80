"""Everything rendered from examples/ validates against its real schema, and bad objects do not."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from devtools.render.harness import render, render_example, validate
from devtools.tools import ROOT, Tools
from tests.cases import Case, table

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/xr.yaml"))
XRDS = ROOT / "xrds"
BUILTIN_API_VERSIONS = frozenset({"v1", "batch/v1"})
# The oldest Kubernetes release our Jobs must fit (batch.kubernetes.io/job-name labels, 1.27+).
KUBERNETES_VERSION = "1.30"


def composed_objects(tools: Tools, target: str, example: Path) -> list[dict[str, Any]]:
    result = render_example(tools, target, example)
    assert result.returncode == 0, result.stderr
    return [o for o in result.objects[1:] if o.get("kind") != "Result"]


def assert_valid(tools: Tools, extensions: list[Path], path: Path) -> None:
    result = validate(tools, extensions, path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 failure cases" in result.stdout
    assert " 0 missing schemas" in result.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_manifests_validate_against_the_xrds(tools: Tools, example: Path) -> None:
    """What a user applies from examples/ passes the API server's schema and CEL rules."""
    assert_valid(tools, [XRDS], example / "xr.yaml")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_rendered_objects_validate_against_real_crds(
    tools: Tools, function_target: str, crds: Path, example: Path, tmp_path: Path
) -> None:
    """Every composed object is valid for its real schema: KServe, Gateway API, the KEDA HTTP
    add-on, AIM XRDs."""
    objects = composed_objects(tools, function_target, example)
    builtin = [o for o in objects if o["apiVersion"] in BUILTIN_API_VERSIONS]
    for obj in builtin:
        # Kubernetes' own kinds have no CRD: their published OpenAPI schema, strictly.
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    custom = [o for o in objects if o not in builtin]
    if custom:
        rendered = tmp_path / "rendered.yaml"
        rendered.write_text(yaml.safe_dump_all(custom))
        add_on = tools.autoscaling_crds / "keda-http"
        assert_valid(tools, [crds / "kserve", crds / "gateway-api", add_on, XRDS], rendered)


@dataclass(frozen=True)
class StatusCase(Case):
    headline: str


# One example per kind, and per shape of status (resolved, discovered, downloading, cache-backed).
STATUS_CASES = [
    StatusCase("aimservice-basic", "a service's resolved references and its ISVC", "Starting"),
    StatusCase("aimclustermodel-discovery", "a cluster model's inspected image", "Progressing"),
    StatusCase("aimmodel-custom", "a custom model's sources", "Progressing"),
    StatusCase(
        "aimmodel-air-gapped",
        "metadata given in spec, shown in status.imageMetadata",
        "Progressing",
    ),
    StatusCase("aimmodel-no-aim-labels", "a model Failed for its image's labels", "Failed"),
    StatusCase("aimservicetemplate-discovery", "a template's discovery Job state", "Pending"),
    StatusCase(
        "aimclusterservicetemplate-discovered",
        "a discovered profile and model sources",
        "Available",
    ),
    StatusCase("aimmodelcache-downloading", "a cache's volume and download", "Progressing"),
    StatusCase(
        "aimtemplatecache-cluster-template", "a template cache's model caches", "Progressing"
    ),
    StatusCase("aimservice-cache-model", "a service with its template cache", "Starting"),
]


@table(STATUS_CASES)
def test_full_rendered_xr_validates_against_its_xrd(
    tools: Tools, function_target: str, tmp_path: Path, case: StatusCase
) -> None:
    """The status the function writes fits the XRD's status schema (or Crossplane would drop it).
    The case's id is the example's directory."""
    headline = case.headline
    directory = ROOT / "examples" / case.id
    required = directory / "required.yaml"
    observed = directory / "observed.yaml"
    result = render(
        tools,
        function_target,
        directory / "xr.yaml",
        required=[required] if required.exists() else [],
        observed=observed if observed.exists() else None,
        full_xr=True,
    )
    assert result.returncode == 0, result.stderr
    xr = result.objects[0]
    assert xr["status"]["status"] == headline
    path = tmp_path / "xr.yaml"
    path.write_text(yaml.safe_dump(xr))
    assert_valid(tools, [XRDS], path)


@dataclass(frozen=True)
class BreakageCase(Case):
    breakage: dict[str, Any]
    message: str


BREAKAGE_CASES = [
    BreakageCase("unknown-field", "pruning would drop it silently", {"bogus": True}, "bogus"),
    BreakageCase(
        "wrong-type",
        "the API server would refuse it",
        {"minReplicas": "one"},
        "spec.predictor.minReplicas",
    ),
    BreakageCase(
        "not-a-list",
        "a structure of the wrong shape",
        {"containers": "oops"},
        "spec.predictor.containers",
    ),
]


@table(BREAKAGE_CASES)
def test_validator_rejects_a_broken_inference_service(
    tools: Tools, function_target: str, crds: Path, tmp_path: Path, case: BreakageCase
) -> None:
    """The schema check has teeth: a broken InferenceService fails, naming the field."""
    [isvc] = composed_objects(tools, function_target, ROOT / "examples" / "aimservice-basic")
    isvc["spec"]["predictor"].update(case.breakage)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(isvc))

    result = validate(tools, [crds / "kserve"], path)
    assert result.returncode != 0, case.reason
    assert case.message in result.stdout + result.stderr, case.reason
