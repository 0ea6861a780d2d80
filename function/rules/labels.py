"""Label keys AIM puts on what it composes, so users and tools can find objects by their origin."""

from __future__ import annotations

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
        if isinstance(value, str) and any(glob_match(p, key) for p in patterns)
    }


def glob_match(pattern: str, key: str) -> bool:
    """Whether `key` matches `pattern` (`*` any run without `/`, `?` one character but `/`).

    Matched segment by segment, each with the two-pointer wildcard scan: time at most the product
    of the lengths, whatever the pattern. (A regular expression of `[^/]*` runs backtracks
    exponentially on patterns such as `*a*a*a*a*a*a*a*a*b`, which a user may write.)
    """
    parts, segments = pattern.split("/"), key.split("/")
    return len(parts) == len(segments) and all(map(_segment_match, parts, segments))


def _segment_match(pattern: str, text: str) -> bool:
    p = t = 0
    star, resume = -1, 0  # the last `*` seen, and where in `text` it is matched up to
    while t < len(text):
        if p < len(pattern) and pattern[p] in ("?", text[t]) and pattern[p] != "*":
            p, t = p + 1, t + 1
        elif p < len(pattern) and pattern[p] == "*":
            star, resume, p = p, t, p + 1
        elif star >= 0:
            resume += 1
            p, t = star + 1, resume
        else:
            return False
    return all(c == "*" for c in pattern[p:])
