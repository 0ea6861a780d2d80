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
from pathlib import Path
from typing import Any

import pytest
import yaml

from aim_plan.rounds import plan
from aim_plan.simulate import gpu_node
from aim_plan.world import World
from devtools.cluster import amdimage, amdsmi_standin, vllm_standin
from devtools.cluster.oci import write_archive
from devtools.pkg.image import Bundle, from_archive, run_once, unpack
from function.compose.service import INFERENCE_SERVICE, compose_service
from function.kube.contract import Observed
from function.registry.labels import image_metadata
from tests.image import amdrun
from tests.image.amdrun import T0, Discovered, composed_env, get, predictor_running, source
from tests.unit import loop

MODEL = "Qwen/Qwen3-32B"
IMAGE = "registry.local/amdenterpriseai/aim-qwen-qwen3-32b:0.9.0"
NS = "team"
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"amd.com/gpu.device-id": "74a1"}},
}


@pytest.fixture(scope="module")
def labels() -> dict[str, str]:
    src, generator = source("0.9"), source("2026")
    metadata = src.path / "metadata" / MODEL / "metadata.yaml"
    return amdimage.generated_labels(metadata, generator, model=MODEL, version="0.9.0")


@pytest.fixture(scope="module")
def bundle(labels: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    src = source("0.9")
    work = tmp_path_factory.mktemp("amd")
    archive = work / "image.tar"
    image = amdimage.model_image(IMAGE, src, MODEL, labels=labels, extra=amdimage.gpu_standins())
    write_archive(image, archive)
    return unpack(from_archive(archive, work / "layout"), work / "bundle")


def model_object(labels: dict[str, str]) -> dict[str, Any]:
    """The AIMModel of the image as the catalog leaves it."""
    return amdrun.model_object("qwen3", IMAGE, labels, NS)


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


def discover(bundle: Bundle, labels: dict[str, str], xr: dict[str, Any], work: Path) -> Discovered:
    """Discovery of the template `xr` of the Qwen image on an MI300X node."""
    return amdrun.discover(bundle, [model_object(labels), NODE], xr, work)


def test_amds_labels_give_the_recommended_deployments_of_the_metadata(
    labels: dict[str, str],
) -> None:
    """The catalog reads what AMD's generator writes (a Python-printed list) as the deployments
    its metadata.yaml lists, field by field."""
    src = source("0.9")
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
    src = source("0.9")
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


def predictor(labels: dict[str, str], discovered: Discovered) -> Any:
    """The InferenceService the function composes for a caching service on the discovered
    template, its model cache Available."""
    tpl = {**template(1, "fp16"), "status": discovered.composition.status}
    cache = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModelCache",
        "metadata": {"name": "qwen3-weights", "namespace": NS},
        "spec": {"sourceUri": f"hf://{MODEL}"},
        "status": {"status": "Available", "persistentVolumeClaim": "qwen3-weights-cache"},
    }
    service: Any = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": NS, "uid": "uid-chat"},
        "spec": {"model": {"ref": "qwen3"}, "template": {"name": "qwen3-lat"}, "cacheModel": True},
    }
    pool = [model_object(labels), tpl, cache]
    comp = loop.reconcile(compose_service, Observed(service, now=T0), pool)
    return comp.resources[INFERENCE_SERVICE].manifest


@dataclass(frozen=True)
class Served:
    """What the predictor's container did in the image: how the engine was launched, and its
    answer to a chat completion for the model the route would name."""

    launch: dict[str, Any]
    flags: dict[str, list[str]]
    status: int
    reply: Any
    cache: str
    user: int


def serve(bundle: Bundle, isvc: Any, tmp_path: Path, model: str) -> Served:
    """Run the InferenceService's container as composed (env, user, the model cache mounted
    read-only where it says, the image's own entrypoint) and ask it for `model`."""
    [container] = isvc["spec"]["predictor"]["containers"]
    [cache] = [
        m["mountPath"]
        for m in container["volumeMounts"]
        if m["mountPath"].startswith("/workspace/cache/")
    ]
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "config.json").write_text('{"architectures": ["Qwen3ForCausalLM"]}')
    env = composed_env(isvc)
    # The device plugin's part: the one GPU the pod asked for (simulated, see amdsmi_standin.py).
    assert str(container["resources"]["limits"]["amd.com/gpu"]) == "1"
    env[amdsmi_standin.VARIABLE] = "74a1"
    with predictor_running(bundle, isvc, tmp_path, env=env, mounts=[(weights, cache)]) as (
        port,
        served,
    ):
        status, launch = get(port, "/stand-in/launch")
        assert status == 200, served.log_tail()
        chat = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
        answered, reply = get(port, "/v1/chat/completions", chat)
    flags = vllm_standin.parse(launch["argv"])
    assert flags["port"] == [str(port)]
    user = isvc["spec"]["predictor"]["securityContext"]["runAsUser"]
    return Served(launch, flags, answered, reply, cache, user)


