"""Which route annotations a tenant may set, under the platform's route policy.

The policy's other half, the path prefix, is a path question (`function/rules/routepath.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def annotation_allowed(key: str, allowed: Sequence[str]) -> bool:
    """Whether `allowed` (exact keys, or prefixes ending in `/`) lets a tenant set `key`."""
    return any(key == entry or (entry.endswith("/") and key.startswith(entry)) for entry in allowed)


def refused_annotations(
    annotations: Mapping[str, str], platform: Mapping[str, str], allowed: Sequence[str]
) -> list[str]:
    """The keys of `annotations` the policy refuses, sorted.

    An annotation the platform's own config sets, with the same value, is the platform's and
    passes; a tenant's value for the platform's key is the tenant's, and needs the key allowed.
    """
    return sorted(
        key
        for key, value in annotations.items()
        if platform.get(key) != value and not annotation_allowed(key, allowed)
    )
