"""aim-migrate on the AIM operator's manifests (aim.eai.amd.com v1alpha1 and v1alpha2).

Each row converts the last manifest of a fixture in tests/unit/migrate/operator_manifests (the
others are the rest of the run) and says what the result must be: its kind and spec, the fields the
report names as not carried, and those it warns of. Expected specs are written by hand from the
operator's field meanings and this API's (docs/api.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from aim_migrate.cli import cli
from aim_migrate.rules import collect_context, migrate
from tests.cases import Case, table

FIXTURES = Path(__file__).parent / "operator_manifests"


@dataclass(frozen=True)
class OperatorCase(Case):
    fixture: str
    kind: str | None
    """Kind of the result; None when the object is left out."""
    spec: dict[str, Any] | None = None
    not_carried: tuple[str, ...] = ()
    """The field (or object) each not-carried line names, in order."""
    warned: tuple[str, ...] = ()
    """Fields some warning names."""
    metadata: dict[str, Any] | None = None


CASES = [
    OperatorCase(
        "service-older",
        "an early v1alpha1 service: templateName, model.ref and gpuSelector move to their "
        "places here; spec.storage has none (runtime configs carry it)",
        "service-older.yaml",
        "AIMService",
        {
            "model": {"ref": "llama-3-8b"},
            "template": {"name": "llama-3-8b-latency"},
            "cacheModel": True,
            "overrides": {"hardware": {"gpu": {"requests": 2, "model": "MI300X"}}},
        },
        not_carried=("spec.storage",),
    ),
    OperatorCase(
        "service-newest",
        "the newest v1alpha1 service: model.name becomes model.ref, in the path template too; "
        "routing hostnames (operator 0.2.6) carry over; caching Never becomes cacheModel false "
        "with a warning (the operator cached anyway); a priority class has no place",
        "service-newest.yaml",
        "AIMService",
        {
            "model": {"ref": "llama-3-8b"},
            "template": {"name": "llama-3-8b-latency", "allowUnoptimized": True},
            "cacheModel": False,
            "replicas": 3,
            "routing": {
                "enabled": True,
                "hostnames": ["chat.ml-team.example.com"],
                "pathTemplate": "/{.metadata.namespace}/{.spec.model.ref}/{.spec.template.name}",
            },
        },
        not_carried=("spec.priorityClassName",),
        warned=("spec.caching.mode",),
    ),
    OperatorCase(
        "service-scale-to-zero",
        "an operator 0.2.6 service: minReplicas 0 (scale to zero), hostnames, the adapter mode, "
        "the adapters (by name: their artifacts become adapter caches) and the rank cap carry "
        "over; an adapter's kind has no place (always an adapter cache here)",
        "service-scale-to-zero.yaml",
        "AIMService",
        {
            "model": {"ref": "llama-3-8b"},
            "minReplicas": 0,
            "maxReplicas": 2,
            "adapterMode": "dynamic",
            "adapters": [{"name": "support-tone"}],
            "adapterRuntime": {"maxRank": 64},
            "routing": {"enabled": True, "hostnames": ["chat.ml-team.example.com"]},
        },
        warned=("spec.adapters[0].kind",),
    ),
    OperatorCase(
        "adapter-artifact",
        "an operator 0.2.5+ adapter artifact becomes an adapter cache; its parentArtifact (the "
        "exact mode) is named with the fix, compatibleWith and rank carry",
        "adapter-artifact.yaml",
        "AIMModelCache",
        {
            "sourceUri": "hf://acme/llama-3-8b-support-tone",
            "type": "adapter",
            "compatibleWith": ["meta-llama/Llama-3.1-8B-Instruct"],
            "rank": 16,
        },
        not_carried=("spec.modelId", "spec.parentArtifact"),
    ),
    OperatorCase(
        "service-custom",
        "custom weights in an older shape: gpuSelector becomes hardware.gpu and the oldest "
        "sources' name becomes modelId",
        "service-custom.yaml",
        "AIMService",
        {
            "model": {
                "custom": {
                    "baseImage": "amdenterpriseai/aim-base:0.7.0",
                    "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
                    "modelSources": [
                        {
                            "modelId": "my-org/llama-ft",
                            "sourceUri": "s3://models/llama-ft",
                            "size": "16Gi",
                        }
                    ],
                }
            },
            "cacheModel": True,
        },
    ),
    OperatorCase(
        "model-older",
        "an older custom model: top-level hardware/type/customTemplates become spec.custom; a "
        "template type `general` has no counterpart",
        "model-older.yaml",
        "AIMModel",
        {
            "image": "amdenterpriseai/aim-base:0.8.5",
            "discovery": {"enabled": False, "autoCreateTemplates": True},
            "modelSources": [
                {
                    "modelId": "my-org/llama-ft",
                    "sourceUri": "hf://my-org/llama-ft",
                    "size": "16Gi",
                }
            ],
            "custom": {
                "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
                "type": "preview",
                "templates": [
                    {"name": "fast", "profile": {"metric": "latency", "precision": "bf16"}}
                ],
            },
        },
        not_carried=("spec.customTemplates[0].type",),
    ),
    OperatorCase(
        "model-image-with-custom",
        "an image model with custom hardware (ignored by the operator) cannot keep it here, "
        "where custom means custom weights; defaultServiceTemplate and resources are carried "
        "but act here where the operator ignored them; the namespace of a cluster kind goes",
        "model-image-with-custom.yaml",
        "AIMClusterModel",
        {
            "image": "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5",
            "defaultServiceTemplate": "qwen3-32b-latency",
            "resources": {"limits": {"memory": "64Gi"}},
        },
        not_carried=("spec.custom",),
        warned=("spec.defaultServiceTemplate", "spec.resources"),
        metadata={"name": "qwen3-32b"},
    ),
    OperatorCase(
        "model-v1alpha2-profiles",
        "v1alpha2's profile-derived model has no image: nothing here derives models from profiles",
        "model-v1alpha2-profiles.yaml",
        None,
        not_carried=("spec.image", "spec.profiles"),
    ),
    OperatorCase(
        "cluster-template-older",
        "an older cluster template: gpuSelector with its resource name becomes hardware.gpu; "
        "caching is a namespace concern here",
        "cluster-template-older.yaml",
        "AIMClusterServiceTemplate",
        {
            "modelName": "llama-3-8b",
            "metric": "latency",
            "precision": "fp16",
            "hardware": {"gpu": {"requests": 1, "model": "MI300X", "resourceName": "amd.com/gpu"}},
        },
        not_carried=("spec.caching",),
    ),
    OperatorCase(
        "template-general",
        "a namespace template keeps its caching block (same shape); type `general` is not a "
        "type here",
        "template-general.yaml",
        "AIMServiceTemplate",
        {
            "modelName": "llama-3-8b",
            "profileId": "vllm-mi300x-fp16-tp1-latency",
            "caching": {"enabled": True, "env": [{"name": "HF_TOKEN", "value": "x"}]},
        },
        not_carried=("spec.type",),
    ),
    OperatorCase(
        "runtime-config-deprecated",
        "spec.storage wins over the deprecated top-level field, as in the operator; the "
        "deprecated headroom counts where storage leaves it unset",
        "runtime-config-deprecated.yaml",
        "AIMRuntimeConfig",
        {"defaultStorageClassName": "new-class", "pvcHeadroomPercent": 20},
        warned=("spec.defaultStorageClassName",),
    ),
    OperatorCase(
        "template-cache",
        "scope Unknown means look in both places, which is the default here; fields the "
        "operator did not use are left out with a warning, not a loss",
        "template-cache.yaml",
        "AIMTemplateCache",
        {"templateName": "llama-3-8b-latency"},
        warned=("spec.mode", "spec.downloadImage", "spec.modelSources"),
    ),
    OperatorCase(
        "model-cache-older",
        "the older AIMModelCache: the same fields, but not the operator's downloader image, "
        "which runs other scripts",
        "model-cache-older.yaml",
        "AIMModelCache",
        {"sourceUri": "hf://meta-llama/Llama-3.1-8B", "size": "20Gi"},
        warned=("spec.modelDownloadImage",),
    ),
    OperatorCase(
        "kvcache",
        "KV caches have no counterpart: left out of the output, with the reason",
        "kvcache.yaml",
        None,
        not_carried=("the whole AIMKVCache",),
    ),
    OperatorCase(
        "exported",
        "an object as kubectl exports it: server fields, the operator's finalizers and status "
        "go; the owner reference goes with a warning (the converted model makes its own)",
        "exported.yaml",
        "AIMServiceTemplate",
        {"modelName": "llama-3-8b", "metric": "throughput"},
        warned=("metadata.ownerReferences",),
        metadata={"name": "llama-3-8b-mi300x-fp8", "namespace": "ml", "labels": {"team": "nlp"}},
    ),
    OperatorCase(
        "profile-cpu-cluster",
        "a cluster CPU profile becomes a cluster template on the cluster model with its image, "
        "its CPU request the template's hardware; a CPU architecture has no place",
        "profile-cpu-cluster.yaml",
        "AIMClusterServiceTemplate",
        {
            "modelName": "tiny",
            "resources": {"requests": {"cpu": "8"}},
            "modelSources": [{"modelId": "example/tiny", "sourceUri": "hf://example/tiny"}],
            "hardware": {"cpu": {"requests": "8"}},
        },
        not_carried=("spec.acceleratorModel", "spec.caching"),
    ),
    OperatorCase(
        "profile-without-model",
        "a GPU profile whose image no model of the run serves: the template cannot name its "
        "model; the engine's own environment has no place",
        "profile-without-model.yaml",
        "AIMServiceTemplate",
        {
            "modelSources": [
                {"modelId": "qwen/qwen3-32b-fp8", "sourceUri": "hf://Qwen/Qwen3-32B-FP8"}
            ],
            "hardware": {"gpu": {"requests": 2, "model": "MI325X"}},
        },
        not_carried=("spec.image", "spec.engineEnv", "the result is not valid yet"),
        warned=("spec.acceleratorModel",),
    ),
    OperatorCase(
        "profile-base",
        "a base profile (no weights) is derivation material: left out",
        "profile-base.yaml",
        None,
        not_carried=("spec.image", "the whole profile's purpose"),
    ),
    OperatorCase(
        "service-profile-missing",
        "a service on a profile not in the run: the template is named, the model cannot be; "
        "engine argument overrides have no place",
        "service-profile-missing.yaml",
        "AIMService",
        {"template": {"name": "qwen3-fp8"}},
        not_carried=(
            "spec.model",
            "spec.profileOverrides.engineArgs",
            "the result is not valid yet",
        ),
        warned=("spec.caching",),
    ),
    OperatorCase(
        "service-profile-cluster",
        "a service on a cluster profile names the cluster model with the profile's image",
        "service-profile-cluster.yaml",
        "AIMService",
        {"model": {"ref": "tiny"}, "template": {"name": "tiny-cpu"}, "cacheModel": True},
        warned=("spec.caching.mode",),
    ),
    OperatorCase(
        "profileset",
        "profile sets generate profiles: no counterpart, left out",
        "profileset.yaml",
        None,
        not_carried=("the whole AIMClusterProfileSet",),
    ),
    OperatorCase(
        "unknown-version",
        "a version of the operator's API this converter does not know is refused, not guessed",
        "unknown-version.yaml",
        None,
        not_carried=("the whole AIMService",),
    ),
]


def _convert(fixture: str) -> tuple[Any, Any]:
    """The CLI on one fixture: the last manifest's result (or None), and the report lines."""
    docs = list(yaml.safe_load_all((FIXTURES / fixture).read_text()))
    result = CliRunner().invoke(cli, [str(FIXTURES / fixture)])
    out = [d for d in yaml.safe_load_all(result.stdout) if d is not None]
    last = migrate(docs[-1], collect_context(docs))
    converted = out[-1] if not last.dropped else None
    return converted, result


