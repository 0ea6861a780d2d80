"""Template discovery, the pure parts: the Job's identity, its result, and retry backoff.

The dry-run's JSON comes back in the discovery container's termination message (see
build/discovery.sh). It is parsed tolerantly (log noise around the JSON is skipped) but never
guessed at: a result that does not parse, or that was too large to travel, is a failed attempt
with a reason that says so, not a template without model sources.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from pydantic import JsonValue, ValidationError

from function.api.common import MODEL_ID_PATTERN, SOURCE_URI_RULE
from function.api.hardware import INT32_MAX
from function.api.template import DiscoveredSource, Profile
from function.rules import jsontext, quantity
from function.rules.naming import DNS_LABEL_MAX, sanitize_part
from function.rules.status import Reason
from function.rules.text import cut

BACKOFF_BASE_S: Final = 60
BACKOFF_MAX_S: Final = 3600
_MAX_SIZE_GB: Final = 2**20
_MAX_TIMESTAMP_LENGTH: Final = 64
_MAX_NAME: Final = 256
_MAX_TEXT: Final = 128
"""Longest metadata value kept (an engine, a precision, a GPU model): longer ones are cut."""
_TEXT_FIELDS: Final = ("engine", "metric", "precision", "type")
_SOURCE_URI: Final = re.compile(SOURCE_URI_RULE)
_MODEL_ID: Final = re.compile(MODEL_ID_PATTERN)
_PREFIX: Final = "discover-"
_SUFFIX_LENGTH: Final = 8
# The Job controller copies a Job's name into its Pods' labels, so it must be a label value.
_TEMPLATE_PART: Final = DNS_LABEL_MAX - len(_PREFIX) - len("-") - _SUFFIX_LENGTH


class ResultError(ValueError):
    """The termination message is not a usable discovery result; the message says why."""

    def __init__(self, reason: Reason, message: str) -> None:
        """`reason` is the condition reason, `message` what the user reads."""
        super().__init__(message)
        self.reason = reason


class MetadataError(ValueError):
    """A profile's metadata field has a value no template can keep; the message names it."""


@dataclass(frozen=True)
class Result:
    """What discovery found: the artifacts to download and the profile the image selected."""

    sources: tuple[DiscoveredSource, ...]
    profile: Profile


