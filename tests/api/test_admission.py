"""Bad AIM manifests are refused at admission, with a message that names the field.

Creations go through `crossplane resource validate` (schema, unknown fields, CEL); updates go
through apicheck, the API server's validation code with the old object, because immutability is
a CEL transition rule that only an update can trigger. All cases of a kind run in one call.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devtools.render.admission import Update, check_updates, validate_objects
from devtools.tools import Tools
from tests.cases import Case, table

CLUSTER_KINDS = {
    "AIMClusterRuntimeConfig",
    "AIMClusterModel",
    "AIMClusterModelSource",
    "AIMClusterServiceTemplate",
}

# The smallest valid spec of each kind; every bad case below breaks exactly one thing in one.
VALID: dict[str, dict[str, Any]] = {
    "AIMClusterRuntimeConfig": {},
    "AIMRuntimeConfig": {},
    "AIMClusterModel": {"image": "ghcr.io/example/llama:1.0"},
    "AIMModel": {"image": "ghcr.io/example/llama:1.0"},
    "AIMClusterServiceTemplate": {"modelName": "llama"},
    "AIMServiceTemplate": {"modelName": "llama"},
    "AIMService": {"model": {"ref": "llama"}},
    "AIMTemplateCache": {"templateName": "llama-latency"},
    "AIMModelCache": {"sourceUri": "hf://meta-llama/Llama-3.1-8B"},
    "AIMClusterModelSource": {"filters": [{"image": "amd/aim-*"}], "syncInterval": "1h30m"},
}

HF = {"modelId": "meta-llama/Llama-3.1-8B", "sourceUri": "hf://meta-llama/Llama-3.1-8B"}
GPU1 = {"gpu": {"requests": 1}}


def obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if kind not in CLUSTER_KINDS:
        meta["namespace"] = "ml-team"
    return {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


@dataclass(frozen=True)
class Refusal(Case):
    """A manifest the API server must refuse, and a part of the message naming the field."""

    kind: str
    spec: dict[str, Any]
    message: str


@dataclass(frozen=True)
class Change(Case):
    """An update, and a part of the refusal's message (None: the update is allowed)."""

    kind: str
    old: dict[str, Any]
    new: dict[str, Any]
    message: str | None


