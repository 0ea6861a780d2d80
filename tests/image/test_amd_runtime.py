"""Discovery against AMD's own AIM runtime: a real AIM image built from aim-build's source.

The image is Qwen/Qwen3-32B as aim-build 0.9 layers it (devtools/cluster/amdimage.py), with the
labels AMD's generator makes from the model's metadata.yaml. The discovery Job is the one the
function composes for a template; its container runs under runc as the Pod would: the Job's
command, arguments, environment and user, the image's working directory, a writable
/aim-discovery and /dev/termination-log, and a network of its own with no way out (a cluster
without egress: the runtime cannot ask the Hub for sizes). What it leaves in the termination
log goes back to the function as the kubelet would report it. Nothing here is a stand-in.

AMD's source is test data outside the project: without it (a bare clone) these tests skip and
say which variable names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.cluster import amdimage
from devtools.cluster.oci import write_archive
from devtools.pkg.image import Bundle, Pod, from_archive, run_once, unpack
from function.compose.template import DISCOVERY_JOB, compose_template
from function.kube.contract import Composition, Observed
from function.registry.labels import image_metadata
from tests import simulated
from tests.unit import loop

MODEL = "Qwen/Qwen3-32B"
IMAGE = "registry.local/amdenterpriseai/aim-qwen-qwen3-32b:0.9.0"
NS = "team"
T0 = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"amd.com/gpu.device-id": "74a1"}},
}


def _source(release: str) -> amdimage.Source:
    found = amdimage.source(release)
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(scope="module")
def labels() -> dict[str, str]:
    src, generator = _source("0.9"), _source("2026")
    metadata = src.path / "metadata" / MODEL / "metadata.yaml"
    return amdimage.generated_labels(metadata, generator, model=MODEL, version="0.9.0")


@pytest.fixture(scope="module")
def bundle(labels: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    src = _source("0.9")
    work = tmp_path_factory.mktemp("amd")
    archive = work / "image.tar"
    write_archive(amdimage.model_image(IMAGE, src, MODEL, labels=labels, work=work), archive)
    return unpack(from_archive(archive, work / "layout"), work / "bundle")


def model_object(labels: dict[str, str]) -> dict[str, Any]:
    """The AIMModel as the catalog leaves it: the image's entrypoint and labels read."""
    metadata = image_metadata(labels).model_dump(mode="json", by_alias=True, exclude_none=True)
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": "qwen3", "namespace": NS, "uid": "uid-qwen3"},
        "spec": {"image": IMAGE},
        "status": {
            "status": "Ready",
            "imageEntrypoint": list(amdimage.ENTRYPOINT),
            "imageMetadata": metadata,
        },
    }


def template(count: int, precision: str) -> dict[str, Any]:
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMServiceTemplate",
        "metadata": {"name": "qwen3-lat", "namespace": NS, "uid": "uid-tpl"},
        "spec": {
            "modelName": "qwen3",
            "metric": "latency",
            "precision": precision,
            "hardware": {"gpu": {"requests": count, "model": "MI300X"}},
        },
    }


@dataclass(frozen=True)
class Discovered:
    """The template after AMD's dry-run answered its Job, and what that Job's container did."""

    composition: Composition
    exit_code: int
    log: str
    termination_message: str

    def condition(self, kind: str) -> tuple[str, str, str]:
        found = next(c for c in self.composition.conditions if c.type == kind)
        return found.status.value, found.reason, found.message


