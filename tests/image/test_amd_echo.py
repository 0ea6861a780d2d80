"""AMD's CPU play model, `example/echo-model`, as aim-build's newer tree builds it: discovery
and serving with nothing stood in for.

The image (devtools/cluster/amdecho.py) holds AMD's runtime, the model's profile and BentoML's
echo service. Its labels name no recommended deployment, so a platform team writes the CPU
template itself; the discovery Job the function composes for it runs AMD's dry-run, whose CPU
detection selects the BentoML profile, and the InferenceService's container, as composed, runs
AMD's `serve`, which starts BentoML on the InferenceService's port. No GPU is involved anywhere:
this is the one AIM image that truly serves here.

Without aim-build's newer tree (a bare clone) these tests skip and say which variable names it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from devtools.cluster import amdecho, amdimage
from devtools.cluster.oci import write_archive
from devtools.pkg.image import Bundle, Pod, from_archive, run_once, unpack
from function.compose.service import INFERENCE_SERVICE, compose_service
from function.kube.contract import Observed
from function.registry.labels import image_metadata, missing_required
from tests.image import amdrun
from tests.image.amdrun import (
    T0,
    Discovered,
    composed_env,
    discover,
    get,
    predictor_running,
    source,
)
from tests.unit import loop

IMAGE = "registry.local/amdenterpriseai/aim-example-echo-model:2026.9"
NS = "team"
TEMPLATE_ENV = [
    # The profile's engine: the runtime assumes vLLM unless told.
    {"name": "AIM_ENGINE", "value": amdecho.ENGINE},
    # BentoML writes under its home, `~/bentoml` unless told; the predictor runs as a user
    # with no home, so `/bentoml`, which it cannot create.
    {"name": "BENTOML_HOME", "value": "/tmp/bentoml"},  # noqa: S108 - in the container
]


@pytest.fixture(scope="module")
def labels() -> dict[str, str]:
    src = source("2026")
    metadata = src.path / "assets" / "cpu" / amdecho.MODEL / "metadata.yaml"
    return amdimage.generated_labels(metadata, src, model=amdecho.MODEL, version="2026.9")


@pytest.fixture(scope="module")
def bundle(labels: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    work = tmp_path_factory.mktemp("echo")
    archive = work / "image.tar"
    write_archive(amdecho.echo_image(IMAGE, source("2026"), labels=labels), archive)
    return unpack(from_archive(archive, work / "layout"), work / "bundle")


def model_object(labels: dict[str, str]) -> dict[str, Any]:
    """The AIMModel of the image as the catalog leaves it."""
    return amdrun.model_object("echo", IMAGE, labels, NS)


def cpu_template(
    env: list[dict[str, str]], profile: str | None = amdecho.PROFILE
) -> dict[str, Any]:
    """The template a platform team writes for the echo model: CPUs, no GPU."""
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMServiceTemplate",
        "metadata": {"name": "echo-cpu", "namespace": NS, "uid": "uid-tpl"},
        "spec": {
            "modelName": "echo",
            "metric": "latency",
            "precision": "fp32",
            "hardware": {"cpu": {"requests": "1"}},
            "env": env,
            # The profile is `unoptimized`, which AMD's runtime selects only when named.
            **({"profileId": profile} if profile else {}),
        },
    }


def discovered(
    bundle: Bundle,
    labels: dict[str, str],
    env: list[dict[str, str]],
    work: Path,
    profile: str | None = amdecho.PROFILE,
) -> Discovered:
    return discover(bundle, [model_object(labels)], cpu_template(env, profile), work)


def test_the_echo_models_labels_are_an_aim_models_with_no_recommended_deployment(
    labels: dict[str, str],
) -> None:
    """The catalog accepts the image (every required AIM label is there) and reads its name;
    it recommends no deployment, so no template is made from it: the team writes one."""
    assert missing_required(labels) == []
    model = image_metadata(labels).model
    assert model is not None
    assert model.canonical_name == amdecho.MODEL
    assert not model.recommended_deployments


def test_discovery_selects_the_bentoml_profile_on_cpus(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """AMD's dry-run, told the engine and the profile, detects the CPU and selects the echo
    model's (unoptimized) profile; the template holds it as a CPU profile, not a GPU one."""
    found = discovered(bundle, labels, TEMPLATE_ENV, tmp_path)

    assert found.exit_code == 0, found.log[-3000:]
    assert found.condition("Discovered")[:2] == ("True", "DiscoveryComplete"), found.log[-3000:]
    status: Any = found.composition.status
    metadata = status["profile"]["metadata"]
    assert (metadata["engine"], metadata["type"]) == ("bentoml", "unoptimized")
    assert (metadata["metric"], metadata["precision"]) == ("latency", "fp32")
    assert metadata["gpu_count"] == 0
    assert status["hardwareSummary"] == "CPU"


