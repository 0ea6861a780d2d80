"""The real `crossplane composition render` (CLI + core) against function-aim over gRPC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.render import ROOT, Rendered, Tools, render, render_example

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/xr.yaml"))
BASIC = ROOT / "examples" / "aimservice-basic"

Obj = dict[str, Any]


def split(result: Rendered) -> tuple[Obj, list[Obj], list[Obj]]:
    """(XR, composed resources, function results) from render's YAML stream."""
    assert result.returncode == 0, result.stderr
    objects = result.objects
    results = [o for o in objects if o.get("kind") == "Result"]
    rest = [o for o in objects if o.get("kind") != "Result"]
    return rest[0], rest[1:], results


def status(xr: Obj) -> Any:
    return xr["status"]


def conditions(xr: Obj) -> dict[str, tuple[str, str]]:
    items = status(xr).get("conditions", [])
    assert isinstance(items, list)
    return {c["type"]: (c["status"], c.get("reason", "")) for c in items}


def write(tmp_path: Path, name: str, *docs: Obj) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_renders_without_errors(
    tools: Tools, function_target: str, example: Path
) -> None:
    """Each example goes through the real engine and the function with no warning or fatal."""
    xr, composed, results = split(render_example(tools, function_target, example))
    assert composed
    assert [r for r in results if r.get("severity") != "Normal"] == []
    assert conditions(xr)["Synced"][0] == "True"


def test_basic_example_composes_an_inference_service_on_mi300x(
    tools: Tools, function_target: str
) -> None:
    """The InferenceService requests one AMD GPU and is pinned to MI300X device ids."""
    xr, composed, _ = split(render_example(tools, function_target, BASIC))

    assert [c["kind"] for c in composed] == ["InferenceService"]
    isvc = composed[0]
    meta = isvc["metadata"]
    assert isinstance(meta, dict)
    assert meta["name"] == "qwen-chat-a04542d9"
    assert meta["annotations"]["crossplane.io/composition-resource-name"] == "inference-service"
    assert meta["labels"]["crossplane.io/composite"] == "qwen-chat"
    assert meta["ownerReferences"][0]["kind"] == "AIMService"
    predictor = isvc["spec"]["predictor"]
    assert predictor["containers"][0]["resources"]["limits"]["amd.com/gpu"] == "1"
    expression = predictor["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert expression == {
        "key": "amd.com/gpu.device-id",
        "operator": "In",
        "values": ["74a1", "74a9", "74b5", "74bd"],
    }

    assert status(xr)["status"] == "Starting"
    assert status(xr)["resolvedTemplate"] == {
        "name": "qwen3-32b-mi300x-latency-fp8",
        "scope": "Cluster",
        "kind": "AIMClusterServiceTemplate",
    }
    assert conditions(xr)["TemplateReady"] == ("True", "Resolved")
    assert conditions(xr)["InferenceServiceReady"] == ("False", "Creating")
    # Crossplane's own verdict: not ready until the InferenceService is.
    assert conditions(xr)["Ready"][0] == "False"


def test_missing_template_is_reported_after_crossplane_looked(
    tools: Tools, function_target: str
) -> None:
    """Crossplane fetches both lookups, finds nothing, and the service says so: not "pending"."""
    xr, composed, results = split(render(tools, function_target, BASIC / "xr.yaml"))

    assert composed == []
    assert status(xr)["status"] == "Failed"
    assert conditions(xr)["TemplateReady"] == ("False", "TemplateNotFound")
    warnings = [r["message"] for r in results if r.get("severity") == "Warning"]
    assert len(warnings) == 1
    assert "spec.template.name" in str(warnings[0])


def test_namespace_template_shadows_the_cluster_template(
    tools: Tools, function_target: str, tmp_path: Path
) -> None:
    """With both present, the team's template is used."""
    cluster = yaml.safe_load((BASIC / "required.yaml").read_text())
    namespaced = {
        **cluster,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": cluster["metadata"]["name"], "namespace": "ml-team"},
        "spec": {**cluster["spec"], "hardware": {"gpu": {"requests": 2, "model": "MI325X"}}},
    }
    required = write(tmp_path, "required.yaml", cluster, namespaced)
    xr, composed, _ = split(render(tools, function_target, BASIC / "xr.yaml", required=[required]))

    assert status(xr)["resolvedTemplate"]["scope"] == "Namespace"
    predictor = composed[0]["spec"]["predictor"]
    assert predictor["containers"][0]["resources"]["limits"]["amd.com/gpu"] == "2"


def test_ready_inference_service_makes_the_service_running(
    tools: Tools, function_target: str, tmp_path: Path
) -> None:
    """Simulates KServe (no controller here): an observed Ready InferenceService → Running."""
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "qwen-chat-a04542d9",
            "namespace": "ml-team",
            "annotations": {"crossplane.io/composition-resource-name": "inference-service"},
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    observed = write(tmp_path, "observed.yaml", isvc)
    xr, _, _ = split(
        render(
            tools,
            function_target,
            BASIC / "xr.yaml",
            required=[BASIC / "required.yaml"],
            observed=observed,
        )
    )

    assert status(xr)["status"] == "Running"
    assert conditions(xr)["InferenceServiceReady"] == ("True", "Ready")
    assert conditions(xr)["Ready"][0] == "True"
