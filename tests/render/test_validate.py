"""Everything rendered from examples/ validates against its real schema, and bad objects do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from devtools.render import ROOT, Tools, render, render_example, validate

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
    """Every composed object is valid for its real schema: KServe, Gateway API, AIM XRDs."""
    objects = composed_objects(tools, function_target, example)
    builtin = [o for o in objects if o["apiVersion"] in BUILTIN_API_VERSIONS]
    for obj in builtin:
        # Kubernetes' own kinds have no CRD: their published OpenAPI schema, strictly.
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    custom = [o for o in objects if o not in builtin]
    if custom:
        rendered = tmp_path / "rendered.yaml"
        rendered.write_text(yaml.safe_dump_all(custom))
        assert_valid(tools, [crds / "kserve", crds / "gateway-api", XRDS], rendered)


@pytest.mark.parametrize(
    ("example", "headline"),
    [
        ("aimservice-basic", "Starting"),
        ("aimclustermodel-discovery", "Progressing"),
        ("aimmodel-custom", "Progressing"),
        ("aimservicetemplate-discovery", "Pending"),
        ("aimclusterservicetemplate-discovered", "Available"),
        ("aimmodelcache-downloading", "Progressing"),
        ("aimtemplatecache-cluster-template", "Progressing"),
        ("aimservice-cache-model", "Starting"),
    ],
)
def test_full_rendered_xr_validates_against_its_xrd(
    tools: Tools, function_target: str, tmp_path: Path, example: str, headline: str
) -> None:
    """The status the function writes fits the XRD's status schema (or Crossplane would drop it)."""
    directory = ROOT / "examples" / example
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


@pytest.mark.parametrize(
    ("reason", "breakage", "message"),
    [
        ("unknown field", {"bogus": True}, "bogus"),
        ("wrong type", {"minReplicas": "one"}, "spec.predictor.minReplicas"),
        ("containers not a list", {"containers": "oops"}, "spec.predictor.containers"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v else "",
)
def test_validator_rejects_a_broken_inference_service(
    tools: Tools,
    function_target: str,
    crds: Path,
    tmp_path: Path,
    reason: str,
    breakage: dict[str, Any],
    message: str,
) -> None:
    """The schema check has teeth: a broken InferenceService fails, naming the field."""
    [isvc] = composed_objects(tools, function_target, ROOT / "examples" / "aimservice-basic")
    isvc["spec"]["predictor"].update(breakage)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(isvc))

    result = validate(tools, [crds / "kserve"], path)
    assert result.returncode != 0, reason
    assert message in result.stdout + result.stderr, reason
