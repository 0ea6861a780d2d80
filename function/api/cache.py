"""AIMTemplateCache and AIMModelCache: model artifacts pre-warmed into PVCs that services mount."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Final

from pydantic import Field, WithJsonSchema

from function.api.cel import immutable, rule, validations
from function.api.common import (
    MODEL_ID_PATTERN,
    OBJECT_NAME_PATTERN,
    SOURCE_URI_MESSAGE,
    SOURCE_URI_RULE,
    ApiModel,
    EnvVar,
    LocalObjectReference,
    ObservedStatus,
    Quantity,
    ResolvedReference,
    SourceUri,
)

# KServe's storage initializer of the release we compose InferenceServices for (KSERVE_VERSION in
# scripts/build-tools.sh), the tag KServe's own installers give it; the end-to-end tier downloads
# with an image built as it is (tests/unit/repo/test_download_image.py holds them together).
DEFAULT_DOWNLOAD_IMAGE: Final = "kserve/storage-initializer:v0.20.0"
ADAPTER_RANKS: Final = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The ranks an inference server can be started with (vLLM's `--max-lora-rank` choices)."""


class TemplateScope(StrEnum):
    """Which kind of template a cache names."""

    NAMESPACE = "Namespace"
    CLUSTER = "Cluster"


class TemplateCacheSpec(ApiModel):
    """Desired state of an AIMTemplateCache."""

    template_name: str = Field(
        min_length=1,
        max_length=253,
        description="AIMServiceTemplate in the namespace, else AIMClusterServiceTemplate.",
        json_schema_extra=validations(immutable("spec.templateName")),
    )
    template_scope: TemplateScope | None = Field(
        default=None,
        description="Look only at namespace (Namespace) or cluster (Cluster) templates.",
    )
    storage_class_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Storage class of the cache PVCs.",
    )
    env: list[EnvVar] | None = Field(
        default=None, description="Environment of the downloads (credentials such as HF_TOKEN)."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling the download image."
    )
    runtime_config_name: str = Field(
        default="default", min_length=1, max_length=253, description="Runtime config to apply."
    )


class CacheStatusValue(StrEnum):
    """The coarse lifecycle state of a cache."""

    PENDING = "Pending"
    PROGRESSING = "Progressing"
    AVAILABLE = "Available"
    FAILED = "Failed"


class CacheEntry(ApiModel):
    """One model cache of a template cache."""

    name: str = Field(description="Name of the AIMModelCache.")
    source_uri: str = Field(description="What it caches.")
    status: CacheStatusValue = Field(description="Its status.")
    persistent_volume_claim: str | None = Field(default=None, description="Its PVC.")


class TemplateCacheStatus(ObservedStatus):
    """Observed state of an AIMTemplateCache, written by the function."""

    status: CacheStatusValue = Field(
        default=CacheStatusValue.PENDING, description="Lifecycle state."
    )
    resolved_runtime_config: ResolvedReference | None = Field(
        default=None, description="The runtime config in use."
    )
    resolved_template: ResolvedReference | None = Field(default=None, description="The template.")
    resolved_template_kind: str | None = Field(
        default=None, description="AIMServiceTemplate or AIMClusterServiceTemplate."
    )
    model_caches: list[CacheEntry] | None = Field(
        default=None, description="The model caches, one per model source."
    )
    unused_since: str | None = Field(
        default=None,
        description=(
            "For a cache a service created: since when no AIMService relies on it (names it in "
            "`status.templateCache`), RFC 3339; unset while one does."
        ),
    )
    retained_until: str | None = Field(
        default=None,
        description=(
            "When an unused cache a service created gives up its model caches and their PVCs: "
            "`unusedSince` plus the runtime config's `caching.retention`."
        ),
    )


Checksums = Annotated[
    dict[str, str],
    WithJsonSchema(
        {
            "type": "object",
            "maxProperties": 1000,
            "additionalProperties": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "maxLength": 64,
            },
        }
    ),
]
"""File paths to lowercase hex sha256 digests."""


class ModelCacheType(StrEnum):
    """What a cache holds: a model's weights, or a LoRA adapter for models it names."""

    MODEL = "model"
    ADAPTER = "adapter"