INVALID = [
    # AIMService
    Refusal(
        "svc-no-model",
        "a service without a model has nothing to serve",
        "AIMService",
        {},
        "spec.model: Required value",
    ),
    Refusal(
        "svc-ref-and-image",
        "two ways to name the model: which one wins would be a guess",
        "AIMService",
        {"model": {"ref": "llama", "image": "ghcr.io/x/llama:1"}},
        "set exactly one of spec.model.ref, spec.model.image, spec.model.custom",
    ),
    Refusal(
        "svc-empty-model",
        "model: {} names no model at all",
        "AIMService",
        {"model": {}},
        "set exactly one of spec.model.ref, spec.model.image, spec.model.custom",
    ),
    Refusal(
        "svc-ref-and-custom",
        "a catalog model and a custom one at once",
        "AIMService",
        {"model": {"ref": "llama", "custom": {"modelSources": [HF], "hardware": GPU1}}},
        "set exactly one of spec.model.ref, spec.model.image, spec.model.custom",
    ),
    Refusal(
        "svc-negative-replicas",
        "replicas below zero",
        "AIMService",
        {"model": {"ref": "llama"}, "replicas": -1},
        "spec.replicas in body should be greater than or equal to 0",
    ),
    Refusal(
        "svc-replicas-not-a-number",
        "a YAML typo that would otherwise reach KServe",
        "AIMService",
        {"model": {"ref": "llama"}, "replicas": "two"},
        "spec.replicas in body must be of type integer",
    ),
    Refusal(
        "svc-min-replicas-zero-no-max",
        "scale to zero needs the most pods a woken service runs",
        "AIMService",
        {"model": {"ref": "llama"}, "minReplicas": 0},
        "spec.minReplicas 0 (scale to zero) needs spec.maxReplicas",
    ),
    Refusal(
        "svc-min-replicas-zero-metrics",
        "scale to zero wakes on requests, not on the metrics of pods it does not have",
        "AIMService",
        {
            "model": {"ref": "llama"},
            "minReplicas": 0,
            "maxReplicas": 2,
            "autoScaling": {
                "metrics": [
                    {
                        "type": "PodMetric",
                        "podmetric": {
                            "metric": {"metricNames": ["vllm:num_requests_running"]},
                            "target": {"type": "Value", "value": "1"},
                        },
                    }
                ]
            },
        },
        "spec.minReplicas 0 scales on requests through the Gateway",
    ),
    Refusal(
        "svc-min-replicas-negative",
        "no fewer than zero pods",
        "AIMService",
        {"model": {"ref": "llama"}, "minReplicas": -1, "maxReplicas": 1},
        "spec.minReplicas in body should be greater than or equal to 0",
    ),
    Refusal(
        "svc-min-over-max",
        "a range that no replica count satisfies",
        "AIMService",
        {"model": {"ref": "llama"}, "minReplicas": 3, "maxReplicas": 2},
        "spec.minReplicas must not exceed spec.maxReplicas",
    ),
    Refusal(
        "svc-old-aim-image-name",
        "a field of an older API, refused by name instead of ignored",
        "AIMService",
        {"model": {"ref": "llama"}, "aimImageName": "llama"},
        'unknown field: "aimImageName"',
    ),
    Refusal(
        "svc-old-template-ref",
        "an older API's templateRef, now template.name",
        "AIMService",
        {"model": {"ref": "llama"}, "templateRef": "llama-latency"},
        'unknown field: "templateRef"',
    ),
    Refusal(
        "svc-custom-no-sources",
        "a custom model must say where its weights are",
        "AIMService",
        {"model": {"custom": {"hardware": GPU1}}},
        "spec.model.custom.modelSources: Required value",
    ),
    Refusal(
        "svc-custom-empty-sources",
        "an empty list of sources is no source",
        "AIMService",
        {"model": {"custom": {"modelSources": [], "hardware": GPU1}}},
        "spec.model.custom.modelSources in body should have at least 1 items",
    ),
    Refusal(
        "svc-custom-no-hardware",
        "a custom model has no discovery to choose hardware for it",
        "AIMService",
        {"model": {"custom": {"modelSources": [HF]}}},
        "spec.model.custom.hardware: Required value",
    ),
    Refusal(
        "svc-custom-empty-hardware",
        "hardware that asks for nothing",
        "AIMService",
        {"model": {"custom": {"modelSources": [HF], "hardware": {}}}},
        "set at least one of hardware.gpu or hardware.cpu",
    ),
    Refusal(
        "svc-custom-http-source",
        "only hf:// and s3:// can be downloaded",
        "AIMService",
        {
            "model": {
                "custom": {
                    "modelSources": [{**HF, "sourceUri": "https://huggingface.co/meta-llama"}],
                    "hardware": GPU1,
                }
            }
        },
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>",
    ),
    Refusal(
        "svc-custom-model-id-without-org",
        "model ids are org/name, as caches are named from them",
        "AIMService",
        {"model": {"custom": {"modelSources": [{**HF, "modelId": "llama"}], "hardware": GPU1}}},
        "spec.model.custom.modelSources[0].modelId in body should match",
    ),
    Refusal(
        "svc-bad-metric",
        "a metric no profile has",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"metric": "speed"}},
        'spec.overrides.metric: Unsupported value: "speed"',
    ),
    Refusal(
        "svc-bad-precision",
        "a precision no profile has",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"precision": "fp12"}},
        'spec.overrides.precision: Unsupported value: "fp12"',
    ),
    Refusal(
        "svc-gpu-model-and-min-vram",
        "a model and a memory floor would contradict each other",
        "AIMService",
        {
            "model": {"ref": "llama"},
            "overrides": {"hardware": {"gpu": {"model": "MI300X", "minVram": "128Gi"}}},
        },
        "gpu.model and gpu.minVram are mutually exclusive",
    ),
    Refusal(
        "svc-gpu-model-and-models",
        "one GPU model or a list, not both",
        "AIMService",
        {
            "model": {"ref": "llama"},
            "overrides": {"hardware": {"gpu": {"model": "MI300X", "models": ["MI325X"]}}},
        },
        "set gpu.model (one GPU model) or gpu.models (a list), not both",
    ),
    Refusal(
        "svc-negative-gpus",
        "a GPU count below zero",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"hardware": {"gpu": {"requests": -2}}}},
        "spec.overrides.hardware.gpu.requests in body should be greater than or equal to 0",
    ),
    Refusal(
        "svc-bad-request-timeout",
        "a timeout the Gateway API cannot read",
        "AIMService",
        {"model": {"ref": "llama"}, "routing": {"requestTimeout": "1 minute"}},
        "spec.routing.requestTimeout in body should match",
    ),
    Refusal(
        "svc-gateway-without-name",
        "a gateway reference that names no gateway",
        "AIMService",
        {"model": {"ref": "llama"}, "routing": {"gatewayRef": {"namespace": "gateways"}}},
        "spec.routing.gatewayRef.name: Required value",
    ),
    Refusal(
        "svc-gateway-port-out-of-range",
        "a port no listener can have",
        "AIMService",
        {"model": {"ref": "llama"}, "routing": {"gatewayRef": {"name": "gw", "port": 70000}}},
        "spec.routing.gatewayRef.port in body should be less than or equal to 65535",
    ),
    Refusal(
        "svc-env-without-name",
        "an env entry Kubernetes would refuse later, in the ISVC",
        "AIMService",
        {"model": {"ref": "llama"}, "env": [{"value": "1"}]},
        "spec.env[0].name: Required value",
    ),
    Refusal(
        "svc-bad-quantity",
        "a resource quantity Kubernetes would refuse later, in the ISVC",
        "AIMService",
        {"model": {"ref": "llama"}, "resources": {"limits": {"memory": "lots"}}},
        "spec.resources.limits.memory in body should match",
    ),
    # AIMModel / AIMClusterModel
    Refusal(
        "model-no-image",
        "a model is an image",
        "AIMModel",
        {"discovery": {"enabled": True}},
        "spec.image: Required value",
    ),
    Refusal(
        "model-empty-image",
        "an empty image is no image",
        "AIMModel",
        {"image": ""},
        "spec.image in body should be at least 1 chars long",
    ),
    Refusal(
        "model-custom-without-sources",
        "custom settings without the sources they describe",
        "AIMModel",
        {"image": "amdenterpriseai/aim-base:latest", "custom": {"hardware": GPU1}},
        "spec.custom describes a custom model: also set spec.modelSources",
    ),
    Refusal(
        "model-sources-without-hardware",
        "custom sources need hardware: no discovery picks it",
        "AIMModel",
        {"image": "amdenterpriseai/aim-base:latest", "modelSources": [HF]},
        "a model with modelSources needs hardware",
    ),
    Refusal(
        "model-template-without-hardware",
        "each custom template needs hardware, its own or the model's",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"templates": [{"name": "a", "hardware": GPU1}, {"name": "b"}]},
        },
        "a model with modelSources needs hardware",
    ),
    Refusal(
        "model-two-sources",
        "one model, one source: a second would never be served",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF, {**HF, "sourceUri": "s3://bucket/llama"}],
            "custom": {"hardware": GPU1},
        },
        "spec.modelSources: Too many: 2: must have at most 1 item",
    ),
    Refusal(
        "model-template-name-too-long",
        "a template's name becomes an object's name",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": GPU1, "templates": [{"name": "x" * 64}]},
        },
        "spec.custom.templates[0].name: Too long: may not be more than 63 bytes",
    ),
    Refusal(
        "model-discovery-not-boolean",
        "a YAML 'yes' is not true",
        "AIMModel",
        {"image": "ghcr.io/x/llama:1", "discovery": {"enabled": "yes"}},
        "spec.discovery.enabled in body must be of type boolean",
    ),
    Refusal(
        "model-bad-profile-type",
        "a profile type no selection rule knows",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": GPU1, "type": "fast"},
        },
        'spec.custom.type: Unsupported value: "fast"',
    ),
    Refusal(
        "model-old-model-id",
        "an older API's modelId, refused by name",
        "AIMModel",
        {"image": "ghcr.io/x/llama:1", "modelId": "meta/llama-3-8b:1.1"},
        'unknown field: "modelId"',
    ),
    Refusal(
        "clmodel-gpu-model-and-min-vram",
        "the cluster kind shares the rule",
        "AIMClusterModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": {"gpu": {"model": "MI300X", "minVram": "64Gi"}}},
        },
        "gpu.model and gpu.minVram are mutually exclusive",
    ),
    Refusal(
        "clmodel-empty-gpu-models",
        "an empty list of GPU models matches no node",
        "AIMClusterModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": {"gpu": {"models": []}}},
        },
        "spec.custom.hardware.gpu.models in body should have at least 1 items",
    ),
    # AIMServiceTemplate / AIMClusterServiceTemplate
    Refusal(
        "tpl-no-model-name",
        "a template serves one model, named",
        "AIMServiceTemplate",
        {"metric": "latency"},
        "spec.modelName: Required",
    ),
    Refusal(
        "tpl-old-gpu-selector",
        "an older API's gpuSelector, now hardware.gpu",
        "AIMServiceTemplate",
        {"modelName": "llama", "gpuSelector": {"count": 1, "model": "MI300X"}},
        'unknown field: "gpuSelector"',
    ),
    Refusal(
        "tpl-bad-precision",
        "a precision no profile has",
        "AIMServiceTemplate",
        {"modelName": "llama", "precision": "fp64"},
        'spec.precision: Unsupported value: "fp64"',
    ),
    Refusal(
        "tpl-empty-hardware",
        "hardware that asks for nothing",
        "AIMServiceTemplate",
        {"modelName": "llama", "hardware": {}},
        "set at least one of hardware.gpu or hardware.cpu",
    ),
    Refusal(
        "tpl-cpu-without-requests",
        "CPU hardware must say how much",
        "AIMServiceTemplate",
        {"modelName": "llama", "hardware": {"cpu": {"limits": "8"}}},
        "spec.hardware.cpu.requests: Required value",
    ),
    Refusal(
        "tpl-cpu-request-above-limit",
        "a pod asking for more CPU than its limit is refused by the API server, far from the "
        "template that said so",
        "AIMServiceTemplate",
        {"modelName": "llama", "hardware": {"cpu": {"requests": "16", "limits": "8"}}},
        "cpu.requests must not be above cpu.limits",
    ),
    Refusal(
        "svc-override-cpu-request-above-limit",
        "...and so is an override's, a number and a string compared by value",
        "AIMService",
        {
            "model": {"ref": "llama"},
            "overrides": {"hardware": {"cpu": {"requests": 2, "limits": "1500m"}}},
        },
        "cpu.requests must not be above cpu.limits",
    ),
    Refusal(
        "tpl-bad-type",
        "a profile type no selection rule knows",
        "AIMServiceTemplate",
        {"modelName": "llama", "type": "tuned"},
        'spec.type: Unsupported value: "tuned"',
    ),
    Refusal(
        "tpl-inline-source-bad-scheme",
        "only hf:// and s3:// can be downloaded",
        "AIMServiceTemplate",
        {"modelName": "llama", "modelSources": [{**HF, "sourceUri": "gs://bucket/llama"}]},
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>",
    ),
    Refusal(
        "cltpl-caching",
        "caching is a team's choice: cluster templates have none",
        "AIMClusterServiceTemplate",
        {"modelName": "llama", "caching": {"enabled": True}},
        'unknown field: "caching"',
    ),
    # Runtime configs
    Refusal(
        "rc-negative-headroom",
        "headroom below zero would make volumes too small",
        "AIMRuntimeConfig",
        {"pvcHeadroomPercent": -5},
        "spec.pvcHeadroomPercent in body should be greater than or equal to 0",
    ),
    Refusal(
        "rc-bad-creation-scope",
        "a scope that is neither Namespace nor Cluster",
        "AIMRuntimeConfig",
        {"model": {"creationScope": "Global"}},
        'spec.model.creationScope: Unsupported value: "Global"',
    ),
    Refusal(
        "rc-old-route-template",
        "an older API's routeTemplate, now routing.pathTemplate",
        "AIMRuntimeConfig",
        {"routing": {"routeTemplate": "/{.metadata.namespace}"}},
        'unknown field: "routeTemplate"',
    ),
    Refusal(
        "rc-discovery-cap",
        "the discovery cap is the cluster's: one team cannot raise it for everyone",
        "AIMRuntimeConfig",
        {"maxConcurrentDiscoveryJobs": 50},
        'unknown field: "maxConcurrentDiscoveryJobs"',
    ),
    Refusal(
        "rc-route-policy",
        "the route policy is the platform's: a team cannot loosen it for its own routes",
        "AIMRuntimeConfig",
        {"routing": {"policy": {"pathPrefix": "/"}}},
        'unknown field: "policy"',
    ),
    Refusal(
        "clrc-route-prefix-relative",
        "a route prefix is a path: it starts at `/`",
        "AIMClusterRuntimeConfig",
        {"routing": {"policy": {"pathPrefix": "{.metadata.namespace}/"}}},
        "spec.routing.policy.pathPrefix in body should match '^/'",
    ),
    Refusal(
        "clrc-route-annotation-glob",
        "allowed annotations are keys or prefixes ending in `/`, not globs",
        "AIMClusterRuntimeConfig",
        {"routing": {"policy": {"allowedAnnotations": ["example.com/*"]}}},
        "spec.routing.policy.allowedAnnotations[0] in body should match",
    ),
    Refusal(
        "clrc-no-discovery",
        "a cap of 0 would stop every discovery for good; pause templates instead",
        "AIMClusterRuntimeConfig",
        {"maxConcurrentDiscoveryJobs": 0},
        "spec.maxConcurrentDiscoveryJobs in body should be greater than or equal to 1",
    ),
    Refusal(
        "clrc-credentials",
        "pull secrets live in namespaces: a cluster config cannot name them",
        "AIMClusterRuntimeConfig",
        {"imagePullSecrets": [{"name": "registry"}]},
        'unknown field: "imagePullSecrets"',
    ),
    # AIMTemplateCache / AIMModelCache
    Refusal(
        "tc-no-template",
        "a template cache caches one template, named",
        "AIMTemplateCache",
        {},
        "spec.templateName: Required value",
    ),
    Refusal(
        "tc-old-template-ref",
        "an older API's templateRef, now templateName",
        "AIMTemplateCache",
        {"templateName": "t", "templateRef": "t"},
        'unknown field: "templateRef"',
    ),
    Refusal(
        "tc-bad-scope",
        "a scope that is neither Namespace nor Cluster",
        "AIMTemplateCache",
        {"templateName": "t", "templateScope": "Unknown"},
        'spec.templateScope: Unsupported value: "Unknown"',
    ),
    Refusal(
        "mc-no-source",
        "a cache must say what to download",
        "AIMModelCache",
        {"size": "16Gi"},
        "spec.sourceUri: Required value",
    ),
    Refusal(
        "mc-http-source",
        "only hf:// and s3:// can be downloaded",
        "AIMModelCache",
        {"sourceUri": "http://example.com/llama"},
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>",
    ),
    Refusal(
        "mc-source-with-space",
        "a space would split the download command's argument",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/my model"},
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>, without spaces",
    ),
    Refusal(
        "mc-bad-model-id",
        "model ids are org/name",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/llama", "modelId": "org/name/extra"},
        "spec.modelId in body should match",
    ),
    Refusal(
        "mc-bad-size",
        "a size Kubernetes cannot read as a quantity",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/llama", "size": "big"},
        "spec.size in body should match",
    ),
    Refusal(
        "mc-checksum-not-hex",
        "a sha256 is 64 lowercase hex digits; anything else is a typo the check cannot use",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/llama", "checksums": {"model.gguf": "sha256:abc"}},
        "spec.checksums.model.gguf in body should match",
    ),
    Refusal(
        "mc-checksum-escapes",
        "a path out of the volume is refused at admission",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/llama", "checksums": {"../x": "a" * 64}},
        "spec.checksums keys are relative paths under the source",
    ),
    Refusal(
        "src-no-filters",
        "a source with no filter would list nothing, forever",
        "AIMClusterModelSource",
        {"filters": []},
        "spec.filters: Invalid value: 0: spec.filters in body should have at least 1 items",
    ),
    Refusal(
        "src-sync-too-often",
        "every sync lists the registry: not more than once a minute",
        "AIMClusterModelSource",
        {"filters": [{"image": "a/b"}], "syncInterval": "30s"},
        "spec.syncInterval must be at least 1m",
    ),
    Refusal(
        "src-sync-days",
        "Go durations have no days; 24h is what works",
        "AIMClusterModelSource",
        {"filters": [{"image": "a/b"}], "syncInterval": "1d"},
        "spec.syncInterval in body should match",
    ),
    Refusal(
        "src-no-models",
        "a limit of zero models is no source",
        "AIMClusterModelSource",
        {"filters": [{"image": "a/b"}], "maxModels": 0},
        "spec.maxModels in body should be greater than or equal to 1",
    ),
    Refusal(
        "cache-adapter-without-models",
        "an adapter fits only the base models it was trained on: it must name them",
        "AIMModelCache",
        {"sourceUri": "hf://acme/tone-lora", "type": "adapter"},
        "an adapter (spec.type: adapter) names the models it fits in spec.compatibleWith",
    ),
    Refusal(
        "cache-model-with-rank",
        "a rank on a model's weights means nothing: refused, not ignored",
        "AIMModelCache",
        {"sourceUri": "hf://meta-llama/Llama-3.1-8B", "rank": 16},
        "spec.compatibleWith and spec.rank are for adapters only",
    ),
    Refusal(
        "cache-adapter-odd-rank",
        "a rank the inference server cannot be started with",
        "AIMModelCache",
        {
            "sourceUri": "hf://acme/tone-lora",
            "type": "adapter",
            "compatibleWith": ["meta-llama/Llama-3.1-8B"],
            "rank": 12,
        },
        "spec.rank must be one of 1, 8, 16, 32, 64, 128, 256, 320, 512",
    ),
    Refusal(
        "cache-adapter-with-model-id",
        "an adapter has no mount path of its own: clients ask for it by the cache's name",
        "AIMModelCache",
        {
            "sourceUri": "hf://acme/tone-lora",
            "type": "adapter",
            "compatibleWith": ["meta-llama/Llama-3.1-8B"],
            "modelId": "acme/tone",
        },
        "spec.modelId is a model's mount path",
    ),
    Refusal(
        "cache-adapter-bad-model-id",
        "compatibleWith holds model ids, org/name",
        "AIMModelCache",
        {"sourceUri": "hf://acme/tone-lora", "type": "adapter", "compatibleWith": ["llama"]},
        "spec.compatibleWith[0] in body should match",
    ),
    Refusal(
        "svc-adapter-twice",
        "one adapter named twice would be staged twice under one name",
        "AIMService",
        {"model": {"ref": "llama"}, "adapters": [{"name": "tone"}, {"name": "tone"}]},
        "spec.adapters names each adapter once",
    ),
    Refusal(
        "svc-adapter-mode-unknown",
        "a mode the runtime does not know would silently fall back to static there",
        "AIMService",
        {"model": {"ref": "llama"}, "adapterMode": "lazy"},
        'spec.adapterMode: Unsupported value: "lazy"',
    ),
    Refusal(
        "svc-max-rank-static",
        "in static mode the rank comes from the adapters: a cap there would be ignored",
        "AIMService",
        {"model": {"ref": "llama"}, "adapters": [{"name": "a"}], "adapterRuntime": {"maxRank": 64}},
        "spec.adapterRuntime.maxRank is for dynamic mode",
    ),
    Refusal(
        "svc-adapter-runtime-without-adapters",
        "a static service with no adapters has no adapter disk: its size would be ignored",
        "AIMService",
        {"model": {"ref": "llama"}, "adapterRuntime": {"diskSize": "20Gi"}},
        "spec.adapterRuntime sizes the disk adapters are staged on",
    ),
    Refusal(
        "svc-max-rank-odd",
        "a cap vLLM cannot start with",
        "AIMService",
        {"model": {"ref": "llama"}, "adapterMode": "dynamic", "adapterRuntime": {"maxRank": 48}},
        "spec.adapterRuntime.maxRank must be one of",
    ),
    Refusal(
        "src-registry-url",
        "a registry is a host, not a URL",
        "AIMClusterModelSource",
        {"filters": [{"image": "a/b"}], "registry": "https://ghcr.io"},
        "spec.registry in body should match",
    ),
]

