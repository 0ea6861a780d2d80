"""A template's discovery through the real engine, one reconcile per observed Job state.

No Job controller or kubelet runs here: each test writes the Job's and Pod's status as they
would, and passes them to `crossplane composition render` as observed and required resources.
Backoff is measured against the function's clock, so failures here are recent ones.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.render.harness import render
from devtools.tools import ROOT, Tools
from tests import simulated

EXAMPLE = ROOT / "examples" / "aimservicetemplate-discovery"
RESULT = [
    {
        "profile": {"metadata": {"engine": "vllm", "gpu": "MI300X", "gpu_count": 1}},
        "models": [{"name": "Qwen/Qwen3-32B", "source": "hf://Qwen/Qwen3-32B", "size_gb": 61}],
    }
]

Obj = dict[str, Any]


def reconcile(
    tools: Tools,
    target: str,
    tmp_path: Path,
    xr: Obj,
    *,
    observed: Sequence[Obj] = (),
    required: Sequence[Obj] = (),
    nodes: Path = EXAMPLE / "required.yaml",
) -> tuple[Obj, list[Obj]]:
    xr_path = tmp_path / "xr.yaml"
    xr_path.write_text(yaml.safe_dump(xr))
    paths = [nodes]
    if required:
        paths.append(tmp_path / "required.yaml")
        paths[-1].write_text(yaml.safe_dump_all(required))
    observed_path = None
    if observed:
        observed_path = tmp_path / "observed.yaml"
        observed_path.write_text(yaml.safe_dump_all(observed))
    result = render(tools, target, xr_path, required=paths, observed=observed_path)
    assert result.returncode == 0, result.stderr
    objects = [o for o in result.objects if o.get("kind") != "Result"]
    return objects[0], objects[1:]


def conditions(xr: Obj) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in xr["status"]["conditions"]}


def as_observed(job: Obj, **status: Any) -> Obj:
    """The composed Job as the API server returns it, with a status the Job controller wrote."""
    meta = {k: v for k, v in job["metadata"].items() if k != "ownerReferences"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": job["spec"],
        "status": status,
    }


pod = simulated.discovery_pod


def with_status(xr: Obj, rendered: Obj) -> Obj:
    status = {k: v for k, v in rendered["status"].items() if k != "conditions"}
    return {**xr, "status": status}


@pytest.fixture
def created(tools: Tools, function_target: str, tmp_path: Path) -> tuple[Obj, Obj]:
    """The template after its first reconcile (status written back) and its Job."""
    xr = yaml.safe_load((EXAMPLE / "xr.yaml").read_text())
    rendered, composed = reconcile(tools, function_target, tmp_path, xr)
    [job] = composed
    assert job["kind"] == "Job"
    assert rendered["status"]["status"] == "Pending"
    return with_status(xr, rendered), job


def test_running(
    tools: Tools, function_target: str, tmp_path: Path, created: tuple[Obj, Obj]
) -> None:
    """Through the real render: a running discovery Job keeps the template Progressing."""
    xr, job = created
    rendered, composed = reconcile(
        tools, function_target, tmp_path, xr, observed=[as_observed(job, active=1)]
    )
    assert rendered["status"]["status"] == "Progressing"
    assert conditions(rendered)["Discovered"] == ("False", "DiscoveryRunning")
    assert [c["metadata"]["name"] for c in composed] == [job["metadata"]["name"]]


def test_image_pull_failure_while_running(
    tools: Tools, function_target: str, tmp_path: Path, created: tuple[Obj, Obj]
) -> None:
    """Through the real render: a pull failure is reported while the Job waits."""
    xr, job = created
    rendered, _ = reconcile(
        tools,
        function_target,
        tmp_path,
        xr,
        observed=[as_observed(job, active=1)],
        required=[pod(job, "Pending", waiting="ErrImagePull")],
    )
    assert conditions(rendered)["Discovered"] == ("False", "DiscoveryImagePullFailed")


def complete(job: Obj) -> Obj:
    return as_observed(job, succeeded=1, conditions=[{"type": "Complete", "status": "True"}])


def test_succeeded_with_output(
    tools: Tools, function_target: str, tmp_path: Path, created: tuple[Obj, Obj]
) -> None:
    """Through the real render: a finished discovery fills the template's status."""
    xr, job = created
    rendered, composed = reconcile(
        tools,
        function_target,
        tmp_path,
        xr,
        observed=[complete(job)],
        required=[pod(job, "Succeeded", message=json.dumps(RESULT))],
    )
    assert rendered["status"]["status"] == "Available"
    assert rendered["status"]["modelSources"][0]["size"] == "61Gi"
    # Kept while the result is only in this answer; the next reconcile, seeing it in status,
    # drops it (the unit test follows both calls).
    assert [o["kind"] for o in composed] == ["Job"]


def test_succeeded_with_garbage(
    tools: Tools, function_target: str, tmp_path: Path, created: tuple[Obj, Obj]
) -> None:
    """Through the real render: output discovery cannot read is a failed attempt."""
    xr, job = created
    rendered, composed = reconcile(
        tools,
        function_target,
        tmp_path,
        xr,
        observed=[complete(job)],
        required=[pod(job, "Succeeded", message="WARNING: no GPU found; {not json")],
    )
    assert rendered["status"]["status"] == "Failed"
    assert conditions(rendered)["Discovered"] == ("False", "DiscoveryOutputInvalid")
    assert rendered["status"]["discovery"]["attempts"] == 1
    assert "modelSources" not in rendered["status"]
    assert len(composed) == 1  # kept for inspection until the backoff window ends


def test_failed_then_backing_off(
    tools: Tools, function_target: str, tmp_path: Path, created: tuple[Obj, Obj]
) -> None:
    """Through the real render: a failed discovery backs off before it retries."""
    xr, job = created
    now = datetime.now(UTC).replace(microsecond=0)
    failed = as_observed(
        job,
        failed=1,
        conditions=[
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
                "lastTransitionTime": now.isoformat().replace("+00:00", "Z"),
            }
        ],
    )
    logs = "Traceback ...\nValueError: unknown precision fp3"
    rendered, composed = reconcile(
        tools,
        function_target,
        tmp_path,
        xr,
        observed=[failed],
        required=[pod(job, "Failed", message=logs)],
    )
    state = rendered["status"]["discovery"]
    assert rendered["status"]["status"] == "Failed"
    assert state["attempts"] == 1
    assert "unknown precision fp3" in state["lastFailureReason"]
    assert len(composed) == 1

    # Backing off: the Job is gone (TTL or a person deleted it) and the window has not ended.
    rendered, composed = reconcile(tools, function_target, tmp_path, with_status(xr, rendered))
    assert conditions(rendered)["Discovered"] == ("False", "AwaitingDiscoveryRetry")
    assert composed == []


def test_no_node_with_the_gpu_is_not_available(
    tools: Tools, function_target: str, tmp_path: Path
) -> None:
    """Through the real render: no node with the GPU makes the template NotAvailable."""
    xr = yaml.safe_load((EXAMPLE / "xr.yaml").read_text())
    mi350 = tmp_path / "nodes.yaml"
    docs = list(yaml.safe_load_all((EXAMPLE / "required.yaml").read_text()))
    docs[1]["metadata"]["labels"] = {"amd.com/gpu.device-id": "75a0"}
    mi350.write_text(yaml.safe_dump_all(docs))
    rendered, composed = reconcile(tools, function_target, tmp_path, xr, nodes=mi350)

    assert rendered["status"]["status"] == "NotAvailable"
    assert conditions(rendered)["GPUReady"] == ("False", "GPUNotAvailable")
    assert composed == []
