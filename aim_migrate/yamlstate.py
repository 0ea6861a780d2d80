"""The state of a manifest file's read by parser events, and the refusals it names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, NoReturn

from pydantic import JsonValue

from aim_migrate.bounds import MAX_DEPTH, MAX_VALUES, QUOTED, UnreadableError, quoted

TAG: Final = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (f"{TAG}{t}" for t in ("str", "int", "float", "bool", "null"))
MERGE, MAP, SEQ = f"{TAG}merge", f"{TAG}map", f"{TAG}seq"
SCALARS: Final = frozenset({STR, INT, FLOAT, BOOL, NULL})
WHAT_TAG: Final = {
    f"{TAG}timestamp": "a YAML date or time",
    f"{TAG}binary": "a YAML !!binary value",
    f"{TAG}set": "a YAML !!set",
    f"{TAG}omap": "a YAML !!omap",
    f"{TAG}pairs": "a YAML !!pairs",
}
_PLAIN_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(slots=True)
class Open:
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
class Anchored:
    """A value an anchor names, with what it counts where an alias repeats it."""

    value: JsonValue
    size: int
    height: int
    tag: str


class ReadState:
    """Where a read is (the documents read, the collections open, the line) and how it refuses.

    A refusal names the document, the field and the line from this state; `yamlread` moves it
    on event by event.
    """

    def __init__(self, name: str) -> None:
        """A read of the file `name`, at its start."""
        self.name = name
        self.documents: list[JsonValue] = []
        self.values = 0
        self.open: list[Open] = []
        self.anchors: dict[str, Anchored] = {}
        self.line = 0

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
            around.merging = tag == MERGE
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
        what = WHAT_TAG.get(tag)
        if what is None:
            self._refuse(f"has the tag {quoted(tag)}, which no Kubernetes manifest holds")
        shown = f" ({quoted(text)})" if text is not None else ""
        self._refuse(
            f"is {what}{shown}, which no Kubernetes manifest holds (they are JSON); quote it to "
            "make it a string"
        )

    @staticmethod
    def _what(tag: str) -> str:
        words = {INT: "a number", FLOAT: "a number", BOOL: "a boolean", NULL: "null"}
        return words.get(tag) or WHAT_TAG.get(tag) or quoted(tag)

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
