"""Manifest files read within bounds: the one YAML loader of aim-migrate and `aim plan`.

A manifest file may be anyone's, and PyYAML's loaders build whatever a file describes: a file of
a few hundred bytes whose aliases expand to a billion values, nesting that overflows their
recursion, dates and binary values no Kubernetes object holds, keys that are numbers. So values
are built here from libyaml's parser events, in one pass with no recursion, and each is checked
before it is added. A file is refused, naming the document, the field and the line, for:

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

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, NoReturn

import yaml
from pydantic import JsonValue

MAX_FILE_BYTES: Final = 8 * 1024 * 1024
MAX_DEPTH: Final = 24
MAX_VALUES: Final = 200_000
MAX_STRING: Final = 1024 * 1024
QUOTED: Final = 60
"""Longest part of a user's string a message quotes."""
_NUMBER_CHARS: Final = 100
"""A number written longer than this is refused before it is converted (int() of a very long
string is itself slow, and Python refuses past 4,300 digits)."""

_LOADER: Final[type[yaml.SafeLoader | yaml.CSafeLoader]] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)
"""libyaml's parser when PyYAML has it (the project's wheels do): the pure-Python one takes
about a second a megabyte, libyaml a fiftieth of that."""

_TAG: Final = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (f"{_TAG}{t}" for t in ("str", "int", "float", "bool", "null"))
_MERGE, _MAP, _SEQ = f"{_TAG}merge", f"{_TAG}map", f"{_TAG}seq"
_SCALARS: Final = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL})
_WHAT_TAG: Final = {
    f"{_TAG}timestamp": "a YAML date or time",
    f"{_TAG}binary": "a YAML !!binary value",
    f"{_TAG}set": "a YAML !!set",
    f"{_TAG}omap": "a YAML !!omap",
    f"{_TAG}pairs": "a YAML !!pairs",
}
_PLAIN_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")
_DECIMAL: Final = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
"""An integer PyYAML reads as decimal, within 64 bits."""
_POINT: Final = re.compile(r"-?[0-9]{1,15}\.[0-9]{1,15}")
"""A number with a decimal point, as PyYAML reads it (finite)."""

_API_VERSION: Final = re.compile(
    r"(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
)
"""`group/version` (a DNS subdomain and a label) or a core `version`, as Kubernetes names them."""
_KIND: Final = re.compile(r"[A-Za-z](?:[-A-Za-z0-9]*[A-Za-z0-9])?")
"""A kind, as the API server accepts one for a resource (a DNS label, any case)."""
_FORM: Final = {
    "apiVersion": ": group/version in lower case, as apps/v1, or a core version, as v1",
    "kind": " of letters, digits and -, as Deployment",
}
_LONGEST: Final = {"apiVersion": 253 + 1 + 63, "kind": 63, "name": 253, "namespace": 63}


class UnreadableError(ValueError):
    """A file that is no manifests within the bounds.

    The message is one line naming the file, the document and the field (or the YAML
    construct), and what to do.
    """


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
        docs = _Reader(name).read(text)
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
        _check_identity(doc, f"{name} (document {index})")
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
        _check_identity(obj, _where(name, index, at))
        found.append((at, obj))
    return found


def quoted(text: str, limit: int = QUOTED) -> str:
    """`text` as a JSON string on one line, cut to `limit` characters saying how long it was."""
    if len(text) <= limit:
        return json.dumps(text)
    return f"{json.dumps(text[:limit])}... ({len(text)} characters)"


def a(value: object) -> str:
    """What YAML made of `value`, in YAML's words (`a list`), without quoting it."""
    if value is None:
        return "null"
    for types, words in _YAML_TYPES:
        if isinstance(value, types):
            return words
    return f"a {type(value).__name__}"


_YAML_TYPES: Final = (
    (bool, "a boolean"),  # before int: a bool is one
    (int | float, "a number"),
    (str, "a string"),
    (dict, "a mapping"),
    (list, "a list"),
)


def _too_large(name: str, size: int | None) -> str:
    bytes_ = f"{size} bytes" if size is not None else "larger"
    return (
        f"{name}: {bytes_}, more than the {MAX_FILE_BYTES // (1024 * 1024)} MiB read from one "
        "file; split it into several files"
    )


