"""Parser events to values: how a manifest file is read, one event at a time, within its bounds."""

from __future__ import annotations

import math
import re
from typing import Final

import yaml
from pydantic import JsonValue

from aim_migrate.bounds import MAX_DEPTH, MAX_STRING, a, quoted
from aim_migrate.yamlstate import (
    BOOL,
    FLOAT,
    INT,
    MAP,
    MERGE,
    NULL,
    SCALARS,
    SEQ,
    STR,
    Anchored,
    Open,
    ReadState,
)

_NUMBER_CHARS: Final = 100
"""A number written longer than this is refused before it is converted (int() of a very long
string is itself slow, and Python refuses past 4,300 digits)."""

_LOADER: Final[type[yaml.SafeLoader | yaml.CSafeLoader]] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)
"""libyaml's parser when PyYAML has it (the project's wheels do): the pure-Python one takes
about a second a megabyte, libyaml a fiftieth of that."""


_DECIMAL: Final = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
"""An integer PyYAML reads as decimal, within 64 bits."""
_POINT: Final = re.compile(r"-?[0-9]{1,15}\.[0-9]{1,15}")
"""A number with a decimal point, as PyYAML reads it (finite)."""


_BOOLS: Final = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


class EventReader(ReadState):
    """Parser events to values in one pass, with no recursion (the open collections are a list).

    Every bound and JSON rule is checked before a value is added.
    """

    def __init__(self, name: str) -> None:
        """A reader of the file `name`."""
        super().__init__(name)
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
        if event.tag not in {None, "!", MAP if mapping else SEQ}:
            self._refuse_tag(str(event.tag))
        if len(self.open) + 1 > MAX_DEPTH:
            self._too_deep()
        self._count(1)
        value: dict[str, JsonValue] | list[JsonValue] = {} if mapping else []
        self.open.append(Open(value, event.anchor))

    def _end(self) -> None:
        done = self.open.pop()
        value = done.value
        if done.merged is not None and isinstance(value, dict):
            value = self._merged(done.merged, value)
        self._place(value, done.size, done.height, MAP if isinstance(value, dict) else SEQ)
        if done.anchor is not None:
            self.anchors[done.anchor] = Anchored(
                value, done.size, done.height, MAP if isinstance(value, dict) else SEQ
            )

    def _alias(self, event: yaml.AliasEvent) -> None:
        anchored = self.anchors.get(str(event.anchor))
        if anchored is None:
            name = quoted(str(event.anchor))
            if any(node.anchor == event.anchor for node in self.open):
                self._refuse(f"repeats the anchor {name} inside the value it names (a loop)")
            self._refuse(f"repeats the anchor {name}, which no value before it in the document has")
        if self._is_key() and anchored.tag != STR:
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
            tag, value = STR, text  # quoted, or plain text no other type starts as
        elif not is_key and _DECIMAL.fullmatch(text):
            tag, value = INT, int(text)  # the common numbers, without PyYAML's resolver
        elif not is_key and _POINT.fullmatch(text):
            tag, value = FLOAT, float(text)
        else:  # plain text YAML may read as a number, a boolean or null
            tag = self._plain_tag(text)
            value = self._value(tag, text, explicit=explicit, is_key=is_key)
        self._count(1)
        self._place(value, 1, 0, tag)
        if event.anchor is not None:
            self.anchors[event.anchor] = Anchored(value, 1, 0, tag)

    def _value(self, tag: str, text: str, *, explicit: bool, is_key: bool) -> JsonValue:
        """The value of a scalar YAML reads as `tag`; refused unless JSON carries it."""
        if tag == STR:
            return text
        if is_key:
            if tag == MERGE:
                return text
            self._refuse(
                f"has a key YAML reads as {self._what(tag)} ({quoted(text)}), not a string; "
                "quote the key"
            )
        if tag not in SCALARS:
            self._refuse_tag(tag, text)
        if explicit:
            self._same_as_plain(tag, text)
        if tag == NULL:
            return None
        if tag == BOOL:
            return _BOOLS[text.lower()]
        return self._number(tag, text)

    def _number(self, tag: str, text: str) -> int | float:
        if len(text) > _NUMBER_CHARS:
            self._refuse(f"is a number written in {len(text)} characters; quote it if it is text")
        node = yaml.ScalarNode(tag, text)
        number: object = (
            self.loader.construct_yaml_int(node)
            if tag == INT
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
        if plain != tag and not (tag == FLOAT and plain == INT):
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