def test_without_the_engine_named_discovery_fails_with_the_runtimes_words(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """Untold, the runtime assumes vLLM, which the image has no engine config for, and exits
    with an error: the template's condition carries the runtime's own words, which name the
    engines the image has, so the user knows what AIM_ENGINE to set."""
    found = discovered(bundle, labels, [], tmp_path)

    assert found.exit_code != 0
    status, reason, message = found.condition("Discovered")
    assert (status, reason) == ("False", "DiscoveryFailed"), message
    assert "No configuration for engine 'vllm'" in message
    assert "Available engines: ['bentoml']" in message


def test_without_the_profile_named_discovery_finds_none(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """The echo model's one profile is `unoptimized`, which AMD's selector passes over unless it
    is named: without `profileId` the runtime prints an empty list, DiscoveryNoProfile."""
    found = discovered(bundle, labels, TEMPLATE_ENV, tmp_path, profile=None)

    assert found.exit_code == 0, found.log[-3000:]
    assert found.termination_message.strip() == "[]", found.log[-3000:]
    status, reason, message = found.condition("Discovered")
    assert (status, reason) == ("False", "DiscoveryNoProfile"), message
    # The way out, for a template of no GPU: name the profile.
    assert "no GPU given" in message
    assert "spec.profileId" in message
    assert "recommendedDeployments" not in message  # the echo image recommends none


def predictor(labels: dict[str, str], found: Discovered) -> Any:
    """The InferenceService the function composes for a service on the discovered template."""
    tpl = {**cpu_template(TEMPLATE_ENV), "status": found.composition.status}
    service: dict[str, Any] = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "echo", "namespace": NS, "uid": "uid-echo-svc"},
        "spec": {"model": {"ref": "echo"}, "template": {"name": "echo-cpu"}},
    }
    comp = loop.reconcile(compose_service, Observed(service, now=T0), [model_object(labels), tpl])
    return comp.resources[INFERENCE_SERVICE].manifest


def start(bundle: Bundle, isvc: Any, work: Path) -> tuple[int, Any]:
    """Run the InferenceService's container as composed and ask it to reverse a text."""
    with predictor_running(bundle, isvc, work) as (port, served):
        deadline = time.monotonic() + 60
        while True:  # BentoML binds its port before its worker answers
            try:
                return get(port, "/predict", {"text": "hello AIM"})
            except (ConnectionError, TimeoutError, ValueError):  # not up, slow, not JSON yet
                assert time.monotonic() < deadline, served.log_tail()
                time.sleep(0.2)


def test_the_predictor_serves_the_echo_model_with_amds_runtime(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """The InferenceService's container, as composed (the template's env, the user, the port),
    runs AMD's `serve`, which starts BentoML on that port: `POST /predict` comes back reversed."""
    isvc = predictor(labels, discovered(bundle, labels, TEMPLATE_ENV, tmp_path))
    [container] = isvc["spec"]["predictor"]["containers"]
    assert "amd.com/gpu" not in container["resources"].get("limits", {})

    assert start(bundle, isvc, tmp_path) == (200, {"reversed": "MIA olleh", "length": 9})


def test_bentoml_needs_a_home_it_can_write_as_the_predictors_user(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """Why the template sets BENTOML_HOME: without it, BentoML, run as the predictor's
    non-root user, tries to create `/bentoml` and the container exits."""
    isvc = predictor(labels, discovered(bundle, labels, TEMPLATE_ENV, tmp_path))
    [container] = isvc["spec"]["predictor"]["containers"]
    env = composed_env(isvc)
    del env["BENTOML_HOME"]
    spec = isvc["spec"]["predictor"]
    user = spec["securityContext"]["runAsUser"]
    done = run_once(
        bundle,
        [*container.get("command", amdimage.ENTRYPOINT), *container.get("args", [])],
        env=env,
        pod=Pod(user=(user, spec["securityContext"].get("runAsGroup", user))),
        timeout_s=120,
    )
    assert done.returncode != 0
    assert "Permission denied: '/bentoml'" in done.stdout + done.stderr