UPDATES = [
    Change(
        "svc-change-model",
        "a running service never changes model under its users",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "mistral"}},
        "spec.model is immutable",
    ),
    Change(
        "svc-ref-to-image",
        "...nor how the model is named",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"image": "ghcr.io/x/llama:1"}},
        "spec.model is immutable",
    ),
    Change(
        "svc-change-template",
        "the template fixes the deployment: a new one is a new service",
        "AIMService",
        {"model": {"ref": "llama"}, "template": {"name": "a"}},
        {"model": {"ref": "llama"}, "template": {"name": "b"}},
        "spec.template is immutable",
    ),
    Change(
        "svc-add-template",
        "adding a template would change the chosen one silently",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "llama"}, "template": {"name": "b"}},
        "spec.template cannot be added or removed after creation",
    ),
    Change(
        "svc-remove-template",
        "...and so would removing it",
        "AIMService",
        {"model": {"ref": "llama"}, "template": {"name": "a"}},
        {"model": {"ref": "llama"}},
        "spec.template cannot be added or removed after creation",
    ),
    Change(
        "svc-change-override-metric",
        "overrides choose the template too",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"metric": "latency"}},
        {"model": {"ref": "llama"}, "overrides": {"metric": "throughput"}},
        "spec.overrides.metric is immutable",
    ),
    Change(
        "svc-add-override-precision",
        "...added or removed as much as changed",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"metric": "latency"}},
        {"model": {"ref": "llama"}, "overrides": {"metric": "latency", "precision": "fp8"}},
        "spec.overrides.precision cannot be added or removed after creation",
    ),
    Change(
        "svc-change-override-gpus",
        "...and hardware",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"hardware": {"gpu": {"requests": 1}}}},
        {"model": {"ref": "llama"}, "overrides": {"hardware": {"gpu": {"requests": 2}}}},
        "spec.overrides.hardware is immutable",
    ),
    Change(
        "tpl-change-model-name",
        "a template's identity is its model",
        "AIMServiceTemplate",
        {"modelName": "llama"},
        {"modelName": "mistral"},
        "spec.modelName is immutable",
    ),
    Change(
        "tpl-change-metric",
        "...and its profile",
        "AIMServiceTemplate",
        {"modelName": "llama", "metric": "latency"},
        {"modelName": "llama", "metric": "throughput"},
        "spec.metric is immutable",
    ),
    Change(
        "tpl-remove-precision",
        "...added or removed as much as changed",
        "AIMServiceTemplate",
        {"modelName": "llama", "precision": "fp8"},
        {"modelName": "llama"},
        "spec.precision cannot be added or removed after creation",
    ),
    Change(
        "cltpl-change-gpu-model",
        "a cluster template's hardware is its identity too",
        "AIMClusterServiceTemplate",
        {"modelName": "llama", "hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
        {"modelName": "llama", "hardware": {"gpu": {"requests": 1, "model": "MI325X"}}},
        "spec.hardware is immutable",
    ),
    Change(
        "mc-change-source",
        "a cache's volume holds one source's weights",
        "AIMModelCache",
        {"sourceUri": "hf://meta-llama/Llama-3.1-8B"},
        {"sourceUri": "hf://meta-llama/Llama-3.1-70B"},
        "spec.sourceUri is immutable",
    ),
    Change(
        "tc-change-template",
        "a template cache belongs to one template",
        "AIMTemplateCache",
        {"templateName": "a"},
        {"templateName": "b"},
        "spec.templateName is immutable",
    ),
    # What stays editable: scaling, routing, env, a catalog entry's image, cache storage.
    Change(
        "svc-scale",
        "scaling stays editable",
        "AIMService",
        {"model": {"ref": "llama"}, "template": {"name": "a"}},
        {"model": {"ref": "llama"}, "template": {"name": "a"}, "replicas": 3},
        None,
    ),
    Change(
        "svc-enable-routing",
        "routing can be turned on later",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "llama"}, "routing": {"enabled": True, "gatewayRef": {"name": "gw"}}},
        None,
    ),
    Change(
        "tpl-add-env",
        "env stays editable on a template",
        "AIMServiceTemplate",
        {"modelName": "llama", "metric": "latency"},
        {"modelName": "llama", "metric": "latency", "env": [{"name": "A", "value": "1"}]},
        None,
    ),
    Change(
        "tpl-cpu-below-limit",
        "a CPU request below its limit passes the rule: 500m is less than 1, by value",
        "AIMServiceTemplate",
        {"modelName": "llama", "hardware": {"cpu": {"requests": "500m", "limits": "1"}}},
        {
            "modelName": "llama",
            "hardware": {"cpu": {"requests": "500m", "limits": "1"}},
            "env": [{"name": "A", "value": "1"}],
        },
        None,
    ),
    Change(
        "svc-static-adds-adapter",
        "a static server loads its adapters once, at start: a new one needs a new service",
        "AIMService",
        {"model": {"ref": "llama"}, "adapters": [{"name": "a"}]},
        {"model": {"ref": "llama"}, "adapters": [{"name": "a"}, {"name": "b"}]},
        "spec.adapters cannot change in static mode",
    ),
    Change(
        "svc-static-gains-adapters",
        "...nor can a static service without adapters gain some",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "llama"}, "adapters": [{"name": "a"}]},
        "spec.adapters cannot change in static mode",
    ),
    Change(
        "svc-dynamic-changes-adapters",
        "dynamic mode exists for this: adapters come and go while the server runs",
        "AIMService",
        {"model": {"ref": "llama"}, "adapterMode": "dynamic", "adapters": [{"name": "a"}]},
        {"model": {"ref": "llama"}, "adapterMode": "dynamic", "adapters": [{"name": "b"}]},
        None,
    ),
    Change(
        "svc-mode-to-dynamic",
        "the mode decides how the server starts: it cannot change under it",
        "AIMService",
        {"model": {"ref": "llama"}, "adapterMode": "static"},
        {"model": {"ref": "llama"}, "adapterMode": "dynamic"},
        "spec.adapterMode is immutable",
    ),
    Change(
        "cache-model-becomes-adapter",
        "what a cache holds is fixed with its source",
        "AIMModelCache",
        {"sourceUri": "hf://acme/tone-lora"},
        {"sourceUri": "hf://acme/tone-lora", "type": "adapter", "compatibleWith": ["a/b"]},
        "spec.type is immutable",
    ),
    Change(
        "model-new-image",
        "a catalog entry moves to a new image version",
        "AIMClusterModel",
        {"image": "ghcr.io/x/llama:1.0"},
        {"image": "ghcr.io/x/llama:1.1"},
        None,
    ),
]