def test_the_predictor_runs_amds_runtime_on_the_cached_weights(
    bundle: Bundle, labels: dict[str, str], tmp_path: Path
) -> None:
    """The InferenceService's container, as composed, runs AMD's `serve`: on the GPU the node
    gives it (one MI300X, from the AMD SMI stand-in) it selects the profile discovery found and
    launches the engine (the vLLM stand-in) on the weights in our cache mount, with the
    profile's arguments and env, on the InferenceService's port, under the name the route
    sends."""
    found = discover(bundle, labels, template(1, "fp16"), tmp_path / "discovery")
    served = serve(bundle, predictor(labels, found), tmp_path, MODEL)

    src = source("0.9")
    profile = yaml.safe_load(
        (src.path / "profiles" / MODEL / "vllm-mi300x-fp16-tp1-latency.yaml").read_text()
    )
    assert served.flags["model"] == [served.cache]  # our cache, not a Hub download
    assert served.flags["served-model-name"] == [MODEL]
    for key, value in profile["engine_args"].items():
        want = [] if value is None else [str(value)]
        assert served.flags[key.replace("_", "-")] == want, key
    for key, value in profile["env_vars"].items():
        assert served.launch["env"][key] == str(value), key
    assert served.launch["uid"] == served.user
    assert (served.status, served.reply["model"]) == (200, MODEL), served.reply


BASE_IMAGE = "registry.local/amdenterpriseai/aim-base:0.9.0"
CUSTOM = "Org/Custom-7B"


@pytest.fixture(scope="module")
def base_bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    """AMD's base image, with the GPU stand-ins, unpacked for runc."""
    src = source("0.9")
    work = tmp_path_factory.mktemp("amd-base")
    archive = work / "image.tar"
    image = amdimage.base_image(BASE_IMAGE, src, extra=amdimage.gpu_standins())
    write_archive(image, archive)
    return unpack(from_archive(archive, work / "layout"), work / "bundle")


def custom_predictor(base_image: str, env: list[dict[str, str]] | None = None) -> Any:
    """The InferenceService of a service of custom weights on `base_image`, planned to its end
    by `aim plan` (the function's composers, the controllers simulated)."""
    custom = {
        "baseImage": base_image,
        "modelSources": [{"modelId": CUSTOM, "sourceUri": f"s3://weights/{CUSTOM}", "size": "1Gi"}],
        "hardware": {"gpu": {"requests": 1, "models": ["MI300X"]}},
    }
    xr: Any = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "custom", "namespace": NS},
        "spec": {"model": {"custom": custom}, **({"env": env} if env else {})},
    }
    planned = plan(World([xr, gpu_node("MI300X", 8)]))
    assert planned.converged, planned.unsettled
    [isvc] = planned.world.of_kind("serving.kserve.io/v1beta1", "InferenceService")
    return isvc


def test_a_custom_model_is_served_by_amds_base_image(base_bundle: Bundle, tmp_path: Path) -> None:
    """A service of custom weights on AMD's base image, planned to its end by `aim plan` (the
    function's composers, the controllers simulated): its InferenceService's container runs
    AMD's `serve`, which, told the model by AIM_MODEL_ID, falls back to a general profile for
    the one MI300X and launches the engine on the weights in the custom model's cache mount,
    served under the model's id."""
    served = serve(base_bundle, custom_predictor(BASE_IMAGE), tmp_path, CUSTOM)

    assert served.flags["model"] == [served.cache] == [f"/workspace/cache/{CUSTOM}"]
    assert served.flags["served-model-name"] == [CUSTOM]
    # Which general profile fits is AMD's choice; whichever it is, its file is what ran.
    src = source("0.9")
    general = [
        yaml.safe_load(f.read_text())
        for f in sorted((src.path / "profiles" / "general").glob("*.yaml"))
    ]
    chosen = [
        p
        for p in general
        if all(
            served.flags.get(k.replace("_", "-")) == ([] if v is None else [str(v)])
            for k, v in p["engine_args"].items()
        )
    ]
    assert chosen, served.flags
    assert chosen[0]["metadata"]["gpu"] == "MI300X"
    assert chosen[0]["engine_args"]["tensor-parallel-size"] == 1
    assert (served.status, served.reply["model"]) == (200, CUSTOM), served.reply


def test_a_custom_model_on_a_models_image_serves_once_aim_id_is_emptied(
    bundle: Bundle, tmp_path: Path
) -> None:
    """A custom model whose baseImage is a model's AIM image (it sets AIM_ID): AMD's runtime
    refuses AIM_ID beside the AIM_MODEL_ID the function sets, and exits; the workaround the
    troubleshooting guide gives (the service's `AIM_ID` set empty, general profiles allowed)
    serves the custom weights."""
    isvc = custom_predictor(IMAGE)
    done = run_once(bundle, list(amdimage.ENTRYPOINT), env=composed_env(isvc), timeout_s=120)
    assert done.returncode == 1
    assert "Cannot set both AIM_ID and AIM_MODEL_ID" in done.stdout + done.stderr

    # And its profiles are the model's own, for its AIM_ID: the general ones must be allowed.
    emptied = custom_predictor(
        IMAGE,
        env=[
            {"name": "AIM_ID", "value": ""},
            {"name": "AIM_ALLOW_GENERAL_PROFILE_FALLBACK", "value": "true"},
        ],
    )
    served = serve(bundle, emptied, tmp_path, CUSTOM)
    assert served.flags["model"] == [f"/workspace/cache/{CUSTOM}"]
    assert (served.status, served.reply["model"]) == (200, CUSTOM), served.reply
