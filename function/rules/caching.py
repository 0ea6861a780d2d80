"""Model caches, the pure parts: names, sizes, why a download failed, how long unused ones stay.

A leaf of the caching composers: no Kubernetes objects here, only decisions about them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from pydantic import JsonValue

from function.api.common import EnvVar
from function.rules import jsontext, naming
from function.rules.status import Reason

MOUNT_ROOT: Final = "/workspace/cache"
MAX_SIZE_BYTES: Final = 2**50  # 1 PiB: a size check claiming more is not believed
_MAX_MESSAGE_BYTES: Final = 16384  # four times what a kubelet keeps of a termination message

# Checked in this order against the tail of a failed Pod's log (its termination message).
_FAILURES: Final = (
    (
        Reason.CACHE_UNAUTHORIZED,
        "the source refused the credentials: check HF_TOKEN or the AWS_* variables in spec.env",
        re.compile(
            r"\b40[13]\b|unauthori[sz]ed|forbidden|access ?denied|gated repo|is restricted|"
            r"InvalidAccessKeyId|SignatureDoesNotMatch|credentials",
            re.IGNORECASE,
        ),
    ),
    (
        Reason.CACHE_SOURCE_NOT_FOUND,
        "the source does not exist: check spec.sourceUri",
        re.compile(
            r"\b404\b|not found|RepositoryNotFound|NoSuchBucket|NoSuchKey|does not exist",
            re.IGNORECASE,
        ),
    ),
    (
        Reason.CACHE_STORAGE_FULL,
        (
            "the volume ran out of space: give the source a larger spec.size, or raise the "
            "runtime config's pvcHeadroomPercent"
        ),
        re.compile(r"no space left|ENOSPC|quota.*exceeded|disk.*full", re.IGNORECASE),
    ),
)


def model_cache_name(source_uri: str, env: Sequence[EnvVar], storage_class: str | None) -> str:
    """Name of the AIMModelCache a template cache composes for a source (the operator's)."""
    inputs: list[naming.HashInput] = [source_uri]
    inputs += [f"{e.name}={e.value or ''}" for e in env]
    inputs.append(storage_class or "")
    return naming.derived_name([source_uri.replace(".", "-")], inputs, hash_length=10)


def mount_path(model_id: str | None, fallback: str) -> str:
    """Where a service mounts a cache: `/workspace/cache/<modelId>`, which AIM images read."""
    return f"{MOUNT_ROOT}/{model_id or fallback}"


def classify_failure(log_tail: str) -> tuple[Reason, str]:
    """The reason a download or size check failed, and what the user can do about it."""
    for reason, advice, pattern in _FAILURES:
        if pattern.search(log_tail):
            return reason, advice
    return Reason.CACHE_DOWNLOAD_FAILED, "see the Job's log"


def parse_size(message: str) -> int:
    """The size a size-check Job reported in its termination message.

    Raises:
        ValueError: the message is not `{"sizeBytes": N}` with N between 1 byte and 1 PiB.
    """
    try:
        value = jsontext.loads(message, max_bytes=_MAX_MESSAGE_BYTES)
    except jsontext.JsonTextError:
        value = None
    size = value.get("sizeBytes") if isinstance(value, dict) else None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_SIZE_BYTES:
        msg = f'the size check printed {message[:200]!r}, not {{"sizeBytes": <1 B to 1 PiB>}}'
        raise ValueError(msg)
    return size


def env_manifests(env: Sequence[EnvVar]) -> list[Mapping[str, JsonValue]]:
    """Env vars as they appear in a container."""
    return [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in env]


@dataclass(frozen=True)
class Retention:
    """Where an unused cache that a service created stands: counting down, or past its time."""

    unused_since: datetime
    until: datetime

    def expired(self, now: datetime) -> bool:
        """Whether the cache should give up its model caches (and so its PVCs) at `now`."""
        return now >= self.until

    def seconds_left(self, now: datetime) -> int:
        """Whole seconds until `until`, at least 1, for the next call to come then."""
        return max(1, math.ceil((self.until - now).total_seconds()))


def retention(unused_since: datetime | None, *, now: datetime, keep_for_s: float) -> Retention:
    """The retention of a service-made cache that no service uses.

    The clock starts at the first call that sees no user (`unused_since` None) and is written to
    status, so it survives restarts and other replicas; a user coming back clears it. A start in
    the future (another clock's) is not believed.
    """
    since = unused_since if unused_since is not None and unused_since <= now else now
    return Retention(since, since + timedelta(seconds=keep_for_s))
