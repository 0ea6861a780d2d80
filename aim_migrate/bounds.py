"""The bounds a manifest file is read within, and the words its refusals quote a user's text in.

Why each bound is what it is: `aim_migrate.manifests`.
"""

from __future__ import annotations

import json
from typing import Final

MAX_FILE_BYTES: Final = 8 * 1024 * 1024
MAX_DEPTH: Final = 24
MAX_VALUES: Final = 200_000
MAX_STRING: Final = 1024 * 1024
QUOTED: Final = 60
"""Longest part of a user's string a message quotes."""


class UnreadableError(ValueError):
    """A file that is no manifests within the bounds.

    The message is one line naming the file, the document and the field (or the YAML
    construct), and what to do.
    """


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


def cut(text: str, limit: int = 200) -> str:
    """`text` on one line (what is not printable escaped), cut to `limit` characters.

    For words that may quote a user's text: PyYAML's problems, an exception's message.
    """
    line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return line if len(text) <= limit else f"{line}... ({len(text)} characters)"
