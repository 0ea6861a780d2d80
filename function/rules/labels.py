"""Label keys AIM puts on what it composes, so users and tools can find objects by their origin."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Final

from function.rules import naming

PREFIX: Final = "aim.silogen.ai/"
SERVICE: Final = PREFIX + "service"
TEMPLATE: Final = PREFIX + "template"
BASE_TEMPLATE: Final = PREFIX + "base-template"
MODEL: Final = PREFIX + "model"
METRIC: Final = PREFIX + "metric"
PRECISION: Final = PREFIX + "precision"
ORIGIN: Final = PREFIX + "origin"
CUSTOM_MODEL: Final = PREFIX + "custom-model"
TEMPLATE_ALIAS: Final = PREFIX + "template.alias"
PROFILE_TYPE: Final = PREFIX + "profile-type"
"""On a template made from a recommended deployment: the tuning level the deployment declared."""
DISCOVERY: Final = PREFIX + "discovery"
MODEL_CACHE: Final = PREFIX + "model-cache"
TEMPLATE_CACHE: Final = PREFIX + "template-cache"

AUTO_GENERATED: Final = "auto-generated"
DERIVED: Final = "derived"

MANAGED_BY: Final = {"app.kubernetes.io/managed-by": "aim-crossplane"}


def value(text: str) -> str:
    """A label value made from any name: lowercase, DNS-safe, at most 63 characters."""
    return naming.sanitize_part(text)


def propagated(labels: Mapping[str, object], patterns: Sequence[str]) -> dict[str, str]:
    """The labels whose keys match any of `patterns`: what `labelPropagation.match` selects.

    Patterns read as Go's filepath.Match reads them, as the AIM operator's do: `*` and `?` never
    match `/`, so `team.example.com/*` selects that prefix's keys and `*` only unprefixed ones.
    """
    return {
        key: value
        for key, value in labels.items()
        if isinstance(value, str) and any(_glob(p).fullmatch(key) for p in patterns)
    }


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    # Character classes are left out: `[` is literal, as no label key can contain one anyway.
    parts = ("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts))
