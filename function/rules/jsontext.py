"""JSON from outside the cluster's API (termination messages, image labels, secrets), bounded.

Whatever a Pod, a registry or a Secret hands us may be huge, deeply nested or full of numbers no
Kubernetes field can hold. `loads` refuses those with a `JsonTextError` that says which limit was
hit, before Python's own parser runs out of stack or builds a 10,000-digit integer, so callers turn
every bad input into a condition instead of an internal error. A leaf module: standard library
only.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Final, NoReturn

from pydantic import JsonValue

MAX_DEPTH: Final = 32
"""Deeper than any document we read needs; Crossplane's protobuf decoding stops at 100."""
MAX_NUMBER_DIGITS: Final = 32
"""More digits than an int64 or a double's exponent ever needs."""

# A string (closed or running to the end, so no position is scanned twice) or a bracket.
_TOKEN: Final = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class JsonTextError(ValueError):
    """The text is not JSON within the bounds; the message says what is wrong, not the text."""


def loads(text: str | bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> JsonValue:
    """Parse JSON that is at most `max_bytes` long and `max_depth` deep, with finite numbers.

    Raises:
        JsonTextError: too long, too deep, a number out of range, or not JSON.
    """
    if isinstance(text, bytes):
        _check_length(len(text), "bytes", max_bytes)
        try:
            text = text.decode()
        except UnicodeDecodeError:
            msg = "is not UTF-8 text"
            raise JsonTextError(msg) from None
    _check(text, max_bytes, max_depth)
    try:
        value: JsonValue = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        msg = f"is not JSON ({e.msg} at character {e.pos})"
        raise JsonTextError(msg) from None
    except RecursionError:  # a nesting the bracket count missed must still not escape
        msg = f"is nested more than {max_depth} levels deep"
        raise JsonTextError(msg) from None
    return value


TERMINATION_MESSAGE_BYTES: Final = 4096
"""The most of a container's termination message the kubelet keeps."""


def termination_object(message: str | None) -> dict[str, JsonValue] | None:
    """The JSON object a Job's container left as its termination message, else None.

    None for no message, one that is not JSON, too long or too deep, or not an object.
    """
    if not message:
        return None
    try:
        value = loads(message.encode(), max_bytes=TERMINATION_MESSAGE_BYTES)
    except JsonTextError:
        return None
    return value if isinstance(value, dict) else None


def last_list(text: str, *, max_bytes: int, max_attempts: int = 256) -> list[JsonValue] | None:
    """The last non-empty JSON list in `text`, with log lines or other noise around it.

    Lists are tried from each `[` forward, skipping past every list found, and at most
    `max_attempts` openings are tried, so noise full of brackets costs a bounded amount of work.

    Raises:
        JsonTextError: too long or too deep to be read at all.
    """
    _check(text, max_bytes, MAX_DEPTH)
    found: list[JsonValue] | None = None
    start = text.find("[")
    for _ in range(max_attempts):
        if start == -1:
            break
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):  # noise, or a number out of range: try further on
            start = text.find("[", start + 1)
            continue
        if isinstance(value, list) and value:
            found = value
        start = text.find("[", max(end, start + 1))
    return found


def nesting(text: str) -> int:
    """How deeply brackets nest in `text`, outside JSON strings (linear time)."""
    brackets = (t for t in _TOKEN.findall(text) if t in ("[", "]", "{", "}"))
    steps = (1 if t in ("[", "{") else -1 for t in brackets)
    return max(accumulate(steps, initial=0))


def _check(text: str, max_length: int, max_depth: int) -> None:
    _check_length(len(text), "characters", max_length)
    depth = nesting(text)
    if depth > max_depth:
        msg = f"is nested {depth} levels deep, more than the {max_depth} read"
        raise JsonTextError(msg)


def _check_length(length: int, unit: str, limit: int) -> None:
    if length > limit:
        msg = f"is {length} {unit} long, more than the {limit} read"
        raise JsonTextError(msg)


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        _out_of_range(digits)
    return int(digits)


def _float(digits: str) -> float:
    number = float(digits) if len(digits) <= 2 * MAX_NUMBER_DIGITS else math.inf
    if not math.isfinite(number):
        _out_of_range(digits)
    return number


def _constant(name: str) -> NoReturn:
    msg = f"has {name}, which is not a JSON number"
    raise JsonTextError(msg)


def _out_of_range(digits: str) -> NoReturn:
    shown = (
        digits
        if len(digits) <= MAX_NUMBER_DIGITS
        else f"{digits[:20]}... ({len(digits)} characters)"
    )
    msg = f"has the number {shown}, out of range"
    raise JsonTextError(msg)


_DECODER: Final = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)
