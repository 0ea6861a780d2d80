"""Where a model's image metadata comes from on this call, and what to ask the registry.

In order: a custom model has none (its weights are in the spec); `spec.imageMetadata` is used as
given (air-gapped sites) and shown in `status.imageMetadata`; labels stored in status for the
same `spec.image` are parsed again (the registry is not asked twice for one image); unless
`spec.discovery.enabled` is false, the registry is asked, with the pull secrets of the model and
its runtime config; otherwise there is none.

An image read from its registry must carry the required AIM labels (`labels.REQUIRED`): one
without them is no AIM model image, and its model is Failed naming what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.api.model import ImageMetadata, ModelSpec, ModelStatus
from function.kube.contract import Observed, Requirement
from function.kube.views import field_at, string_at
from function.registry import reference
from function.registry.credentials import SecretFormatError, credential_for
from function.registry.inspect import (
    MAX_ENTRYPOINT_ARG,
    MAX_ENTRYPOINT_ARGS,
    FailureKind,
    Inspection,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.labels import LabelError, image_metadata, kept, missing_required
from function.rules.status import ConditionType, Health, Reason, State

# Registry answers that only the user can fix; the rest may pass on their own.
_USER_FAILURES: Final = frozenset({FailureKind.UNAUTHORIZED, FailureKind.NOT_FOUND})
RETRY_AFTER_S: Final = 60
_MAX_DIGEST: Final = 128  # `sha256:` and 64 hex digits, with room; a status may say anything


@dataclass(frozen=True)
class MetadataOutcome:
    """The metadata to create templates from (None: none known), and what to record in status."""

    health: Health
    metadata: ImageMetadata | None = None
    request: InspectionRequest | None = None
    image: ImageRecord | None = None
    """What the model's status keeps of its image; None: nothing."""
    retry_after_s: int | None = None


@dataclass(frozen=True)
class ImageRecord:
    """What a model's status keeps of its image.

    The metadata is what `kubectl get` shows (the MODEL column); the image, digest, labels and
    entrypoint as inspected let the next calls use them without asking the registry again until
    spec.image changes.
    """

    metadata: ImageMetadata | None = None
    inspected_image: str | None = None
    digest: str | None = None
    labels: Mapping[str, str] | None = None
    entrypoint: Sequence[str] = ()

    @classmethod
    def stored(cls, model: Manifest) -> ImageRecord | None:
        """What the model's status kept of the image it inspected; None when it kept no labels.

        Read field by field, each bounded as when inspected, so a status another writer broke
        in one field still saves a registry call.
        """
        labels = field_at(model, "status", "imageLabels")
        if not isinstance(labels, dict):
            return None
        digest = field_at(model, "status", "imageDigest")
        return cls(
            inspected_image=string_at(model, "status", "inspectedImage"),
            digest=str(digest) if digest is not None else "",
            labels=_string_map(labels),
            entrypoint=stored_entrypoint(model),
        )

    def recorded_in(self, status: ModelStatus) -> ModelStatus:
        """`status` with this record in it."""
        return status.model_copy(
            update={
                "image_metadata": self.metadata,
                "inspected_image": self.inspected_image,
                "image_digest": self.digest,
                "image_labels": dict(self.labels) if self.labels is not None else None,
                "image_entrypoint": list(self.entrypoint) or None,
            }
        )


def secret_requirements(names: Sequence[str], namespace: str) -> list[Requirement]:
    """One requirement per pull secret, by name."""
    return [
        Requirement(f"pull-secret-{name}", "v1", "Secret", match_name=name, namespace=namespace)
        for name in names
    ]


def decide(
    observed: Observed, spec: ModelSpec, pull_secrets: Sequence[str], secret_namespace: str
) -> MetadataOutcome:
    """The metadata for this call, or the inspection `fn.py` must run first."""
    if spec.model_sources:
        return MetadataOutcome(
            ConditionType.METADATA_EXTRACTED.ready(
                Reason.CUSTOM_MODEL, "custom model: the image is not inspected"
            )
        )
    if spec.image_metadata is not None:
        return MetadataOutcome(
            ConditionType.METADATA_EXTRACTED.ready(
                Reason.METADATA_PROVIDED,
                "spec.imageMetadata is used as given; the registry is not asked",
            ),
            metadata=spec.image_metadata,
            # What `kubectl get` shows (the MODEL column) is the same whichever way it came.
            image=ImageRecord(metadata=spec.image_metadata),
        )
    disabled = MetadataOutcome(
        ConditionType.METADATA_EXTRACTED.ready(
            Reason.DISCOVERY_DISABLED,
            "spec.discovery.enabled is false: the image is not inspected and no templates "
            "are created from its labels",
        )
    )
    stored = ImageRecord.stored(observed.composite)
    if stored is not None and stored.inspected_image == spec.image:
        outcome = _from_inspection(
            spec.image, stored.labels or {}, stored.digest or "", stored.entrypoint
        )
        # Labels read before discovery was turned off still serve while they are usable; turning
        # it off is also how a user stops judging an image whose labels are not.
        return outcome if spec.discovery_enabled or outcome.metadata is not None else disabled
    if not spec.discovery_enabled:
        return disabled
    return _inspect(observed, spec.image, pull_secrets, secret_namespace)


