"""AIMClusterModelSource: a catalog that fills itself from a registry's repositories and tags.

Each filter names images (one image, a repository's tags, or repositories matching a wildcard);
every `syncInterval` the function lists the registry and creates an AIMClusterModel for each
image that matches and is not in the catalog yet, up to `maxModels`. Models are never removed
or changed when their image goes: services may use them.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from function.api.cel import rule, validations
from function.api.common import ApiModel, LocalObjectReference, ObservedStatus
from function.api.model import DiscoveryConfig, ModelStatusValue

SYNC_INTERVAL_PATTERN = r"^([0-9]{1,5}(h|m|s)){1,3}$"
DEFAULT_SYNC_INTERVAL = "1h"
MIN_SYNC_INTERVAL_S = 60
MAX_FILTERS = 100
MAX_CONSTRAINTS = 20
MAX_CONSTRAINT: Final = 256
"""A constraint longer than this is refused: nobody writes one, and matching is per tag."""


Repository = Annotated[str, Field(min_length=1, max_length=255)]
"""A repository name as registries give it (`org/aim-base`)."""
Constraint = Annotated[str, Field(min_length=1, max_length=MAX_CONSTRAINT)]
"""A semantic version constraint (`>=0.8`, `~1.2 || ^2`)."""


class ModelSourceFilter(ApiModel):
    """Which images of the registry become models."""

    image: str = Field(
        min_length=1,
        max_length=512,
        description=(
            "An image (`org/aim-qwen:0.8.5`: that tag only), a repository (`org/aim-qwen`: its "
            "tags), or a wildcard (`org/aim-*`: every repository that matches, from the "
            "registry's catalog, or on Docker Hub and ghcr.io from the namespace's list, so "
            "there it starts with its namespace). A first segment with a `.` or `:` names a "
            "registry (`ghcr.io/org/aim-*`); otherwise `spec.registry` is used."
        ),
    )
    exclude: list[Repository] | None = Field(
        default=None,
        max_length=100,
        description="Repositories (exact, without registry: `org/aim-base`) to leave out.",
    )
    versions: list[Constraint] | None = Field(
        default=None,
        max_length=MAX_CONSTRAINTS,
        description=(
            "Semantic version constraints a tag must all satisfy (`>=0.8`, `~1.2 || ^2`); "
            "replaces `spec.versions` for this filter. Tags that are no version are skipped "
            "when there are constraints."
        ),
    )


class ClusterModelSourceSpec(ApiModel):
    """Desired state of an AIMClusterModelSource."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            rule(
                "duration(self.syncInterval) >= duration('1m')",
                "spec.syncInterval must be at least 1m: every sync lists the registry",
            ),
        )
    }

    registry: str = Field(
        default="docker.io",
        min_length=1,
        max_length=253,
        pattern=r"^[A-Za-z0-9.-]+(:[0-9]{1,5})?$",
        description="Registry host (`host[:port]`) of filters that name none.",
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None,
        max_length=20,
        description=(
            "Secrets (kubernetes.io/dockerconfigjson, in the function's system namespace) for "
            "listing the registry; the models created are given them too."
        ),
    )
    filters: list[ModelSourceFilter] = Field(
        min_length=1,
        max_length=MAX_FILTERS,
        description="Images to add to the catalog; an image matching any filter is added.",
    )
    versions: list[Constraint] | None = Field(
        default=None,
        max_length=MAX_CONSTRAINTS,
        description="Semantic version constraints for filters that give none.",
    )
    max_models: int = Field(
        default=100,
        ge=1,
        le=10000,
        description=(
            "Most models this source creates, across all its filters; past it, new images are "
            "only counted."
        ),
    )
    sync_interval: str = Field(
        default=DEFAULT_SYNC_INTERVAL,
        pattern=SYNC_INTERVAL_PATTERN,
        max_length=32,
        description="How often the registry is listed again (`30m`, `1h`, `24h`; at least 1m).",
    )
    discovery: DiscoveryConfig | None = Field(
        default=None,
        description=(
            "`spec.discovery` of every model created. Omitted, each model reads its image's "
            "labels and creates its service templates; `enabled: false` turns that off."
        ),
    )


class FilterStatus(ApiModel):
    """What one filter found at the last sync."""

    image: str = Field(description="The filter's `image`.")
    matched: int = Field(default=0, ge=0, description="Images that matched.")
    error: str | None = Field(default=None, description="Why the registry could not be listed.")
    note: str | None = Field(
        default=None, description="What was cut short (catalogs and tag lists are read in part)."
    )


class FailedSync(ApiModel):
    """A sync whose listing could not be used: nothing of it was created or recorded."""

    time: str = Field(description="When the registry was listed (RFC 3339).")
    generation: int = Field(ge=0, description="The metadata.generation whose filters it listed.")
    reason: str = Field(description="Why it could not be used: `RegistryTooLarge`.")
    message: str = Field(
        description="How far the listing got, what it grew past, and how to narrow it."
    )


class ClusterModelSourceStatus(ObservedStatus):
    """Observed state of an AIMClusterModelSource, written by the function."""

    status: ModelStatusValue = Field(
        default=ModelStatusValue.PENDING, description="Lifecycle state."
    )
    discovered_models: int | None = Field(
        default=None, ge=0, description="Models this source has created."
    )
    available_models: int | None = Field(
        default=None,
        ge=0,
        description="Images that matched at the last sync, in the catalog already or not.",
    )
    models_limit_reached: bool | None = Field(
        default=None, description="More images matched than `maxModels` let this source create."
    )
    models_omitted: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Matching images left out at the last sync because `maxModels` was reached (counted, "
            "not named: one whose name would have been taken or invalid counts too)."
        ),
    )
    last_sync_time: str | None = Field(
        default=None, description="When the registry was last listed (RFC 3339)."
    )
    synced_generation: int | None = Field(
        default=None,
        ge=0,
        description="The metadata.generation whose filters the last sync listed.",
    )
    filters: list[FilterStatus] | None = Field(
        default=None, description="Each filter's outcome at the last sync, in spec order."
    )
    skipped: list[str] | None = Field(
        default=None,
        description="Matching images not created, and why (in the catalog already, over limit).",
    )
    failed_sync: FailedSync | None = Field(
        default=None,
        description=(
            "The last sync, when its listing could not be used (more tags than the function "
            "reads, or composes within its budget, in one sync); the fields above stay those of "
            "the last sync that completed, and the models it created are kept. Cleared by the "
            "next sync that completes."
        ),
    )
