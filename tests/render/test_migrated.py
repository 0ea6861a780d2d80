"""Manifests converted by `scripts/migrate` (seed 002's journey, the AIM operator's), through the
real engine."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from devtools.render.harness import render
from devtools.tools import ROOT, Tools
from tests.render.test_render import conditions, split, status, write

OLDER_CATALOG = ROOT / "examples" / "journeys" / "older-api-catalog"
SOURCE = {
    "modelId": "meta-llama/Llama-3.1-8B-Instruct",
    "sourceUri": "hf://meta-llama/Llama-3.1-8B-Instruct",
}


def migrated(path: Path) -> list[dict[str, Any]]:
    """`scripts/migrate` on one journey file, as the journey tells users to run it."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "migrate"), str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return list(yaml.safe_load_all(proc.stdout))


def _named(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    [doc] = [d for d in docs if d["metadata"]["name"] == name]
    return doc


def test_an_older_generation_routed_service_runs_with_its_route_template(
    tools: Tools, function_target: str, tmp_path: Path
) -> None:
    """Seed 002's routed service, migrated: its route template (`{.spec.model}` among its
    fragments) renders to the path of its team and model, and once KServe and the Gateway
    report, the service is Running, not Degraded with RouteTemplateInvalid."""
    service = _named(migrated(OLDER_CATALOG / "03-services.yaml"), "llama-research")
    template = _named(migrated(OLDER_CATALOG / "01-catalog.yaml"), "llama-3-8b-throughput")
    template["status"] = {
        "status": "Available",
        "profile": {"metadata": {"type": "optimized"}},
        "modelSources": [{**SOURCE, "size": "16Gi"}],
    }
    [model] = yaml.safe_load_all((OLDER_CATALOG / "02-dev-model-in-ml-research.yaml").read_text())
    model["status"] = {"status": "Ready"}
    config = _named(
        list(yaml.safe_load_all((OLDER_CATALOG / "00-prerequisites.yaml").read_text())),
        "ml-research",
    )
    # The template caches itself; its model cache is filled already.
    cache = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModelCache",
        "metadata": {"name": "llama-3-1-8b-instruct-cache", "namespace": "ml-research"},
        "spec": SOURCE,
        "status": {"status": "Available", "persistentVolumeClaim": "llama-3-1-8b-instruct-cache"},
    }
    xr = write(tmp_path, "xr.yaml", service)
    required = write(tmp_path, "required.yaml", template, model, config, cache)

    first, composed, _ = split(render(tools, function_target, xr, required=[required]))
    assert "RouteTemplateInvalid" not in {r for _, r in conditions(first).values()}, status(first)
    assert status(first)["routing"]["path"] == "/ml-research/research/meta-llama-3-8b-instruct-dev"
    [route] = [c for c in composed if c["kind"] == "HTTPRoute"]
    [isvc] = [c for c in composed if c["kind"] == "InferenceService"]

    # KServe reports the InferenceService Ready and the Gateway accepts the route.
    isvc["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    [parent] = route["spec"]["parentRefs"]
    route["status"] = {
        "parents": [
            {
                "parentRef": parent,
                "controllerName": "gateway.example.com/controller",
                "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}],
            }
        ]
    }
    observed = write(tmp_path, "observed.yaml", isvc, route)
    xr_after, _, _ = split(
        render(tools, function_target, xr, required=[required], observed=observed)
    )
    assert status(xr_after)["status"] == "Running", conditions(xr_after)
    assert conditions(xr_after)["HTTPRouteReady"] == ("True", "HTTPRouteAccepted")
    assert (parent["name"], parent["namespace"]) == ("inference-gateway", "gateways")


OPERATOR_V1ALPHA2 = ROOT / "examples" / "migrate" / "operator-v1alpha2.yaml"
QWEN = {
    "modelId": "qwen/qwen3-32b-fp8",
    "sourceUri": "hf://Qwen/Qwen3-32B-FP8",
}


def test_operator_service_on_a_profile_runs_on_the_converted_template(
    tools: Tools, function_target: str, tmp_path: Path
) -> None:
    """The AIM operator's v1alpha2 service on a profile, converted: it runs the template the
    profile became, on the model with the profile's image, mounts the profile's weights from
    their cache, carries the profile override's environment, and is Running at the path its
    converted template renders once KServe and the Gateway report."""
    docs = migrated_docs(OPERATOR_V1ALPHA2)
    service = _named_kind(docs, "AIMService", "chat")
    template = _named_kind(docs, "AIMServiceTemplate", "qwen3-32b-fp8-mi300x")
    template["status"] = {
        "status": "Available",
        "profile": {"metadata": {"type": "optimized"}},
        "modelSources": [{**QWEN, "size": "35Gi"}],
    }
    model = _named_kind(docs, "AIMModel", "qwen3-32b")
    model["status"] = {"status": "Ready"}
    cache = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModelCache",
        "metadata": {"name": "qwen3-32b-fp8-cache", "namespace": "ml-team"},
        "spec": QWEN,
        "status": {"status": "Available", "persistentVolumeClaim": "qwen3-32b-fp8-cache"},
    }
    xr = write(tmp_path, "xr.yaml", service)
    required = write(tmp_path, "required.yaml", template, model, cache)

    first, composed, _ = split(render(tools, function_target, xr, required=[required]))
    assert status(first)["resolvedTemplate"]["name"] == "qwen3-32b-fp8-mi300x", status(first)
    assert status(first)["resolvedModel"]["name"] == "qwen3-32b"
    assert status(first)["routing"]["path"] == "/ml-team/qwen3-32b-fp8-mi300x"
    [route] = [c for c in composed if c["kind"] == "HTTPRoute"]
    [isvc] = [c for c in composed if c["kind"] == "InferenceService"]
    [container] = isvc["spec"]["predictor"]["containers"]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    assert env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert container["image"] == "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
    claims = {
        v["persistentVolumeClaim"]["claimName"]
        for v in isvc["spec"]["predictor"].get("volumes", [])
        if "persistentVolumeClaim" in v
    }
    assert "qwen3-32b-fp8-cache" in claims, isvc["spec"]["predictor"]

    isvc["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    [parent] = route["spec"]["parentRefs"]
    route["status"] = {
        "parents": [
            {
                "parentRef": parent,
                "controllerName": "gateway.example.com/controller",
                "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}],
            }
        ]
    }
    observed = write(tmp_path, "observed.yaml", isvc, route)
    xr_after, _, _ = split(
        render(tools, function_target, xr, required=[required], observed=observed)
    )
    assert status(xr_after)["status"] == "Running", conditions(xr_after)


def migrated_docs(path: Path) -> list[dict[str, Any]]:
    """`scripts/migrate` on a file whose report may list what was not carried (exit 1)."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "migrate"), str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode in (0, 1), proc.stderr
    return list(yaml.safe_load_all(proc.stdout))


def _named_kind(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [doc] = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc
