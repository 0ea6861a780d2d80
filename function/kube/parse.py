"""Parsing the AIM objects Crossplane sends: specs and statuses, each object version once.

Parsed values are kept per object version (`function.kube.convert.OBJECTS`, keyed on the exact
object Crossplane sent), so every composer and every step of one may parse the same object
again at no cost; callers never deal with that cache.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from function.api.meta import Manifest
from function.errors import InvalidSpecError
from function.kube.claims import strip_legacy_machinery
from function.kube.convert import OBJECTS
from function.kube.objects import aim_status

SpecT = TypeVar("SpecT", bound=BaseModel)
HeadlineT = TypeVar("HeadlineT", bound=StrEnum)
T = TypeVar("T")


def once(manifest: Manifest, key: str, compute: Callable[[], T]) -> T:
    """`compute()`, a value of `manifest` alone under the name `key`, once per object version.

    For what composers derive from a listed object on every call (a template's selection
    candidate): a catalog of many templates costs its parsing once per version, not per call.
    """
    return OBJECTS.derived(manifest, key, compute)


def parse_spec(manifest: Manifest, model: type[SpecT]) -> SpecT:
    """Parse an AIM object's spec, reporting the first problem with its field path.

    Used for the XR and for the AIM objects it refers to. The API server has already validated
    them against their XRDs, so this fails only when the two disagree or an object bypassed
    admission (render, tests); the message still names the field.
    """
    return OBJECTS.derived(
        manifest, f"spec:{model.__qualname__}", lambda: _parse_spec(manifest, model)
    )


def _parse_spec(manifest: Manifest, model: type[SpecT]) -> SpecT:
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        raise InvalidSpecError(field="spec", problem="is missing or not an object")
    # Every XR carries Crossplane's own machinery (compositionRef, resourceRefs, ...) under
    # spec.crossplane, or at the top of the spec for v1 composites and claims; it is not part
    # of the AIM API.
    ours = strip_legacy_machinery({k: v for k, v in spec.items() if k != "crossplane"})
    try:
        return model.model_validate(ours)
    except ValidationError as e:
        first = e.errors()[0]
        path = ".".join(["spec", *(str(p) for p in first["loc"])])
        problem = first["msg"].removeprefix("Value error, ")  # our own validators' messages
        raise InvalidSpecError(field=path, problem=problem[:1].lower() + problem[1:]) from e


def parse_status(manifest: Manifest, model: type[SpecT]) -> SpecT | None:
    """An AIM object's status as far as this function wrote it; None when it cannot be read.

    Crossplane and other writers add fields (conditions, for one) that the model does not know;
    those are left out rather than failing the parse.
    """
    return OBJECTS.derived(
        manifest, f"status:{model.__qualname__}", lambda: _parse_status(manifest, model)
    )


def _parse_status(manifest: Manifest, model: type[SpecT]) -> SpecT | None:
    status = manifest.get("status")
    if not isinstance(status, dict):
        return None
    known = {f.alias or name for name, f in model.model_fields.items()}
    try:
        return model.model_validate({k: v for k, v in status.items() if k in known})
    except ValidationError:
        return None


def parse_headline(manifest: Manifest | None, values: type[HeadlineT]) -> HeadlineT | None:
    """An AIM object's `status.status` as its kind's enum; None until its composer reported one.

    A value outside the enum (which the XRD's schema refuses) reads as not reported.
    """
    value = aim_status(manifest)
    if value is None:
        return None
    try:
        return values(value)
    except ValueError:
        return None


def has_headline(manifest: Manifest | None, value: StrEnum) -> bool:
    """Whether an AIM object's `status.status` is `value` (its kind's Ready or Available)."""
    return parse_headline(manifest, type(value)) is value