def cut(text: str, limit: int = 200) -> str:
    """`text` on one line (what is not printable escaped), cut to `limit` characters.

    For words that may quote a user's text: PyYAML's problems, an exception's message.
    """
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return line if len(text) <= limit else f"{line}... ({len(text)} characters)"


def _check_identity(doc: JsonValue, where: str) -> None:
    """Refuse an apiVersion, kind, name or namespace the API server would not take, if named.

    Checked before anything prints them: a report line quotes them whole.
    """
    if not isinstance(doc, dict):
        return
    for key in ("apiVersion", "kind"):
        value = doc.get(key)
        if value is not None:
            pattern = _API_VERSION if key == "apiVersion" else _KIND
            _check_name(value, pattern, key, where)
    meta = doc.get("metadata")
    if meta is None:
        return
    kind = doc.get("kind") or "the object"
    if not isinstance(meta, dict):
        msg = f"{where}: {kind}'s metadata is {a(meta)}, not a mapping"
        raise UnreadableError(msg)
    for key in ("name", "namespace"):
        value = meta.get(key)
        if value is not None:
            _check_name(value, None, f"{kind}'s metadata.{key}", where, _LONGEST[key])


def _check_name(
    value: JsonValue, pattern: re.Pattern[str] | None, what: str, where: str, longest: int = 0
) -> None:
    longest = longest or _LONGEST[what]
    if not isinstance(value, str):
        msg = (
            f"{where}: {what} is {a(value)}, not a string; write it as one (quote it if YAML "
            "reads it as a number)"
        )
        raise UnreadableError(msg)
    if len(value) > longest or (pattern is not None and not pattern.fullmatch(value)):
        form = _FORM.get(what, "")
        msg = (
            f"{where}: {what} {quoted(value)} is not one Kubernetes accepts (at most {longest} "
            f"characters{form})"
        )
        raise UnreadableError(msg)


@dataclass(slots=True)
class _Open:
    """A mapping or sequence being read, and where in it the reader is."""

    value: dict[str, JsonValue] | list[JsonValue]
    anchor: str | None
    size: int = 1
    """Values in it so far, itself included, aliases expanded."""
    height: int = 1
    """Levels of nesting it holds, itself included, aliases expanded."""
    key: str | None = None
    """In a mapping, the key whose value comes next; None while a key comes next."""
    merging: bool = False
    """In a mapping, whether the value that comes next is a merge key's (`<<: *defaults`)."""
    merged: list[JsonValue] | None = None
    """In a mapping, the values of its merge keys, in order."""


@dataclass(frozen=True, slots=True)
class _Anchored:
    value: JsonValue
    size: int
    height: int
    tag: str


_BOOLS: Final = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