class ModelCacheSpec(ApiModel):
    """Desired state of an AIMModelCache."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            rule(
                "self.type == 'adapter' ? has(self.compatibleWith)"
                " : !has(self.compatibleWith) && !has(self.rank)",
                "an adapter (spec.type: adapter) names the models it fits in "
                "spec.compatibleWith; spec.compatibleWith and spec.rank are for adapters only",
            ),
            rule(
                "self.type != 'adapter' || !has(self.modelId)",
                "spec.modelId is a model's mount path; clients ask for an adapter by the "
                "cache's name",
            ),
        ),
    }

    type: ModelCacheType = Field(
        default=ModelCacheType.MODEL,
        description=(
            "model: a model's weights, which services mount as their model. adapter: a LoRA "
            "adapter (PEFT files), which services list in `spec.adapters`."
        ),
        json_schema_extra=validations(immutable("spec.type")),
    )
    compatible_with: (
        list[Annotated[str, Field(max_length=256, pattern=MODEL_ID_PATTERN)]] | None
    ) = Field(
        default=None,
        min_length=1,
        max_length=16,
        description=(
            "For an adapter: the ids (`org/name`) of the base models it was trained on; a "
            "service serving another model refuses it."
        ),
    )
    rank: int | None = Field(
        default=None,
        ge=1,
        le=512,
        description=(
            "For an adapter: its LoRA rank, one of 1, 8, 16, 32, 64, 128, 256, 320, 512. Unset: "
            "16. Staging refuses an adapter whose `adapter_config.json` says more."
        ),
        json_schema_extra=validations(
            rule(
                f"self in {list(ADAPTER_RANKS)}",
                "spec.rank must be one of 1, 8, 16, 32, 64, 128, 256, 320, 512",
            ),
        ),
    )
    source_uri: SourceUri = Field(
        min_length=1,
        max_length=2048,
        description="What to download: `hf://org/model` or `s3://bucket/key`.",
        json_schema_extra=validations(
            rule(f"self.matches('{SOURCE_URI_RULE}')", SOURCE_URI_MESSAGE),
            immutable("spec.sourceUri"),
        ),
    )
    model_id: str | None = Field(
        default=None,
        max_length=256,
        pattern=MODEL_ID_PATTERN,
        description="Canonical model id, `org/name`; sets the mount path in services.",
    )
    storage_class_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Storage class of the PVC.",
    )
    size: Quantity | None = Field(
        default=None, description="PVC size before headroom; found by a size-check Job if unset."
    )
    env: list[EnvVar] | None = Field(
        default=None, description="Environment of the download (credentials such as HF_TOKEN)."
    )
    model_download_image: str = Field(
        default=DEFAULT_DOWNLOAD_IMAGE,
        min_length=1,
        max_length=1024,
        description="Image of the download Job.",
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling the download image."
    )
    runtime_config_name: str = Field(
        default="default", min_length=1, max_length=253, description="Runtime config to apply."
    )
    checksums: Checksums | None = Field(
        default=None,
        description=(
            "sha256 of files of the download, by path under the source (`model.gguf`, "
            "`weights/part-1.safetensors`): checked once it finishes, for any source; a "
            "mismatch downloads again, and fails the cache when every attempt mismatches."
        ),
        json_schema_extra=validations(
            rule(
                "self.all(k, !k.startsWith('/') && !k.contains('..') && size(k) <= 1024)",
                "spec.checksums keys are relative paths under the source, without '..'",
            ),
        ),
    )


class DownloadStatus(ApiModel):
    """The download Job's attempts, as its Job reports them."""

    protocol: str = Field(max_length=16, description="The source's scheme: hf, s3, gs, https, ...")
    attempt: int = Field(ge=1, le=100, description="The attempt running, or the last one made.")
    total_attempts: int = Field(ge=1, le=100, description="Attempts the Job makes before failing.")
    downloaded_bytes: int | None = Field(
        default=None, ge=0, description="Bytes in the volume, as the download's reporter measured."
    )
    total_bytes: int | None = Field(default=None, ge=0, description="The source's size.")
    percent: int | None = Field(
        default=None, ge=0, le=100, description="downloadedBytes of totalBytes, rounded down."
    )
    updated_at: str | None = Field(
        default=None, description="When the reporter last measured (RFC 3339)."
    )
    grew_at: str | None = Field(
        default=None, description="When the download last wrote a byte (RFC 3339)."
    )


class Verification(ApiModel):
    """How the download was checked against its source once it finished."""

    method: str = Field(
        max_length=32,
        description="huggingface-sha256 (every file against the Hub's hashes), or none.",
    )
    files: int | None = Field(default=None, ge=0, description="Files whose hash matched.")
    bytes: int | None = Field(default=None, ge=0, description="Bytes checked.")
    reason: str | None = Field(
        default=None, max_length=300, description="Why nothing was checked (method none)."
    )


class ModelCacheStatus(ObservedStatus):
    """Observed state of an AIMModelCache, written by the function."""

    status: CacheStatusValue = Field(
        default=CacheStatusValue.PENDING, description="Lifecycle state."
    )
    persistent_volume_claim: str | None = Field(default=None, description="Name of the PVC.")
    size: Quantity | None = Field(default=None, description="Size of the model, once known.")
    last_used: str | None = Field(
        default=None, description="When a service last started with this cache (RFC 3339)."
    )
    download: DownloadStatus | None = Field(
        default=None, description="The download's attempts and progress, while its Job exists."
    )
    verification: Verification | None = Field(
        default=None, description="The check of the downloaded files, once it passed."
    )