@table(CASES)
def test_operator_manifests_convert(case: OperatorCase) -> None:
    """Each operator kind and shape converts to what its fields mean here, and the report
    names every field that could not be carried or behaves differently."""
    converted, result = _convert(case.fixture)
    lines = result.stderr.splitlines()
    # Only the last manifest's block of the report.
    block = lines[max(i for i, line in enumerate(lines) if not line.startswith("  ")) :]
    not_carried = [
        line.strip().removeprefix("NOT CARRIED: ") for line in block if "NOT CARRIED" in line
    ]
    warnings = [line.strip().removeprefix("WARNING: ") for line in block if "WARNING" in line]
    assert [n.split(":", 1)[0] for n in not_carried] == list(case.not_carried), (
        case.reason,
        not_carried,
    )
    for warned in case.warned:
        assert any(w.startswith(warned) for w in warnings), (case.reason, warned, warnings)
    assert result.exit_code == (1 if case.not_carried else 0), (case.reason, result.stderr)
    if case.kind is None:
        assert converted is None or converted.get("apiVersion", "").startswith("aim.silogen.ai")
        assert "(left out)" in block[0], block
        return
    assert converted["apiVersion"] == "aim.silogen.ai/v1alpha1"
    assert converted["kind"] == case.kind, case.reason
    assert converted["spec"] == case.spec, case.reason
    assert "status" not in converted
    if case.metadata is not None:
        assert converted["metadata"] == case.metadata, case.reason


def test_a_run_keeps_the_other_manifests_when_one_is_left_out() -> None:
    """A refused object is left out of the output; the rest of the run is still written."""
    text = (
        (FIXTURES / "profileset.yaml").read_text()
        + "---\n"
        + (FIXTURES / "template-general.yaml").read_text()
    )
    result = CliRunner().invoke(cli, ["-"], input=text)
    out = [d for d in yaml.safe_load_all(result.stdout) if d is not None]
    assert [d["kind"] for d in out] == ["AIMServiceTemplate"]
    assert result.exit_code == 1
