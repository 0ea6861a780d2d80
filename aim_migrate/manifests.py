"""Manifest files read within bounds: the one YAML loader of aim-migrate and `aim plan`.

A manifest file may be anyone's, and PyYAML's loaders build whatever a file describes: a file of
a few hundred bytes whose aliases expand to a billion values, nesting that overflows their
recursion, dates and binary values no Kubernetes object holds, keys that are numbers. So values
are built (by `yamlread`) from libyaml's parser events, in one pass with no recursion, and each
is checked before it is added. A file is refused, naming the document, the field and the line, for:

- nesting deeper than `MAX_DEPTH` levels, an alias counted at the depth it is used: the function
  receives every object as protobuf, which decodes about 33 levels, and composing puts a user's
  field (an env var's `valueFrom`) up to 4 levels deeper than it was written; the bound leaves
  room for both, so whatever is read here also reaches the function;
- more than `MAX_VALUES` values in the file (keys, and the lists and mappings that hold values,
  included), an alias counted as the values it repeats: this bounds what a file costs;
- a string (or key) longer than `MAX_STRING` characters, which no Kubernetes object can hold;
- a value JSON cannot carry: a date or time, `!!binary`, a set, an infinite, NaN or beyond-64-bit
  number, any other tag; or a key that is not a string (a number, `on`/`yes`, null, a list):
  the API server reads manifests as JSON, and both commands compare, hash and convert them so.

A file over `MAX_FILE_BYTES` is refused unread, text that is not UTF-8 by the byte it fails at.
A document that names its apiVersion, kind, name or namespace must name them as the API server
would accept them (a report quotes them). Every refusal is one line; a user's text is quoted cut
to `QUOTED` characters, and never from a YAML syntax error (it may be a Secret's).

What a file costs is linear in its size (libyaml scans it in C) and in the values built, at most
`MAX_VALUES`; docs/plan.md and docs/coming-from-aim-operator.md state it as measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import yaml
from pydantic import JsonValue

from aim_migrate.bounds import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_STRING,
    MAX_VALUES,
    QUOTED,
    UnreadableError,
    a,
    cut,
    quoted,
)
from aim_migrate.identity import check_identity
from aim_migrate.yamlread import EventReader

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_STRING",
    "MAX_VALUES",
    "QUOTED",
    "UnreadableError",
    "a",
    "cut",
    "objects_of",
    "quoted",
    "read_bytes",
    "read_path",
    "read_stream",
]


def read_path(path: Path) -> list[JsonValue]:
    """The documents of the file at `path` (None for an empty one), checked as the module says.

    Raises:
        UnreadableError: the file is too large (refused unread), unreadable, or a document
            breaks a bound or holds what no Kubernetes manifest does.
    """
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise UnreadableError(_too_large(str(path), size))
        with path.open("rb") as f:
            return read_stream(str(path), f)
    except OSError as e:
        msg = f"{path}: cannot read it: {e.strerror or type(e).__name__}"
        raise UnreadableError(msg) from None


def read_stream(name: str, stream: IO[bytes]) -> list[JsonValue]:
    """The documents of `stream` (a file or standard input), named `name` in messages.

    Raises:
        UnreadableError: as `read_path`; a stream is read to one byte past the bound at most.
    """
    data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableError(_too_large(name, None))
    return read_bytes(name, data)


def read_bytes(name: str, data: bytes) -> list[JsonValue]:
    """The documents of `data`, the content of the file `name`.

    Raises:
        UnreadableError: as `read_path`.
    """
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableError(_too_large(name, len(data)))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        msg = f"{name}: not UTF-8 text (byte {e.start}, line {line}); save it as UTF-8"
        raise UnreadableError(msg) from None
    try:
        docs = EventReader(name).read(text)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # The problem only, cut and on one line: PyYAML's snippet could show a Secret's value.
        problem = cut(str(e.problem or e.context or type(e).__name__))
        msg = f"{name}: not YAML{at}: {problem}; fix the file's syntax"
        raise UnreadableError(msg) from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow; no mark
        line = text.count("\n", 0, e.position) + 1
        msg = (
            f"{name}: not YAML at line {line}: the character #x{e.character:04x} is not allowed "
            "in YAML; remove it"
        )
        raise UnreadableError(msg) from None
    except yaml.YAMLError as e:
        msg = f"{name}: not YAML: {cut(str(e))}; fix the file"
        raise UnreadableError(msg) from None
    for index, doc in enumerate(docs):
        check_identity(doc, f"{name} (document {index})")
    return docs


def objects_of(name: str, index: int, doc: JsonValue) -> list[tuple[str, JsonValue]]:
    """The objects document `index` of the file `name` stands for, each with where it was.

    A document is itself (none if it is empty), unless it is a list as kubectl reads one: a kind
    ending in `List` with `items`, as `kubectl get -o yaml` writes (`kind: List`) or the API
    server answers (`AIMServiceList`). A list stands for its items, a list among them for its
    own, in order, as separate documents would. An item with neither kind nor apiVersion gets
    the list's apiVersion and its kind without `List`, as kubectl gives them: the API server
    leaves them out of a typed list's items. Each is named `name (document 0, items[2])`.

    Items are values `read_bytes` read, so they are within its bounds (a list's levels count
    towards the nesting), and the work is linear in them, with no recursion.

    Raises:
        UnreadableError: a list's items is not a list, an item is not a mapping, or an item
            names an apiVersion, kind, name or namespace the API server would not accept
            (checked as `read_bytes` checks a document's).
    """
    found: list[tuple[str, JsonValue]] = []
    pending: list[tuple[str, JsonValue]] = [] if doc is None else [("", doc)]
    while pending:
        path, value = pending.pop()
        items = _items(value, name, index, path)
        if items is None:
            found.append((_where(name, index, path), value))
        else:  # reversed onto the stack, so that they come off it in their order
            pending += reversed(items)
    return found


def _where(name: str, index: int, path: str) -> str:
    return f"{name} (document {index}{', ' if path else ''}{path})"


def _items(
    value: JsonValue, name: str, index: int, path: str
) -> list[tuple[str, JsonValue]] | None:
    """The items of the list at `path` of the document, each with its path; None if no list."""
    if not isinstance(value, dict):
        return None
    kind = value.get("kind")
    if not isinstance(kind, str) or not kind.endswith("List") or "items" not in value:
        return None
    items = value["items"]
    if items is None:  # Go writes an empty list (a nil slice) so
        return []
    if not isinstance(items, list):
        msg = f"{_where(name, index, path)}: {kind}'s items is {a(items)}, not a list of objects"
        raise UnreadableError(msg)
    api_version, item_kind = value.get("apiVersion"), kind.removesuffix("List")
    found: list[tuple[str, JsonValue]] = []
    for i, item in enumerate(items):
        at = f"{path}{'.' if path else ''}items[{i}]"
        if not isinstance(item, dict):
            msg = f"{_where(name, index, at)}: {kind}'s item is {a(item)}, not an object"
            raise UnreadableError(msg)
        obj = item
        if not item.get("kind") and not item.get("apiVersion") and item_kind and api_version:
            rest = {k: v for k, v in item.items() if k not in {"apiVersion", "kind"}}
            obj = {"apiVersion": api_version, "kind": item_kind, **rest}
        check_identity(obj, _where(name, index, at))
        found.append((at, obj))
    return found


def _too_large(name: str, size: int | None) -> str:
    bytes_ = f"{size} bytes" if size is not None else "larger"
    return (
        f"{name}: {bytes_}, more than the {MAX_FILE_BYTES // (1024 * 1024)} MiB read from one "
        "file; split it into several files"
    )