def _inspect(  # noqa: PLR0911 - one return per outcome, in the order they are checked
    observed: Observed, image: str, pull_secrets: Sequence[str], namespace: str
) -> MetadataOutcome:
    try:
        ref = reference.parse(image)
    except reference.ReferenceError as e:
        return MetadataOutcome(_failed(State.FAILED, Reason.INVALID, f"spec.image: {e}"))
    secrets: list[Manifest] = []
    for name in pull_secrets:
        found = observed.required.get(f"pull-secret-{name}")
        if found is None:
            return MetadataOutcome(
                ConditionType.METADATA_EXTRACTED.pending(
                    Reason.RESOLVING, f"looking up pull secret {name!r}"
                )
            )
        if not found:
            return MetadataOutcome(
                _failed(
                    State.FAILED,
                    Reason.SECRET_NOT_FOUND,
                    f"imagePullSecrets: secret {name!r} does not exist in namespace "
                    f"{namespace!r}; create it (kubectl create secret docker-registry) or "
                    "remove it from the list",
                )
            )
        secrets.extend(found)
    try:
        credential = credential_for(ref.registry, secrets)
    except SecretFormatError as e:
        return MetadataOutcome(
            _failed(State.FAILED, Reason.SECRET_INVALID, f"imagePullSecrets: {e}")
        )

    answer = observed.inspection
    if isinstance(answer, Inspection) and answer.image == image:
        return _from_inspection(image, answer.labels, answer.digest, answer.entrypoint)
    if isinstance(answer, RegistryFailure) and answer.image == image:
        state = State.FAILED if answer.kind in _USER_FAILURES else State.DEGRADED
        message = f"registry {ref.registry}: {answer.message}"
        if answer.kind is FailureKind.UNAUTHORIZED:
            message += f"; {_login_fix(ref.registry, had_login=credential is not None)}"
        return MetadataOutcome(
            _failed(state, answer.kind.value, message), retry_after_s=RETRY_AFTER_S
        )
    return MetadataOutcome(
        ConditionType.METADATA_EXTRACTED.progressing(
            Reason.INSPECTING, f"reading the labels of {ref}"
        ),
        request=InspectionRequest(image, ref, credential),
    )


def _from_inspection(
    image: str, labels: Mapping[str, str], digest: str, entrypoint: Sequence[str]
) -> MetadataOutcome:
    labels = kept(labels)
    record = ImageRecord(
        inspected_image=image, digest=digest[:_MAX_DIGEST], labels=labels, entrypoint=entrypoint
    )
    try:
        metadata = image_metadata(labels)
    except LabelError as e:
        return MetadataOutcome(
            _failed(
                State.FAILED,
                Reason.IMAGE_LABELS_INVALID,
                f"{image} ({digest}): {e}; fix the label in the image, or give the metadata "
                "in spec.imageMetadata",
            ),
            image=record,
        )
    record = replace(record, metadata=metadata)
    missing = missing_required(labels)
    if missing:
        return MetadataOutcome(
            _failed(
                State.FAILED,
                Reason.IMAGE_LABELS_MISSING,
                f"{image} ({digest}) lacks the required AIM label(s) {', '.join(missing)}, so "
                "it is not an AIM model image; use an AIM image, give the metadata in "
                "spec.imageMetadata, or set spec.discovery.enabled to false and create its "
                "templates by hand",
            ),
            image=record,
        )
    named = metadata.model.canonical_name if metadata.model else None
    return MetadataOutcome(
        ConditionType.METADATA_EXTRACTED.ready(
            Reason.METADATA_EXTRACTED, f"{image} ({digest}): model {named}"
        ),
        metadata=metadata,
        image=record,
    )


def _login_fix(registry: str, *, had_login: bool) -> str:
    """What to check when the registry refused: the login sent, or that none was."""
    if had_login:
        return (
            f"check the login for {registry} in the pull secrets (spec.imagePullSecrets, or the "
            "runtime config's imagePullSecrets): its user name and password or token"
        )
    return (
        f"no pull secret has a login for {registry}; add one to spec.imagePullSecrets or the "
        "runtime config's imagePullSecrets (kubectl create secret docker-registry)"
    )


def _failed(state: State, cause: str, message: str) -> Health:
    """Seed 004's one failure reason; the specific cause leads the message, for grep and humans."""
    return ConditionType.METADATA_EXTRACTED.health(
        state, Reason.METADATA_EXTRACTION_FAILED, f"{cause}: {message}"
    )


def _string_map(value: JsonValue) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def stored_entrypoint(model: Manifest) -> list[str]:
    """The image entrypoint the model's status kept; empty when none, or not one an image has.

    Read on its own, so another field of the status that fails to parse does not lose it.
    """
    return _strings(field_at(model, "status", "imageEntrypoint"))


def _strings(value: JsonValue) -> list[str]:
    # The entrypoint kept in status: one no image needs counts as unknown, as when inspected.
    if not isinstance(value, list) or len(value) > MAX_ENTRYPOINT_ARGS:
        return []
    strings = [str(v) for v in value]
    return strings if all(len(s) <= MAX_ENTRYPOINT_ARG for s in strings) else []
