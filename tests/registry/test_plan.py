"""`aim plan` of the journeys that read a registry, against real registries (mirrored, as a site
that serves `ghcr.io` and `private.registry` from its own hosts would): the images' labels are
read with the function's client and become templates, as on the end-to-end plane; a wrong
password is the model's condition, never printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from aim_plan.cli import cli
from devtools.cluster.platform import PRIVATE_REGISTRY, PUBLIC_REGISTRY
from devtools.cluster.registry import PASSWORD, USER, Registry
from devtools.tools import Tools
from tests.e2e.images import LLAMA_31_8B, PROPRIETARY, SEED002_CLUSTER, SEED002_DEV
from tests.e2e.journey import PLACEHOLDER, docker_config

JOURNEYS = Path(__file__).parents[2] / "examples" / "journeys"
WRONG = "not-the-password-4711"


def plan(tools: Tools, registry: Registry, mirrored: str, path: Path) -> tuple[dict[str, Any], str]:
    """`aim plan PATH --gpu-node MI300X` reading `mirrored` images from `registry`: the report
    as JSON, and the text page of the same plan."""
    args = [
        "plan",
        str(path),
        "--gpu-node",
        "MI300X",
        "--oras",
        str(tools.oras),
        "--registry-mirror",
        f"{mirrored}={registry.host}",
        "--insecure-registry",
        registry.host,
        "--registry-timeout",
        "10",
    ]
    as_json = CliRunner().invoke(cli, [*args, "-o", "json"])
    assert as_json.exit_code == 0, as_json.output
    page = CliRunner().invoke(cli, args)
    assert page.exit_code == 0, page.output
    report: dict[str, Any] = json.loads(as_json.output)
    return report, page.output


def objects(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in report["objects"] if o["kind"] == kind]


def conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in obj["status"]["conditions"]}


def test_the_cluster_model_journey_reads_the_labels_and_runs_on_the_latency_template(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    """Journey 1 as written, its image read from the registry: the model's metadata extracted
    (not provided), a template per recommended deployment, the service Running on the latency
    one; the report lists the image as read, at the digest the registry holds."""
    digest = LLAMA_31_8B.push(registry, tmp_path)

    report, page = plan(tools, registry, PUBLIC_REGISTRY, JOURNEYS / "cluster-model")

    assert report["converged"]
    [model] = objects(report, "AIMClusterModel")
    extracted = conditions(model)["MetadataExtracted"]
    assert (extracted["status"], extracted["reason"]) == ("True", "MetadataExtracted")
    assert model["status"]["imageDigest"] == digest
    assert model["status"]["imageMetadata"]["model"]["canonicalName"] == LLAMA_31_8B.model_id
    templates = objects(report, "AIMClusterServiceTemplate")
    assert sorted(t["spec"]["metric"] for t in templates) == ["latency", "throughput"]
    [service] = objects(report, "AIMService")
    latency = next(t for t in templates if t["spec"]["metric"] == "latency")
    assert service["status"]["status"] == "Running"
    assert service["status"]["resolvedTemplate"]["name"] == latency["metadata"]["name"]
    assert report["registry"]["images"] == [
        {"image": LLAMA_31_8B.image, "outcome": "read", "digest": digest}
    ]
    assert f"registry: read {LLAMA_31_8B.image} ({digest})" in page.splitlines()


def private_journey(tmp_path: Path, password: str) -> Path:
    """The private-registry journey with its secret filled in as its comment says: the
    registry's login, as `base64 -w0 ~/.docker/config.json` gives it after `docker login`."""
    journey = tmp_path / "private-registry"
    shutil.copytree(JOURNEYS / "private-registry", journey)
    path = journey / "01-private-registry.yaml"
    config = docker_config(PRIVATE_REGISTRY, USER, password)
    path.write_text(path.read_text().replace(PLACEHOLDER, config))
    return journey


def test_the_private_registry_journey_reads_the_image_with_the_journey_s_secret(
    tools: Tools, private_registry: Registry, tmp_path: Path
) -> None:
    """The login reaches the registry from the runtime config's pull secret, as in a cluster:
    the model's labels are read, its template created, the service Running; the password is
    in no output."""
    PROPRIETARY.push(private_registry, tmp_path)

    report, page = plan(
        tools, private_registry, PRIVATE_REGISTRY, private_journey(tmp_path, PASSWORD)
    )

    [model] = objects(report, "AIMModel")
    extracted = conditions(model)["MetadataExtracted"]
    assert (extracted["status"], extracted["reason"]) == ("True", "MetadataExtracted")
    [template] = objects(report, "AIMServiceTemplate")
    assert template["spec"]["precision"] == "bf16"
    [service] = objects(report, "AIMService")
    assert service["status"]["status"] == "Running"
    [image] = report["registry"]["images"]
    assert (image["image"], image["outcome"]) == (PROPRIETARY.image, "read")
    assert PASSWORD not in page
    assert PASSWORD not in json.dumps(report)


def test_a_wrong_password_is_the_model_s_unauthorized_condition_naming_the_fix(
    tools: Tools, private_registry: Registry, tmp_path: Path
) -> None:
    """A wrong password: the model Failed with RegistryUnauthorized in the registry's words and
    what to check, the report names the outcome, and neither password is printed."""
    PROPRIETARY.push(private_registry, tmp_path)

    report, page = plan(tools, private_registry, PRIVATE_REGISTRY, private_journey(tmp_path, WRONG))

    [model] = objects(report, "AIMModel")
    extracted = conditions(model)["MetadataExtracted"]
    assert (extracted["status"], extracted["reason"]) == ("False", "MetadataExtractionFailed")
    assert extracted["message"].startswith("RegistryUnauthorized: registry private.registry: ")
    assert "imagePullSecrets" in extracted["message"]
    assert model["status"]["status"] == "Failed"
    [image] = report["registry"]["images"]
    assert (image["image"], image["outcome"]) == (PROPRIETARY.image, "RegistryUnauthorized")
    assert not objects(report, "AIMServiceTemplate")
    for secret in (WRONG, PASSWORD):
        assert secret not in page
        assert secret not in json.dumps(report)


def test_a_discovery_disabled_models_template_is_discovered_from_the_image_s_labels(
    tools: Tools, registry: Registry, tmp_path: Path
) -> None:
    """The older-API catalog's cluster model has discovery disabled, so the function never
    reads its image; its hand-written template's discovery Job still runs the image, whose
    dry-run answers from the image's own labels. The plan reads them with the same client: the
    template is Available with the profile the labels give, the services on it run, and the
    report lists the image as read."""
    digest = SEED002_CLUSTER.push(registry, tmp_path)
    SEED002_DEV.push(registry, tmp_path)

    report, _ = plan(tools, registry, PUBLIC_REGISTRY, JOURNEYS / "older-api-catalog")

    assert report["converged"]
    [template] = objects(report, "AIMClusterServiceTemplate")
    assert template["status"]["status"] == "Available"
    assert template["status"]["resolvedProfile"]["type"] == "optimized"
    [cluster_model] = objects(report, "AIMClusterModel")
    assert "imageMetadata" not in cluster_model["status"]  # the model itself read nothing
    throughput = next(
        s for s in objects(report, "AIMService") if s["metadata"]["name"] == "llama-throughput"
    )
    assert throughput["status"]["status"] == "Running"
    read = {i["image"]: i for i in report["registry"]["images"]}
    assert read[SEED002_CLUSTER.image] == {
        "image": SEED002_CLUSTER.image,
        "outcome": "read",
        "digest": digest,
    }