def discover(bundle: Bundle, labels: dict[str, str], xr: dict[str, Any], work: Path) -> Discovered:
    """Compose the template, run its discovery Job's container in the image, read it back."""
    pool = [model_object(labels), NODE]
    first = loop.reconcile(compose_template, Observed(xr, now=T0), pool)
    job: Any = first.resources[DISCOVERY_JOB].manifest
    pod_spec = job["spec"]["template"]["spec"]
    [container] = pod_spec["containers"]
    user = pod_spec["securityContext"]["runAsUser"]
    group = pod_spec["securityContext"].get("runAsGroup", user)
    scratch, termination = work / "aim-discovery", work / "termination-log"
    scratch.mkdir()
    termination.touch()
    for path in (scratch, termination):
        path.chmod(0o777)  # an emptyDir and the kubelet's termination file are the Pod's to write
    done = run_once(
        bundle,
        [*container["command"], *container["args"]],
        env={e["name"]: e["value"] for e in container["env"]},
        pod=Pod(
            user=(user, group),
            volumes=((scratch, "/aim-discovery"), (termination, "/dev/termination-log")),
            own_network=True,
        ),
        timeout_s=300,
    )
    message = termination.read_text()
    # What the kubelet and the Job controller report for that container's exit.
    phase, count, kind = (
        ("Succeeded", "succeeded", "Complete")
        if done.returncode == 0
        else ("Failed", "failed", "Failed")
    )
    pod = simulated.discovery_pod(job, phase, message=message or done.stdout[-4096:])
    complete = {**job, "status": {count: 1, "conditions": [{"type": kind, "status": "True"}]}}
    xr = {**xr, "status": first.status}
    then = loop.reconcile(
        compose_template, Observed(xr, now=T0, resources={DISCOVERY_JOB: complete}), [*pool, pod]
    )
    return Discovered(then, done.returncode, done.stdout + done.stderr, message)


def test_amds_labels_give_the_recommended_deployments_of_the_metadata(
    labels: dict[str, str],
) -> None:
    """The catalog reads what AMD's generator writes (a Python-printed list) as the deployments
    its metadata.yaml lists, field by field."""
    src = _source("0.9")
    written = yaml.safe_load((src.path / "metadata" / MODEL / "metadata.yaml").read_text())
    listed = written["com"]["amd"]["aim"]["model"]["recommendedDeployments"]
    model = image_metadata(labels).model
    assert model is not None
    assert model.canonical_name == MODEL
    read = [
        d.model_dump(by_alias=True, exclude_none=True) for d in model.recommended_deployments or ()
    ]
    assert read == listed


def test_discovery_holds_the_profile_amds_runtime_selected(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """MI300X x 1, latency, fp16: AMD's selector picks its optimized profile, and the template's
    status holds that profile's metadata, engine arguments and environment as the profile file
    says, and the model to download (no size: the Hub was out of reach)."""
    found = discover(bundle, labels, template(1, "fp16"), tmp_path)

    assert found.exit_code == 0, found.log[-3000:]
    assert found.condition("Discovered")[:2] == ("True", "DiscoveryComplete"), found.log[-3000:]
    src = _source("0.9")
    profile = yaml.safe_load(
        (src.path / "profiles" / MODEL / "vllm-mi300x-fp16-tp1-latency.yaml").read_text()
    )
    status: Any = found.composition.status
    assert status["profile"]["engine_args"] == profile["engine_args"]
    assert status["profile"]["env_vars"] == profile["env_vars"]
    metadata = status["profile"]["metadata"]
    for key in ("engine", "gpu", "gpu_count", "metric", "precision", "type"):
        assert metadata[key] == profile["metadata"][key], key
    assert status["modelSources"] == [
        {"name": MODEL, "modelId": MODEL, "sourceUri": f"hf://{MODEL}"}
    ]


def test_a_gpu_count_the_image_has_no_profile_for_is_no_profile(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """MI300X x 8: AMD's runtime prints an empty list and exits 0; the template fails with
    DiscoveryNoProfile naming what it asked for, not with unreadable output."""
    found = discover(bundle, labels, template(8, "fp16"), tmp_path)

    assert found.exit_code == 0, found.log[-3000:]
    assert found.termination_message.strip() == "[]", found.log[-3000:]
    status, reason, message = found.condition("Discovered")
    assert (status, reason) == ("False", "DiscoveryNoProfile"), message
    assert "GPU MI300X x 8" in message