def spec_hash(parts: Sequence[str | int | None]) -> str:
    """A short fingerprint of discovery's inputs: attempts are counted per fingerprint."""
    text = "|".join("" if p is None else str(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def job_name(template: str, fingerprint: str, attempt: int) -> str:
    """`discover-<template>-<8 hex>`: a new name per attempt, since a Job cannot be re-run."""
    suffix = hashlib.sha256(f"{fingerprint}|{attempt}".encode()).hexdigest()[:_SUFFIX_LENGTH]
    return f"{_PREFIX}{sanitize_part(template)[:_TEMPLATE_PART].rstrip('-')}-{suffix}"


def backoff(attempts: int) -> timedelta:
    """How long to wait after the `attempts`-th failure: 1 min, doubling, at most 1 hour."""
    if attempts <= 0:
        return timedelta(0)
    return timedelta(seconds=min(BACKOFF_BASE_S * 2 ** (attempts - 1), BACKOFF_MAX_S))


def retry_at(last_attempt: str | None, attempts: int, now: datetime) -> datetime | None:
    """When the next attempt may start (None: at once).

    An attempt time later than `now` (a skewed clock, an edited status) counts as `now`, so no
    status can postpone discovery by more than one backoff window.
    """
    started = timestamp(last_attempt)
    if attempts <= 0 or started is None:
        return None
    return min(started, now) + backoff(attempts)


def timestamp(text: JsonValue) -> datetime | None:
    """A time as Kubernetes writes them (RFC 3339), in UTC; None when `text` is not one.

    A time without a zone is taken as UTC, as the API server does, so it compares with others.
    """
    if not isinstance(text, str) or len(text) > _MAX_TIMESTAMP_LENGTH:
        return None
    try:
        parsed = datetime.fromisoformat(text)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 moved across zones
        return None


def rfc3339(when: datetime) -> str:
    """A time as Kubernetes writes it in status (`2026-11-23T12:00:00Z`); `timestamp` reads it."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_result(message: str, *, limit: int) -> Result:
    """The discovery result in a termination message.

    Raises:
        ResultError: the message is empty, too large to have travelled, or not a result.
    """
    text = message.strip()
    if not text:
        raise ResultError(
            Reason.DISCOVERY_OUTPUT_INVALID,
            "the dry-run printed nothing (empty termination message)",
        )
    # A kubelet keeps at most `limit` bytes; anything longer was not written by one.
    max_bytes = 4 * limit
    try:
        whole: JsonValue = jsontext.loads(text, max_bytes=max_bytes)
    except jsontext.JsonTextError:
        whole = None  # log lines around the JSON, or too big: the second look says which
    try:
        profiles = (
            whole if isinstance(whole, list) else jsontext.last_list(text, max_bytes=max_bytes)
        )
    except jsontext.JsonTextError as e:
        msg = f"the termination message {e}"
        raise ResultError(Reason.DISCOVERY_OUTPUT_INVALID, msg) from None
    if isinstance(whole, dict) and "aimDiscoveryOutputBytes" in whole:
        printed = whole["aimDiscoveryOutputBytes"]
        raise ResultError(
            Reason.DISCOVERY_OUTPUT_TOO_LARGE,
            f"the dry-run printed {printed if isinstance(printed, int) else 'more'} bytes, more "
            f"than the {limit} a termination message holds, even cut to its first profile; "
            "lower the image's log level or select one profile (spec.profileId)",
        )
    if whole == []:
        # What AIM's runtime prints, exit code 0, when none of its profiles fits the inputs
        # (and its log, which says why, goes to stderr).
        raise ResultError(Reason.DISCOVERY_NO_PROFILE, "the dry-run printed [], no profile")
    if not profiles:
        raise ResultError(
            Reason.DISCOVERY_OUTPUT_INVALID,
            f"the dry-run's output is not a JSON list of profiles: {_excerpt(text)}",
        )
    return _result(profiles[0], text)


def _result(first: JsonValue, text: str) -> Result:
    if not isinstance(first, dict):
        raise ResultError(
            Reason.DISCOVERY_OUTPUT_INVALID, f"a profile is not an object: {_excerpt(text)}"
        )
    profile = first.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    models = first.get("models")
    try:
        sources = tuple(
            _source(m) for m in (models if isinstance(models, list) else []) if isinstance(m, dict)
        )
        kept: dict[str, JsonValue] = {
            k: profile[k] for k in ("engine_args", "env_vars") if k in profile
        }
        if profile.get("metadata") is not None:
            kept["metadata"] = profile_metadata(profile["metadata"])
        parsed = Profile.model_validate(kept)
    except ValidationError as e:
        error = e.errors()[0]
        where = ".".join(["profile", *(str(p) for p in error["loc"])])
        msg = f"the dry-run's {where} does not fit a template's status: {error['msg']}"
        raise ResultError(Reason.DISCOVERY_OUTPUT_INVALID, msg) from None
    except ValueError as e:
        raise ResultError(Reason.DISCOVERY_OUTPUT_INVALID, f"the dry-run's {e}") from None
    if not sources:
        raise ResultError(
            Reason.DISCOVERY_OUTPUT_INVALID,
            f"the dry-run's first profile lists no model to download: {_excerpt(text)}",
        )
    return Result(sources, parsed)


def profile_metadata(raw: JsonValue) -> dict[str, JsonValue]:
    """A profile's metadata, in either schema AIM images print, as a template's status keeps it.

    Older images print `gpu` and `gpu_count`; newer ones `accelerator_model`,
    `accelerator_count` and `accelerator_type` (and `gpu`/`gpu_count` only as aliases). Both
    become `gpu` and `gpu_count`, so a template's status does not depend on the image's age.
    Where both are printed, the accelerator field wins when set, as the AIM operator reads them
    (and the AIM runtime, whose `accelerator_model` and `accelerator_count` take `gpu` and
    `gpu_count` as their second choice): a non-empty `accelerator_model` over `gpu`, a present
    `accelerator_count` over `gpu_count`. `NONE` (the runtime's sentinel for no accelerator) is
    no model, and a profile of `accelerator_type: cpu` has no GPU (`gpu_count: 0`). Fields we do
    not use (`manual_selection_only`, `features`...)
    are dropped; strings are cut to a size a status can carry.

    Raises:
        MetadataError: a field we use has the wrong type, or a count below 0 or above int32; the
            message names the field and the value.
    """
    if not isinstance(raw, dict):
        msg = f"profile.metadata is {_kind(raw)}, not an object"
        raise MetadataError(msg)
    out: dict[str, JsonValue] = {}
    for key in _TEXT_FIELDS:
        text = _text(raw, key)
        if text:
            out[key] = text
    if (_text(raw, "accelerator_type") or "").lower() == "cpu":
        # A CPU profile's accelerator (`EPYC_ZEN5`) and count (cores) say nothing of GPUs: it
        # needs none, which a template asking for GPUs reports rather than runs.
        out["gpu_count"] = 0
        return out
    model = _text(raw, "accelerator_model") or _text(raw, "gpu")
    if model and model.upper() != "NONE":
        out["gpu"] = model
    key = "accelerator_count" if raw.get("accelerator_count") is not None else "gpu_count"
    count = raw.get(key)
    if count is not None:
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= INT32_MAX:
            msg = (
                f"profile.metadata.{key} is {_excerpt(str(count), 40)} ({_kind(count)}), "
                f"not a number of GPUs from 0 to {INT32_MAX}"
            )
            raise MetadataError(msg)
        out["gpu_count"] = count
    return out


def _text(raw: Mapping[str, JsonValue], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"profile.metadata.{key} is {_kind(value)}, not a string"
        raise MetadataError(msg)
    value = value.strip()
    return value if len(value) <= _MAX_TEXT else value[: _MAX_TEXT - 1] + "…"


def _kind(value: JsonValue) -> str:
    match value:
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case str():
            return "a string"
        case list():
            return "a list"
        case dict():
            return "an object"
        case _:
            return "null"


def _source(model: Mapping[str, JsonValue]) -> DiscoveredSource:
    name = model.get("name")
    name = name[:_MAX_NAME] if isinstance(name, str) else None
    source = model.get("source")
    if not isinstance(source, str) or not _SOURCE_URI.match(source):
        shown = _excerpt(source) if isinstance(source, str) else "none"
        msg = f"model {name!r} has source {shown!r}, not hf://<org>/<model> or s3://<bucket>/<key>"
        raise ValueError(msg)
    return DiscoveredSource(
        name=name,
        # A name that is no `org/name` leaves the mount path to the cache's own name.
        model_id=name if name and _MODEL_ID.match(name) else None,
        source_uri=source,
        size=_size(model.get("size_gb")),
    )


def _size(size_gb: JsonValue) -> str | None:
    """Gigabytes as the dry-run reports them (GiB, really) to a binary Quantity: 0.5 -> 512Mi."""
    if not isinstance(size_gb, int | float) or isinstance(size_gb, bool):
        return None
    if not 0 < size_gb <= _MAX_SIZE_GB:  # a size no disk holds is a misprint, not a size
        return None
    return quantity.binary(int(size_gb * quantity.GIB))


def _excerpt(text: str, length: int = 200) -> str:
    return cut(text, length)
