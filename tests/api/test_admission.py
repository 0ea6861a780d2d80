"""Bad AIM manifests are refused at admission, with a message that names the field.

Creations go through `crossplane resource validate` (schema, unknown fields, CEL); updates go
through apicheck, the API server's validation code with the old object, because immutability is
a CEL transition rule that only an update can trigger. All cases of a kind run in one call.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from devtools.admission import Update, check_updates, validate_objects
from devtools.render import Tools

CLUSTER_KINDS = {"AIMClusterRuntimeConfig", "AIMClusterModel", "AIMClusterServiceTemplate"}

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
}

HF = {"modelId": "meta-llama/Llama-3.1-8B", "sourceUri": "hf://meta-llama/Llama-3.1-8B"}
GPU1 = {"gpu": {"requests": 1}}


def obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if kind not in CLUSTER_KINDS:
        meta["namespace"] = "ml-team"
    return {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


# (case id, kind, spec, a part of the expected message)
INVALID: list[tuple[str, str, dict[str, Any], str]] = [
    # AIMService
    ("svc-no-model", "AIMService", {}, "spec.model: Required value"),
    (
        "svc-ref-and-image",
        "AIMService",
        {"model": {"ref": "llama", "image": "ghcr.io/x/llama:1"}},
        "set exactly one of spec.model.ref, spec.model.image, spec.model.custom",
    ),
    (
        "svc-empty-model",
        "AIMService",
        {"model": {}},
        "set exactly one of spec.model.ref, spec.model.image, spec.model.custom",
    ),
    (
        "svc-ref-and-custom",
        "AIMService",
        {"model": {"ref": "llama", "custom": {"modelSources": [HF], "hardware": GPU1}}},
        "set exactly one of spec.model.ref, spec.model.image, spec.model.custom",
    ),
    (
        "svc-negative-replicas",
        "AIMService",
        {"model": {"ref": "llama"}, "replicas": -1},
        "spec.replicas in body should be greater than or equal to 0",
    ),
    (
        "svc-replicas-not-a-number",
        "AIMService",
        {"model": {"ref": "llama"}, "replicas": "two"},
        "spec.replicas in body must be of type integer",
    ),
    (
        "svc-min-replicas-zero",
        "AIMService",
        {"model": {"ref": "llama"}, "minReplicas": 0},
        "spec.minReplicas in body should be greater than or equal to 1",
    ),
    (
        "svc-min-over-max",
        "AIMService",
        {"model": {"ref": "llama"}, "minReplicas": 3, "maxReplicas": 2},
        "spec.minReplicas must not exceed spec.maxReplicas",
    ),
    (
        "svc-old-aim-image-name",
        "AIMService",
        {"model": {"ref": "llama"}, "aimImageName": "llama"},
        'unknown field: "aimImageName"',
    ),
    (
        "svc-old-template-ref",
        "AIMService",
        {"model": {"ref": "llama"}, "templateRef": "llama-latency"},
        'unknown field: "templateRef"',
    ),
    (
        "svc-custom-no-sources",
        "AIMService",
        {"model": {"custom": {"hardware": GPU1}}},
        "spec.model.custom.modelSources: Required value",
    ),
    (
        "svc-custom-empty-sources",
        "AIMService",
        {"model": {"custom": {"modelSources": [], "hardware": GPU1}}},
        "spec.model.custom.modelSources in body should have at least 1 items",
    ),
    (
        "svc-custom-no-hardware",
        "AIMService",
        {"model": {"custom": {"modelSources": [HF]}}},
        "spec.model.custom.hardware: Required value",
    ),
    (
        "svc-custom-empty-hardware",
        "AIMService",
        {"model": {"custom": {"modelSources": [HF], "hardware": {}}}},
        "set at least one of hardware.gpu or hardware.cpu",
    ),
    (
        "svc-custom-http-source",
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
    (
        "svc-custom-model-id-without-org",
        "AIMService",
        {"model": {"custom": {"modelSources": [{**HF, "modelId": "llama"}], "hardware": GPU1}}},
        "spec.model.custom.modelSources[0].modelId in body should match",
    ),
    (
        "svc-bad-metric",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"metric": "speed"}},
        'spec.overrides.metric: Unsupported value: "speed"',
    ),
    (
        "svc-bad-precision",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"precision": "fp12"}},
        'spec.overrides.precision: Unsupported value: "fp12"',
    ),
    (
        "svc-gpu-model-and-min-vram",
        "AIMService",
        {
            "model": {"ref": "llama"},
            "overrides": {"hardware": {"gpu": {"model": "MI300X", "minVram": "128Gi"}}},
        },
        "gpu.model and gpu.minVram are mutually exclusive",
    ),
    (
        "svc-gpu-model-and-models",
        "AIMService",
        {
            "model": {"ref": "llama"},
            "overrides": {"hardware": {"gpu": {"model": "MI300X", "models": ["MI325X"]}}},
        },
        "set gpu.model (one GPU model) or gpu.models (a list), not both",
    ),
    (
        "svc-negative-gpus",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"hardware": {"gpu": {"requests": -2}}}},
        "spec.overrides.hardware.gpu.requests in body should be greater than or equal to 0",
    ),
    (
        "svc-bad-request-timeout",
        "AIMService",
        {"model": {"ref": "llama"}, "routing": {"requestTimeout": "1 minute"}},
        "spec.routing.requestTimeout in body should match",
    ),
    (
        "svc-gateway-without-name",
        "AIMService",
        {"model": {"ref": "llama"}, "routing": {"gatewayRef": {"namespace": "gateways"}}},
        "spec.routing.gatewayRef.name: Required value",
    ),
    (
        "svc-gateway-port-out-of-range",
        "AIMService",
        {"model": {"ref": "llama"}, "routing": {"gatewayRef": {"name": "gw", "port": 70000}}},
        "spec.routing.gatewayRef.port in body should be less than or equal to 65535",
    ),
    (
        "svc-env-without-name",
        "AIMService",
        {"model": {"ref": "llama"}, "env": [{"value": "1"}]},
        "spec.env[0].name: Required value",
    ),
    (
        "svc-bad-quantity",
        "AIMService",
        {"model": {"ref": "llama"}, "resources": {"limits": {"memory": "lots"}}},
        "spec.resources.limits.memory in body should match",
    ),
    # AIMModel / AIMClusterModel
    ("model-no-image", "AIMModel", {"discovery": {"enabled": True}}, "spec.image: Required value"),
    (
        "model-empty-image",
        "AIMModel",
        {"image": ""},
        "spec.image in body should be at least 1 chars long",
    ),
    (
        "model-custom-without-sources",
        "AIMModel",
        {"image": "amdenterpriseai/aim-base:latest", "custom": {"hardware": GPU1}},
        "spec.custom describes a custom model: also set spec.modelSources",
    ),
    (
        "model-sources-without-hardware",
        "AIMModel",
        {"image": "amdenterpriseai/aim-base:latest", "modelSources": [HF]},
        "a model with modelSources needs hardware",
    ),
    (
        "model-template-without-hardware",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"templates": [{"name": "a", "hardware": GPU1}, {"name": "b"}]},
        },
        "a model with modelSources needs hardware",
    ),
    (
        "model-two-sources",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF, {**HF, "sourceUri": "s3://bucket/llama"}],
            "custom": {"hardware": GPU1},
        },
        "spec.modelSources: Too many: 2: must have at most 1 item",
    ),
    (
        "model-template-name-too-long",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": GPU1, "templates": [{"name": "x" * 64}]},
        },
        "spec.custom.templates[0].name: Too long: may not be more than 63 bytes",
    ),
    (
        "model-discovery-not-boolean",
        "AIMModel",
        {"image": "ghcr.io/x/llama:1", "discovery": {"enabled": "yes"}},
        "spec.discovery.enabled in body must be of type boolean",
    ),
    (
        "model-bad-profile-type",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": GPU1, "type": "fast"},
        },
        'spec.custom.type: Unsupported value: "fast"',
    ),
    (
        "model-old-model-id",
        "AIMModel",
        {"image": "ghcr.io/x/llama:1", "modelId": "meta/llama-3-8b:1.1"},
        'unknown field: "modelId"',
    ),
    (
        "clmodel-gpu-model-and-min-vram",
        "AIMClusterModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": {"gpu": {"model": "MI300X", "minVram": "64Gi"}}},
        },
        "gpu.model and gpu.minVram are mutually exclusive",
    ),
    (
        "clmodel-empty-gpu-models",
        "AIMClusterModel",
        {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [HF],
            "custom": {"hardware": {"gpu": {"models": []}}},
        },
        "spec.custom.hardware.gpu.models in body should have at least 1 items",
    ),
    # AIMServiceTemplate / AIMClusterServiceTemplate
    ("tpl-no-model-name", "AIMServiceTemplate", {"metric": "latency"}, "spec.modelName: Required"),
    (
        "tpl-old-gpu-selector",
        "AIMServiceTemplate",
        {"modelName": "llama", "gpuSelector": {"count": 1, "model": "MI300X"}},
        'unknown field: "gpuSelector"',
    ),
    (
        "tpl-bad-precision",
        "AIMServiceTemplate",
        {"modelName": "llama", "precision": "fp64"},
        'spec.precision: Unsupported value: "fp64"',
    ),
    (
        "tpl-empty-hardware",
        "AIMServiceTemplate",
        {"modelName": "llama", "hardware": {}},
        "set at least one of hardware.gpu or hardware.cpu",
    ),
    (
        "tpl-cpu-without-requests",
        "AIMServiceTemplate",
        {"modelName": "llama", "hardware": {"cpu": {"limits": "8"}}},
        "spec.hardware.cpu.requests: Required value",
    ),
    (
        "tpl-bad-type",
        "AIMServiceTemplate",
        {"modelName": "llama", "type": "tuned"},
        'spec.type: Unsupported value: "tuned"',
    ),
    (
        "tpl-inline-source-bad-scheme",
        "AIMServiceTemplate",
        {"modelName": "llama", "modelSources": [{**HF, "sourceUri": "gs://bucket/llama"}]},
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>",
    ),
    (
        "cltpl-caching",
        "AIMClusterServiceTemplate",
        {"modelName": "llama", "caching": {"enabled": True}},
        'unknown field: "caching"',
    ),
    # Runtime configs
    (
        "rc-negative-headroom",
        "AIMRuntimeConfig",
        {"pvcHeadroomPercent": -5},
        "spec.pvcHeadroomPercent in body should be greater than or equal to 0",
    ),
    (
        "rc-bad-creation-scope",
        "AIMRuntimeConfig",
        {"model": {"creationScope": "Global"}},
        'spec.model.creationScope: Unsupported value: "Global"',
    ),
    (
        "rc-old-route-template",
        "AIMRuntimeConfig",
        {"routing": {"routeTemplate": "/{.metadata.namespace}"}},
        'unknown field: "routeTemplate"',
    ),
    (
        "clrc-credentials",
        "AIMClusterRuntimeConfig",
        {"imagePullSecrets": [{"name": "registry"}]},
        'unknown field: "imagePullSecrets"',
    ),
    # AIMTemplateCache / AIMModelCache
    ("tc-no-template", "AIMTemplateCache", {}, "spec.templateName: Required value"),
    (
        "tc-old-template-ref",
        "AIMTemplateCache",
        {"templateName": "t", "templateRef": "t"},
        'unknown field: "templateRef"',
    ),
    (
        "tc-bad-scope",
        "AIMTemplateCache",
        {"templateName": "t", "templateScope": "Unknown"},
        'spec.templateScope: Unsupported value: "Unknown"',
    ),
    ("mc-no-source", "AIMModelCache", {"size": "16Gi"}, "spec.sourceUri: Required value"),
    (
        "mc-http-source",
        "AIMModelCache",
        {"sourceUri": "http://example.com/llama"},
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>",
    ),
    (
        "mc-source-with-space",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/my model"},
        "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>, without spaces",
    ),
    (
        "mc-bad-model-id",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/llama", "modelId": "org/name/extra"},
        "spec.modelId in body should match",
    ),
    (
        "mc-bad-size",
        "AIMModelCache",
        {"sourceUri": "s3://bucket/llama", "size": "big"},
        "spec.size in body should match",
    ),
]

# (case id, kind, old spec, new spec, a part of the expected message or None when allowed)
UPDATES: list[tuple[str, str, dict[str, Any], dict[str, Any], str | None]] = [
    (
        "svc-change-model",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "mistral"}},
        "spec.model is immutable",
    ),
    (
        "svc-ref-to-image",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"image": "ghcr.io/x/llama:1"}},
        "spec.model is immutable",
    ),
    (
        "svc-change-template",
        "AIMService",
        {"model": {"ref": "llama"}, "template": {"name": "a"}},
        {"model": {"ref": "llama"}, "template": {"name": "b"}},
        "spec.template is immutable",
    ),
    (
        "svc-add-template",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "llama"}, "template": {"name": "b"}},
        "spec.template cannot be added or removed after creation",
    ),
    (
        "svc-remove-template",
        "AIMService",
        {"model": {"ref": "llama"}, "template": {"name": "a"}},
        {"model": {"ref": "llama"}},
        "spec.template cannot be added or removed after creation",
    ),
    (
        "svc-change-override-metric",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"metric": "latency"}},
        {"model": {"ref": "llama"}, "overrides": {"metric": "throughput"}},
        "spec.overrides.metric is immutable",
    ),
    (
        "svc-add-override-precision",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"metric": "latency"}},
        {"model": {"ref": "llama"}, "overrides": {"metric": "latency", "precision": "fp8"}},
        "spec.overrides.precision cannot be added or removed after creation",
    ),
    (
        "svc-change-override-gpus",
        "AIMService",
        {"model": {"ref": "llama"}, "overrides": {"hardware": {"gpu": {"requests": 1}}}},
        {"model": {"ref": "llama"}, "overrides": {"hardware": {"gpu": {"requests": 2}}}},
        "spec.overrides.hardware is immutable",
    ),
    (
        "tpl-change-model-name",
        "AIMServiceTemplate",
        {"modelName": "llama"},
        {"modelName": "mistral"},
        "spec.modelName is immutable",
    ),
    (
        "tpl-change-metric",
        "AIMServiceTemplate",
        {"modelName": "llama", "metric": "latency"},
        {"modelName": "llama", "metric": "throughput"},
        "spec.metric is immutable",
    ),
    (
        "tpl-remove-precision",
        "AIMServiceTemplate",
        {"modelName": "llama", "precision": "fp8"},
        {"modelName": "llama"},
        "spec.precision cannot be added or removed after creation",
    ),
    (
        "cltpl-change-gpu-model",
        "AIMClusterServiceTemplate",
        {"modelName": "llama", "hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
        {"modelName": "llama", "hardware": {"gpu": {"requests": 1, "model": "MI325X"}}},
        "spec.hardware is immutable",
    ),
    (
        "mc-change-source",
        "AIMModelCache",
        {"sourceUri": "hf://meta-llama/Llama-3.1-8B"},
        {"sourceUri": "hf://meta-llama/Llama-3.1-70B"},
        "spec.sourceUri is immutable",
    ),
    (
        "tc-change-template",
        "AIMTemplateCache",
        {"templateName": "a"},
        {"templateName": "b"},
        "spec.templateName is immutable",
    ),
    # What stays editable: scaling, routing, env, a catalog entry's image, cache storage.
    (
        "svc-scale",
        "AIMService",
        {"model": {"ref": "llama"}, "template": {"name": "a"}},
        {"model": {"ref": "llama"}, "template": {"name": "a"}, "replicas": 3},
        None,
    ),
    (
        "svc-enable-routing",
        "AIMService",
        {"model": {"ref": "llama"}},
        {"model": {"ref": "llama"}, "routing": {"enabled": True, "gatewayRef": {"name": "gw"}}},
        None,
    ),
    (
        "tpl-add-env",
        "AIMServiceTemplate",
        {"modelName": "llama", "metric": "latency"},
        {"modelName": "llama", "metric": "latency", "env": [{"name": "A", "value": "1"}]},
        None,
    ),
    (
        "model-new-image",
        "AIMClusterModel",
        {"image": "ghcr.io/x/llama:1.0"},
        {"image": "ghcr.io/x/llama:1.1"},
        None,
    ),
]


@pytest.fixture(scope="module")
def creation_errors(tools: Tools) -> dict[str, list[str]]:
    objects = [obj(kind, case, spec) for case, kind, spec, _ in INVALID]
    objects += [obj(kind, f"valid-{kind.lower()}", spec) for kind, spec in VALID.items()]
    return {key.split("/", 1)[1]: errors for key, errors in validate_objects(tools, objects)}


@pytest.fixture(scope="module")
def update_errors(tools: Tools, crds_of_xrds: list[Path]) -> dict[str, list[str]]:
    updates = [
        Update(case, obj(kind, case, old), obj(kind, case, new))
        for case, kind, old, new, _ in UPDATES
    ]
    return check_updates(tools, crds_of_xrds, updates)


def test_the_table_is_large_enough() -> None:
    """At least 40 cases, none named twice, and invalid cases for every kind."""
    assert len(INVALID) + sum(1 for *_, m in UPDATES if m) >= 40
    assert len({case for case, *_ in INVALID}) == len(INVALID)
    assert {kind for _, kind, *_ in INVALID} == set(VALID)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_smallest_valid_spec_is_accepted(creation_errors: dict[str, list[str]], kind: str) -> None:
    """The bases the bad cases break are themselves valid, so each failure has one cause."""
    assert creation_errors[f"valid-{kind.lower()}"] == []


@pytest.mark.parametrize(("case", "kind", "spec", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_manifest_is_refused(
    creation_errors: dict[str, list[str]], case: str, kind: str, spec: Any, message: str
) -> None:
    """The API server refuses each invalid manifest with the field named."""
    del kind, spec
    errors = creation_errors[case]
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize(
    ("case", "kind", "old", "new", "message"), UPDATES, ids=[c[0] for c in UPDATES]
)
def test_update_is_checked_against_the_old_object(
    update_errors: dict[str, list[str]],
    case: str,
    kind: str,
    old: Any,
    new: Any,
    message: str | None,
) -> None:
    """An update is judged against the object it replaces, as the API server judges it."""
    del kind, old, new
    errors = update_errors[case]
    if message is None:
        assert errors == []
    else:
        assert any(message in e for e in errors), errors


def test_crossplane_validate_cannot_see_transition_rules(tools: Tools) -> None:
    """Why updates need apicheck: the same changed object passes a creation-only check."""
    _, _, _, new, _ = UPDATES[0]
    [(_, errors)] = validate_objects(tools, [obj("AIMService", "changed", copy.deepcopy(new))])
    assert errors == []