class _Reader:
    """Parser events to values in one pass, with no recursion (the open collections are a list).

    Every bound and JSON rule is checked before a value is added.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.documents: list[JsonValue] = []
        self.values = 0
        self.open: list[_Open] = []
        self.anchors: dict[str, _Anchored] = {}
        self.line = 0
        self.loader: yaml.SafeLoader | yaml.CSafeLoader = _LOADER("")

    def read(self, text: str) -> list[JsonValue]:
        """Every document of `text` (None for an empty one)."""
        self.loader = loader = _LOADER(text)
        try:
            while loader.check_event():
                event = loader.get_event()
                if event is None:
                    break
                if event.start_mark is not None:
                    self.line = event.start_mark.line + 1
                if isinstance(event, yaml.ScalarEvent):
                    self._scalar(event)
                elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                    self._start(event)
                elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                    self._end()
                elif isinstance(event, yaml.AliasEvent):
                    self._alias(event)
                elif isinstance(event, yaml.DocumentStartEvent):
                    self.anchors.clear()  # anchors are the document's own
        finally:
            loader.dispose()
        return self.documents

    def _start(self, event: yaml.MappingStartEvent | yaml.SequenceStartEvent) -> None:
        mapping = isinstance(event, yaml.MappingStartEvent)
        if self._is_key():
            self._refuse(
                f"has a key that is a {'mapping' if mapping else 'list'}; keys are strings"
            )
        if event.tag not in {None, "!", _MAP if mapping else _SEQ}:
            self._refuse_tag(str(event.tag))
        if len(self.open) + 1 > MAX_DEPTH:
            self._too_deep()
        self._count(1)
        value: dict[str, JsonValue] | list[JsonValue] = {} if mapping else []
        self.open.append(_Open(value, event.anchor))

    def _end(self) -> None:
        done = self.open.pop()
        value = done.value
        if done.merged is not None and isinstance(value, dict):
            value = self._merged(done.merged, value)
        self._place(value, done.size, done.height, _MAP if isinstance(value, dict) else _SEQ)
        if done.anchor is not None:
            self.anchors[done.anchor] = _Anchored(
                value, done.size, done.height, _MAP if isinstance(value, dict) else _SEQ
            )

    def _alias(self, event: yaml.AliasEvent) -> None:
        anchored = self.anchors.get(str(event.anchor))
        if anchored is None:
            name = quoted(str(event.anchor))
            if any(node.anchor == event.anchor for node in self.open):
                self._refuse(f"repeats the anchor {name} inside the value it names (a loop)")
            self._refuse(f"repeats the anchor {name}, which no value before it in the document has")
        if self._is_key() and anchored.tag != _STR:
            self._refuse("has a key that is an alias of no string; keys are strings")
        if len(self.open) + anchored.height > MAX_DEPTH:
            self._too_deep()
        self._count(anchored.size)
        # Shared, as PyYAML shares it: the bounds above count it as expanded.
        self._place(anchored.value, anchored.size, anchored.height, anchored.tag)

    def _scalar(self, event: yaml.ScalarEvent) -> None:
        text = event.value
        is_key = self._is_key()
        if len(text) > MAX_STRING:
            what = "a key" if is_key else "a string"
            self._refuse(
                f"holds {what} of {len(text)} characters, more than the {MAX_STRING} any "
                "Kubernetes object can (1 MiB)"
            )
        explicit = event.tag not in {None, "!"}
        value: JsonValue
        if explicit:
            tag = str(event.tag)
            value = self._value(tag, text, explicit=explicit, is_key=is_key)
        elif not event.implicit[0] or text[:1] not in self.loader.yaml_implicit_resolvers:
            tag, value = _STR, text  # quoted, or plain text no other type starts as
        elif not is_key and _DECIMAL.fullmatch(text):
            tag, value = _INT, int(text)  # the common numbers, without PyYAML's resolver
        elif not is_key and _POINT.fullmatch(text):
            tag, value = _FLOAT, float(text)
        else:  # plain text YAML may read as a number, a boolean or null
            tag = self._plain_tag(text)
            value = self._value(tag, text, explicit=explicit, is_key=is_key)
        self._count(1)
        self._place(value, 1, 0, tag)
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchored(value, 1, 0, tag)

    def _value(self, tag: str, text: str, *, explicit: bool, is_key: bool) -> JsonValue:
        """The value of a scalar YAML reads as `tag`; refused unless JSON carries it."""
        if tag == _STR:
            return text
        if is_key:
            if tag == _MERGE:
                return text
            self._refuse(
                f"has a key YAML reads as {self._what(tag)} ({quoted(text)}), not a string; "
                "quote the key"
            )
        if tag not in _SCALARS:
            self._refuse_tag(tag, text)
        if explicit:
            self._same_as_plain(tag, text)
        if tag == _NULL:
            return None
        if tag == _BOOL:
            return _BOOLS[text.lower()]
        return self._number(tag, text)

    def _number(self, tag: str, text: str) -> int | float:
        if len(text) > _NUMBER_CHARS:
            self._refuse(f"is a number written in {len(text)} characters; quote it if it is text")
        node = yaml.ScalarNode(tag, text)
        number: object = (
            self.loader.construct_yaml_int(node)
            if tag == _INT
            else self.loader.construct_yaml_float(node)
        )
        if not isinstance(number, int | float) or not math.isfinite(number):
            self._refuse(f"is a number JSON cannot carry ({quoted(text)}); quote it if it is text")
        if isinstance(number, int) and not -(2**63) <= number < 2**64:
            self._refuse(f"is a number beyond 64 bits ({quoted(text)}); quote it if it is text")
        return number

    def _plain_tag(self, text: str) -> str:
        """The type YAML gives `text` written unquoted (PyYAML's resolver, untyped)."""
        return str(self.loader.resolve(yaml.ScalarNode, text, (True, False)))  # type: ignore[no-untyped-call]

    def _same_as_plain(self, tag: str, text: str) -> None:
        """An explicit `!!int`, `!!bool`... on a value YAML would read as that type unquoted.

        Anything else (`!!int abc`) PyYAML's constructor would fail on with no YAML error.
        """
        plain = self._plain_tag(text)
        if plain != tag and not (tag == _FLOAT and plain == _INT):
            self._refuse(f"is tagged {self._what(tag)} but {quoted(text)} is not one")

    def _merged(
        self, merged: list[JsonValue], explicit: dict[str, JsonValue]
    ) -> dict[str, JsonValue]:
        """A mapping with merge keys, as PyYAML builds it.

        The merged mappings come first (of a list of them, the earlier wins; of several merge
        keys, the later), its own keys last.
        """
        out: dict[str, JsonValue] = {}
        for value in merged:
            items = list(reversed(value)) if isinstance(value, list) else [value]
            for item in items:
                if not isinstance(item, dict):
                    self._refuse(
                        f"merges (<<) {a(item)}; a merge key takes a mapping or a list of them"
                    )
                out.update(item)
        out.update(explicit)
        return out

    def _is_key(self) -> bool:
        return (
            bool(self.open) and self.open[-1].key is None and isinstance(self.open[-1].value, dict)
        )

    def _count(self, values: int) -> None:
        self.values += values
        if self.values > MAX_VALUES:
            self._refuse(
                f"brings the file past {MAX_VALUES} values (aliases counted as the values they "
                "repeat); split the file, or write values out instead of repeating anchors"
            )

    def _place(self, value: JsonValue, size: int, height: int, tag: str) -> None:
        """A whole node read: added to the collection around it, or a document."""
        if not self.open:
            self.documents.append(value)
            return
        around = self.open[-1]
        around.size += size
        if height >= around.height:
            around.height = height + 1
        if isinstance(around.value, list):
            around.value.append(value)
        elif around.key is None:
            around.key = str(value)
            around.merging = tag == _MERGE
        elif around.merging:
            around.merged = [*(around.merged or []), value]
            around.key = None
        else:
            around.value[around.key] = value
            around.key = None

    def _too_deep(self) -> NoReturn:
        self._refuse(
            f"is nested deeper than {MAX_DEPTH} levels (aliases counted where they are used); "
            "no Kubernetes object is, and the function could not receive it"
        )

    def _refuse_tag(self, tag: str, text: str | None = None) -> NoReturn:
        what = _WHAT_TAG.get(tag)
        if what is None:
            self._refuse(f"has the tag {quoted(tag)}, which no Kubernetes manifest holds")
        shown = f" ({quoted(text)})" if text is not None else ""
        self._refuse(
            f"is {what}{shown}, which no Kubernetes manifest holds (they are JSON); quote it to "
            "make it a string"
        )

    @staticmethod
    def _what(tag: str) -> str:
        words = {_INT: "a number", _FLOAT: "a number", _BOOL: "a boolean", _NULL: "null"}
        return words.get(tag) or _WHAT_TAG.get(tag) or quoted(tag)

    def _field(self) -> str:
        """The path of the node being read: `spec.env[0].name`, `the document` at the top.

        For a key, the path of its mapping.
        """
        parts: list[str] = []
        for node in self.open:
            if isinstance(node.value, list):
                parts.append(f"[{len(node.value)}]")
            elif node.key is not None:
                key = node.key
                plain = _PLAIN_KEY.fullmatch(key) and len(key) <= QUOTED
                parts.append(f".{key}" if plain else f"[{quoted(key)}]")
        return "".join(parts).lstrip(".") or "the document"

    def _refuse(self, problem: str) -> NoReturn:
        document = len(self.documents)
        msg = f"{self.name} (document {document}): {self._field()} (line {self.line}) {problem}"
        raise UnreadableError(msg)
