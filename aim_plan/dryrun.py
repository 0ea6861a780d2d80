"""The labels of the images that discovery Jobs run, read for the dry-run stand-in.

A discovery Job runs the AIM image's dry-run, and the image answers from its own labels. The
simulated kubelet answers from the model's `imageMetadata` (what the function read or was
given), but a model with discovery disabled never reads its image, while its templates' Jobs
still run it. For those images the plan reads the labels itself, with the registry client the
function uses and the pull secrets the Job's Pod would pull with, as the image would have them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aim_plan.load import Obj, key_of
from aim_plan.views import entries_at, mapping_at, text_at
from aim_plan.world import World
from function.build.job import CONTAINER as DISCOVERY
from function.kube.jobs import JobState, job_state
from function.kube.views import field_at
from function.registry import reference
from function.registry.credentials import SecretFormatError, credential_for
from function.registry.inspect import Inspection, InspectionRequest, Inspector
from function.registry.labels import LabelError, image_metadata


async def read_dry_run_images(world: World, registry: Inspector) -> None:
    """Read the labels of each image a waiting discovery Job runs that no model describes.

    What is read goes to `world.dry_run_images` (per Job, the imageMetadata its image's labels
    give); an image the registry does not answer for stays out, and the dry-run says what to
    give instead. The registry's memory asks each image with each credential once.
    """
    for job in world.of_kind("batch/v1", "Job"):
        pod = _DiscoveryPod.of(job)
        if pod is None or job_state(job) is not JobState.RUNNING:
            continue
        key = key_of(job)
        if key in world.dry_run_images or described(world, pod.image) or not world.under_aim(job):
            continue
        # Per Job: another namespace's Job may pull the same image with other secrets, or none.
        metadata = await _labels(world, registry, pod, key[2])
        if metadata is not None:
            world.dry_run_images[key] = metadata


def described(world: World, image: str) -> dict[str, Any] | None:
    """The imageMetadata of a model of `image` (its status's, or its spec's), if any has one."""
    for kind in ("AIMModel", "AIMClusterModel"):
        for obj in world.of_kind("aim.silogen.ai/v1alpha1", kind):
            if text_at(obj, "spec", "image") != image:
                continue
            for part in ("status", "spec"):
                found = field_at(obj, part, "imageMetadata")
                if isinstance(found, dict) and text_at(found, "model", "canonicalName"):
                    return found
    return None


@dataclass(frozen=True)
class _DiscoveryPod:
    """What a discovery Job's pod pulls: its first container's image, with these secrets."""

    image: str
    pull_secrets: tuple[str, ...]

    @classmethod
    def of(cls, job: Obj) -> _DiscoveryPod | None:
        """The pod of `job`, None when the Job runs no discovery container first."""
        pod = mapping_at(job, "spec", "template", "spec")
        containers = entries_at(pod, "containers")
        if not containers or text_at(containers[0], "name") != DISCOVERY:
            return None
        secrets = tuple(text_at(s, "name") for s in entries_at(pod, "imagePullSecrets"))
        return cls(text_at(containers[0], "image"), secrets)


async def _labels(
    world: World, registry: Inspector, pod: _DiscoveryPod, namespace: str
) -> dict[str, Any] | None:
    image = pod.image
    try:
        ref = reference.parse(image)
    except reference.ReferenceError:
        return None
    secrets = [
        s
        for name in pod.pull_secrets
        if (s := world.get(("v1", "Secret", namespace, name))) is not None
    ]
    try:
        credential = credential_for(ref.registry, secrets)
    except SecretFormatError:
        return None  # the function reports the Secret; the dry-run then says what to give
    answer = await registry.inspect(InspectionRequest(image, ref, credential))
    if not isinstance(answer, Inspection):
        return None
    try:
        metadata = image_metadata(answer.labels)
    except LabelError:
        return None
    dumped: dict[str, Any] = metadata.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped
