"""The AIM images of the seed documents' journeys, as test images: their labels and dry-runs.

A real AIM image publishes its model and recommended deployments as labels, and answers
`dry-run --format=json` with the runtime profile its environment selects (AIM_GPU_MODEL,
AIM_GPU_COUNT, AIM_METRIC, AIM_PRECISION) and the model sources that profile downloads. The
journeys push the labels to a real registry (config-only images: nothing pulls their layers) and
the simulated kubelet answers dry-runs from `AimImage.dry_run`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from devtools.cluster.registry import Registry
from function.registry import reference

GIB: Final = 2**30


@dataclass(frozen=True)
class Profile:
    """One runtime profile an image carries."""

    gpu: str
    gpu_count: int
    metric: str
    precision: str
    type: str = "optimized"

    def selected_by(self, env: Mapping[str, str]) -> bool:
        """Whether the discovery Job's environment asks for this profile (unset: any)."""
        wanted = {
            "AIM_GPU_MODEL": self.gpu,
            "AIM_GPU_COUNT": str(self.gpu_count),
            "AIM_METRIC": self.metric,
            "AIM_PRECISION": self.precision,
        }
        return all(env.get(key, value) == value for key, value in wanted.items())

    def deployment(self) -> dict[str, Any]:
        """As the image's recommended-deployments label lists it."""
        return {
            "gpuModel": self.gpu,
            "gpuCount": self.gpu_count,
            "metric": self.metric,
            "precision": self.precision,
            "description": f"{self.metric} on {self.gpu_count} x {self.gpu}",
        }


@dataclass(frozen=True)
class AimImage:
    """An AIM image: its name as users write it, its model, profiles and recommendations."""

    image: str
    model_id: str
    size_gb: float
    profiles: tuple[Profile, ...]
    recommends: tuple[Profile, ...] = ()

    @property
    def source(self) -> str:
        """Where its weights are downloaded from."""
        return f"hf://{self.model_id}"

    def labels(self) -> dict[str, str]:
        """The labels the image is published with."""
        return {
            "com.amd.aim.model.canonicalName": self.model_id,
            "com.amd.aim.model.recommendedDeployments": json.dumps(
                [p.deployment() for p in self.recommends]
            ),
            "org.opencontainers.image.title": self.model_id.split("/")[-1],
            "org.opencontainers.image.licenses": "Apache-2.0",
        }

    def dry_run(self, env: Mapping[str, str]) -> tuple[int, str]:
        """`dry-run --format=json` in a discovery Job: exit code and what it leaves behind."""
        for p in self.profiles:
            if p.selected_by(env):
                name = f"vllm-{p.gpu.lower()}-{p.precision}-tp{p.gpu_count}-{p.metric}.yaml"
                result = [
                    {
                        "filename": name,
                        "profile": {
                            "metadata": {
                                "engine": "vllm",
                                "gpu": p.gpu,
                                "gpu_count": p.gpu_count,
                                "metric": p.metric,
                                "precision": p.precision,
                                "type": p.type,
                            },
                            "engine_args": {"tensor-parallel-size": p.gpu_count},
                            "env_vars": {"VLLM_USE_V1": "1"},
                        },
                        "models": [
                            {"name": self.model_id, "source": self.source, "size_gb": self.size_gb}
                        ],
                    }
                ]
                return 0, json.dumps(result)
        # As AIM's runtime answers (aim-build's dry-run): an empty list and exit code 0, its
        # reason in a log on stderr, which the termination message does not carry.
        return 0, "[]"

    def push(self, registry: Registry, workdir: Path) -> str:
        """Push the image's config to `registry` under its repository path; return its digest."""
        ref = reference.parse(self.image)
        return registry.push(ref.repository, ref.tag or "latest", self.labels(), workdir=workdir)


MI300X_LATENCY_FP8 = Profile("MI300X", 1, "latency", "fp8")
MI300X_THROUGHPUT_FP8 = Profile("MI300X", 1, "throughput", "fp8")

# Seed 004, "Model Specification": a cluster model with discovery.
LLAMA_31_8B = AimImage(
    image="ghcr.io/silogen/aim-meta-llama-llama-3-1-8b-instruct:0.7.0",
    model_id="meta-llama/Llama-3.1-8B-Instruct",
    size_gb=15.0,
    profiles=(MI300X_LATENCY_FP8, MI300X_THROUGHPUT_FP8),
    recommends=(MI300X_LATENCY_FP8, MI300X_THROUGHPUT_FP8),
)
# Seed 004, "Enabling Discovery for Private Container Images" (served by the registry with auth).
PROPRIETARY = AimImage(
    image="private.registry/models/proprietary:v1",
    model_id="acme/proprietary-7b",
    size_gb=13.5,
    profiles=(Profile("MI300X", 1, "latency", "bf16"),),
    recommends=(Profile("MI300X", 1, "latency", "bf16"),),
)
# Seed 004, "Auto-Creation from Services".
MY_MODEL = AimImage(
    image="ghcr.io/example/my-model:v1.0.0",
    model_id="example/my-model",
    size_gb=7.0,
    profiles=(Profile("MI300X", 1, "latency", "fp16"),),
    recommends=(Profile("MI300X", 1, "latency", "fp16"),),
)
# Seed 002's catalog: images that name their model but recommend no deployments (the platform
# wrote their templates by hand), whose dry-runs serve the templates and the overrides of the seed.
SEED002_CLUSTER = AimImage(
    image="ghcr.io/example/llama-3.1-8b-instruct:v1.2.0",
    model_id="meta-llama/Llama-3.1-8B-Instruct",
    size_gb=15.0,
    profiles=(
        Profile("MI300X", 1, "latency", "fp16"),
        Profile("MI300X", 2, "throughput", "fp16"),
    ),
)
SEED002_DEV = AimImage(
    image="ghcr.io/ml-team/llama-3.1-8b-instruct:dev-latest",
    model_id="meta-llama/Llama-3.1-8B-Instruct",
    size_gb=15.0,
    profiles=(Profile("MI300X", 2, "throughput", "fp8"),),
)

IMAGES: Final = {
    i.image: i for i in (LLAMA_31_8B, PROPRIETARY, MY_MODEL, SEED002_CLUSTER, SEED002_DEV)
}
# What the hubs and buckets say of the sources that carry no size (seed 004's custom models).
SOURCE_SIZES: Final = {
    "s3://my-bucket/models/llama-3-8b": 16 * GIB,
    "hf://meta-llama/Llama-3-8B": 16 * GIB,
}
