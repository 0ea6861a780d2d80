"""A catalog that fills itself: an AIMClusterModelSource lists the registries, its models read
their images and bring templates, and a team's service by image runs on one of them.

Every AIM status here is written by function-aim through Crossplane, which lists the test
registries (the anonymous one as `ghcr.io`, the one with basic auth as `private.registry`) with
the real oras; the test writes none. Simulated: the MI300X node, the kubelet (discovery
dry-runs), KServe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from devtools.cluster.converge import AIM, CONVERGE_S, templates_of, wait_condition, wait_status
from devtools.cluster.kube import wait_for
from tests.e2e.images import LLAMA_31_8B, MY_MODEL, PROPRIETARY, SEED002_CLUSTER, SEED002_DEV
from tests.e2e.journey import Journey, kubectl_get
from tests.e2e.planned import assert_plan_reaches_the_live_end_state

FLOW: Final = "model-source"
SOURCE_LABEL: Final = "aim.silogen.ai/model-source"


def made_by(journey: Journey, source: str) -> dict[str, dict[str, Any]]:
    """The cluster models a source made, by image."""
    models = journey.platform.kube.list(AIM, "AIMClusterModel")
    return {
        m["spec"]["image"]: m
        for m in models
        if (m["metadata"].get("labels") or {}).get(SOURCE_LABEL) == source
    }


def test_a_model_source_fills_the_catalog_that_a_service_by_image_runs_from(
    journey: Journey, tmp_path: Path
) -> None:
    """The source lists silogen's repositories through the registry's catalog, one public
    repository's tags and one private repository's (with the pull secret); each image from 0.7
    on becomes a cluster model that reads its labels and brings its templates. A service by image
    runs on the source's model. A changed spec is listed at once: new images join, the earlier
    models stay (same objects), and past maxModels the rest are counted, not made. Deleting the
    source deletes its models and their templates.
    """
    platform, kube = journey.platform, journey.platform.kube
    journey.step(FLOW, "00-pull-secret.yaml")
    source = journey.step(FLOW, "01-source.yaml")[0]
    name = source["metadata"]["name"]

    ready = wait_status(platform, "AIMClusterModelSource", name, None, "Ready")
    wanted = {LLAMA_31_8B.image, MY_MODEL.image, PROPRIETARY.image}
    models = made_by(journey, name)
    assert set(models) == wanted
    assert ready["status"]["discoveredModels"] == 3
    assert ready["status"]["availableModels"] == 3
    assert [f["matched"] for f in ready["status"]["filters"]] == [1, 1, 1]
    for image, model in models.items():
        annotations = model["metadata"]["annotations"]
        assert f"{annotations['aim.silogen.ai/source-registry']}/" in image
        assert image.endswith(f":{annotations['aim.silogen.ai/source-tag']}")
        assert model["spec"]["discovery"]["enabled"] is True
        assert model["spec"]["imagePullSecrets"] == [{"name": "private-registry-login"}]
    for model in models.values():
        model_name = model["metadata"]["name"]
        wait_status(platform, "AIMClusterModel", model_name, None, "Ready")
        assert templates_of(kube, "AIMClusterServiceTemplate", model_name)
    wait_condition(
        platform, "AIMClusterModelSource", name, None, "ModelsReady", "True", "AllModelsReady"
    )
    row = kubectl_get(platform, "AIMClusterModelSource")[name]
    assert (row["Status"], row["Models"], row["Available"]) == ("Ready", 3, 3)

    service = journey.step(FLOW, "02-service.yaml")[0]
    ns, svc = service["metadata"]["namespace"], service["metadata"]["name"]
    running = wait_status(platform, "AIMService", svc, ns, "Running")
    assert running["status"]["resolvedModel"]["uid"] == models[MY_MODEL.image]["metadata"]["uid"]
    assert not kube.list(AIM, "AIMModel", ns), "the catalog had the image: no model of its own"
    # The same manifests, planned with no cluster, end where the plane did.
    assert_plan_reaches_the_live_end_state(journey, tmp_path / "plan")

    journey.step(FLOW, "03-source-more.yaml")

    def resynced() -> dict[str, Any] | None:
        obj = kube.get(AIM, "AIMClusterModelSource", name) or {}
        status = obj.get("status") or {}
        return obj if status.get("syncedGeneration") == obj["metadata"]["generation"] else None

    later = wait_for("the changed source to be listed", resynced, timeout_s=CONVERGE_S)
    status = later["status"]
    assert status["availableModels"] == 5
    assert status["discoveredModels"] == 4
    assert status["modelsLimitReached"] is True
    assert status["skipped"] == ["1 more image(s): spec.maxModels (4) is reached"]
    assert status["modelsOmitted"] == 1  # counted, not named: the cap stops the per-image work
    wait_condition(platform, "AIMClusterModelSource", name, None, "MaxModelsLimitReached", "True")
    now = made_by(journey, name)
    assert wanted < set(now)
    assert set(now) - wanted <= {SEED002_CLUSTER.image, SEED002_DEV.image}
    for image in wanted:
        assert now[image]["metadata"]["uid"] == models[image]["metadata"]["uid"], "kept as is"

    kube.delete(AIM, "AIMService", svc, ns)
    kube.delete(AIM, "AIMClusterModelSource", name)
    wait_for(
        "the source's models and their templates to go",
        lambda: (
            not made_by(journey, name)
            and not any(
                templates_of(kube, "AIMClusterServiceTemplate", m["metadata"]["name"])
                for m in now.values()
            )
        ),
        timeout_s=CONVERGE_S,
    )