@pytest.fixture(scope="module")
def creation_errors(tools: Tools) -> dict[str, list[str]]:
    objects = [obj(c.kind, c.id, c.spec) for c in INVALID]
    objects += [obj(kind, f"valid-{kind.lower()}", spec) for kind, spec in VALID.items()]
    return {key.split("/", 1)[1]: errors for key, errors in validate_objects(tools, objects)}


@pytest.fixture(scope="module")
def update_errors(tools: Tools, crds_of_xrds: list[Path]) -> dict[str, list[str]]:
    updates = [Update(c.id, obj(c.kind, c.id, c.old), obj(c.kind, c.id, c.new)) for c in UPDATES]
    return check_updates(tools, crds_of_xrds, updates)


def test_the_table_is_large_enough() -> None:
    """At least 40 cases, and invalid cases for every kind (ids are unique: tests/cases.table)."""
    assert len(INVALID) + sum(1 for c in UPDATES if c.message) >= 40
    assert {c.kind for c in INVALID} == set(VALID)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_smallest_valid_spec_is_accepted(creation_errors: dict[str, list[str]], kind: str) -> None:
    """The bases the bad cases break are themselves valid, so each failure has one cause."""
    assert creation_errors[f"valid-{kind.lower()}"] == []


@table(INVALID)
def test_invalid_manifest_is_refused(creation_errors: dict[str, list[str]], case: Refusal) -> None:
    """The API server refuses each invalid manifest with the field named."""
    errors = creation_errors[case.id]
    assert any(case.message in e for e in errors), (case.reason, errors)


@table(UPDATES)
def test_update_is_checked_against_the_old_object(
    update_errors: dict[str, list[str]], case: Change
) -> None:
    """An update is judged against the object it replaces, as the API server judges it."""
    errors = update_errors[case.id]
    if case.message is None:
        assert errors == [], case.reason
    else:
        assert any(case.message in e for e in errors), (case.reason, errors)


def test_crossplane_validate_cannot_see_transition_rules(tools: Tools) -> None:
    """Why updates need apicheck: the same changed object passes a creation-only check."""
    new = copy.deepcopy(UPDATES[0].new)
    [(_, errors)] = validate_objects(tools, [obj("AIMService", "changed", new)])
    assert errors == []
