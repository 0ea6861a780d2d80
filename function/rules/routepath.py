"""HTTP path prefixes rendered from a template such as `/{.metadata.namespace}/{.metadata.name}`.

Each `{...}` is a Kubernetes-style JSONPath evaluated (with jsonpath-ng) against the AIMService and
must yield exactly one scalar. The rendered path is normalised so that any value is safe in a
URL: segments are lowercased and RFC 3986 percent-encoded, empty segments and a segment repeating
the one before it are dropped, and the trailing slash is trimmed. A `.` or `..` segment is refused:
Gateway API refuses such paths, and they would climb out of a route policy's prefix. A path must
stay under 200 characters. Anything that cannot be rendered raises `RoutePathError` naming the
fragment.

A route policy's prefix (`render_prefix`) renders the same way, but keeps repeated segments: with
`/teams/{.metadata.namespace}/`, namespace `teams` must get `/teams/teams`, not `/teams`, which
would cover every other namespace's paths. `within` compares paths segment by segment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import quote

from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.parser import parse
from pydantic import JsonValue

MAX_LENGTH: Final = 199
"""Longest accepted path: it must stay under 200 characters."""

_FRAGMENT: Final = re.compile(r"\{([^{}]*)\}")


class RoutePathError(ValueError):
    """The template cannot be rendered for this object."""


def render_path(template: str, obj: Mapping[str, JsonValue]) -> str:
    """The normalised path prefix for `obj`.

    Values are rendered inside their segment: a `/` in a label value is encoded, not a new level.

    Raises:
        RoutePathError: braces do not pair up, a fragment is not valid JSONPath, finds no value or
            several, finds an object or list, a segment is `.` or `..`, or the path is empty or
            too long.
    """
    return normalize(_rendered(template, obj))


def render_prefix(template: str, obj: Mapping[str, JsonValue]) -> str:
    """The normalised prefix for `obj`, repeated segments kept; `/` when it renders to nothing.

    Raises:
        RoutePathError: as `render_path`, but an empty prefix is `/`, not an error.
    """
    return normalize(_rendered(template, obj), dedupe=False, root=True)


def normalize(segments: Sequence[str], *, dedupe: bool = True, root: bool = False) -> str:
    """Lowercase and percent-encode each segment, drop empty ones, check the length.

    With `dedupe`, a segment repeating the one before it is dropped; with `root`, no segment at
    all is `/` rather than an error.
    """
    kept: list[str] = []
    for raw in segments:
        segment = quote(raw.strip().lower(), safe="")
        if segment in {".", ".."}:
            msg = (
                f"the segment {segment!r} would climb out of the path; Gateway API refuses "
                "'.' and '..' segments"
            )
            raise RoutePathError(msg)
        if segment and not (dedupe and kept and kept[-1] == segment):
            kept.append(segment)
    if not kept and not root:
        msg = "the path renders to nothing; give it at least one non-empty segment"
        raise RoutePathError(msg)
    result = "/" + "/".join(kept)
    if len(result) > MAX_LENGTH:
        msg = f"the rendered path is {len(result)} characters long; it must stay under 200"
        raise RoutePathError(msg)
    return result


def extend(prefix: str, segments: Sequence[str]) -> str:
    """The normalised `prefix` with `segments` (raw) appended: only the new ones are encoded.

    Raises:
        RoutePathError: a new segment is `.` or `..`, renders to nothing, or the path is too long.
    """
    result = prefix.rstrip("/") + normalize(segments, dedupe=False)
    if len(result) > MAX_LENGTH:
        msg = f"the rendered path is {len(result)} characters long; it must stay under 200"
        raise RoutePathError(msg)
    return result


def segments_of(path: str) -> tuple[str, ...]:
    """The segments of a normalised path (`/` has none)."""
    return tuple(s for s in path.split("/") if s)


def within(path: str, prefix: str) -> bool:
    """Whether the normalised `path` lies under the normalised `prefix`, by whole segments.

    `/team-a` covers `/team-a` and `/team-a/chat`, not `/team-ab`.
    """
    wanted = segments_of(prefix)
    return segments_of(path)[: len(wanted)] == wanted


def _rendered(template: str, obj: Mapping[str, JsonValue]) -> list[str]:
    return [_FRAGMENT.sub(lambda m: _evaluate(m.group(1), obj), raw) for raw in _split(template)]


def _split(template: str) -> list[str]:
    """Split on `/` outside braces (a JSONPath may contain `/`, e.g. in a label key)."""
    segments: list[str] = []
    current: list[str] = []
    depth = 0
    for char in template:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if depth not in {0, 1}:
            msg = f"unbalanced braces in {template!r}; wrap each JSONPath in one pair of braces"
            raise RoutePathError(msg)
        if char == "/" and depth == 0:
            segments.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        msg = f"unbalanced braces in {template!r}; wrap each JSONPath in one pair of braces"
        raise RoutePathError(msg)
    segments.append("".join(current))
    return segments


def _evaluate(expression: str, obj: Mapping[str, JsonValue]) -> str:
    expr = expression.strip()
    if not expr.startswith("."):
        msg = f"{{{expression}}} must be a JSONPath starting with '.', e.g. {{.metadata.name}}"
        raise RoutePathError(msg)
    try:
        matches = parse("$" + expr).find(obj)
    except (JsonPathLexerError, JsonPathParserError) as e:
        msg = f"{{{expression}}} is not valid JSONPath: {e}"
        raise RoutePathError(msg) from e
    values = [m.value for m in matches]
    if not values:
        msg = f"{{{expression}}} finds nothing in the AIMService"
        raise RoutePathError(msg)
    if len(values) > 1:
        msg = f"{{{expression}}} finds {len(values)} values; it must find exactly one"
        raise RoutePathError(msg)
    value = values[0]
    if isinstance(value, dict | list) or value is None:
        kind = "an object" if isinstance(value, dict) else "a list" if value is not None else "null"
        msg = f"{{{expression}}} finds {kind}, not a single value"
        raise RoutePathError(msg)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
