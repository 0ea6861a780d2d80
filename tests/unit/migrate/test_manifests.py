"""The manifest reader both commands share: PyYAML's values, within bounds, refused by name."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from aim_migrate.manifests import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_STRING,
    MAX_VALUES,
    UnreadableError,
    read_bytes,
    read_stream,
)
from tests.cases import Case, table

REPO = Path(__file__).parents[3]


@dataclass(frozen=True)
class Refused(Case):
    text: bytes
    says: str
    """What the one line says after the file's name."""


REFUSED = [
    Refused(
        "undefined-alias",
        "an alias of no anchor: PyYAML's composer error, named by field here",
        b"a: *nope\n",
        ' (document 0): a (line 1) repeats the anchor "nope", which no value before it',
    ),
    Refused(
        "alias-loop",
        "an alias inside the value it names builds a structure that contains itself (JSON "
        "cannot; json.dumps recurses forever)",
        b"a: &a [*a]\n",
        ' (document 0): a[0] (line 1) repeats the anchor "a" inside the value it names (a loop)',
    ),
    Refused(
        "alias-deepens",
        "an alias is as deep as what it repeats, where it is used: nesting the depth check of "
        "the text alone would miss",
        ("a: &a " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\nb: [*a]\n").encode(),
        " (document 0): b[0] (line 2) is nested deeper than",
    ),
    Refused(
        "values-without-aliases",
        "values past the bound written out: the bound is the file's, aliases or not",
        ("a: [" + ",".join(["1"] * MAX_VALUES) + "]\n").encode(),
        f" (document 0): a[{MAX_VALUES - 3}] (line 1) brings the file past {MAX_VALUES} values",
    ),
    Refused(
        "values-across-documents",
        "the bound counts every document of the file, not each alone",
        ("---\n[" + ",".join(["1"] * (MAX_VALUES // 2)) + "]\n").encode() * 2,
        " (document 1): [",
    ),
    Refused(
        "key-too-long",
        "a key is a string too: bounded as one",
        b"a: {" + b"k" * (MAX_STRING + 1) + b": 1}\n",
        f" (document 0): a (line 1) holds a key of {MAX_STRING + 1} characters",
    ),
    Refused(
        "python-tag",
        "PyYAML's python tags are refused by the safe loader with a message quoting the tag; "
        "here as any tag no manifest holds",
        b"a: !!python/object:os.system x\n",
        ' (document 0): a (line 1) has the tag "tag:yaml.org,2002:python/object:os.system"',
    ),
    Refused(
        "custom-tag-long",
        "a local tag, a megabyte long: quoted cut short",
        b"a: !" + b"t" * 1_000_000 + b" x\n",
        "... (1000001 characters), which no Kubernetes manifest holds",
    ),
    Refused(
        "set",
        "a !!set is a Python set: not JSON, not hashable in a list of keys",
        b"a: !!set {x, y}\n",
        " (document 0): a (line 1) is a YAML !!set, which no Kubernetes manifest holds",
    ),
    Refused(
        "timestamp",
        "a date and time unquoted is a datetime to PyYAML (the API server reads a string)",
        b"a: 2024-01-01T00:00:00Z\n",
        ' (document 0): a (line 1) is a YAML date or time ("2024-01-01T00:00:00Z")',
    ),
    Refused(
        "explicit-int-of-text",
        "!!int abc: PyYAML's constructor fails with a ValueError, which is no YAML error",
        b"a: !!int abc\n",
        ' (document 0): a (line 1) is tagged a number but "abc" is not one',
    ),
    Refused(
        "explicit-bool-of-text",
        "!!bool maybe: a KeyError in PyYAML's constructor",
        b"a: !!bool maybe\n",
        ' (document 0): a (line 1) is tagged a boolean but "maybe" is not one',
    ),
    Refused(
        "nan",
        "NaN is no JSON number",
        b"a: .nan\n",
        ' (document 0): a (line 1) is a number JSON cannot carry (".nan")',
    ),
    Refused(
        "overflowing-float",
        "1.0e+999 is infinity to PyYAML",
        b"a: 1.0e+999\n",
        ' (document 0): a (line 1) is a number JSON cannot carry ("1.0e+999")',
    ),
    Refused(
        "beyond-64-bits",
        "an integer no Kubernetes field holds (they are 64 bits)",
        b"a: 0xffffffffffffffffff\n",
        ' (document 0): a (line 1) is a number beyond 64 bits ("0xffffffffffffffffff")',
    ),
    Refused(
        "digits",
        "int() of 5,000 digits raises past Python's 4,300-digit limit (a ValueError)",
        b"a: " + b"9" * 5_000 + b"\n",
        " (document 0): a (line 1) is a number written in 5000 characters",
    ),
    Refused(
        "boolean-key",
        "on: is a boolean key in YAML 1.1 (the workflow-file trap)",
        b"on: push\n",
        ' (document 0): the document (line 1) has a key YAML reads as a boolean ("on")',
    ),
    Refused(
        "null-key",
        "a null key",
        b"~: 1\n",
        ' (document 0): the document (line 1) has a key YAML reads as null ("~")',
    ),
    Refused(
        "list-key",
        "a complex key: a list, which PyYAML cannot even hash",
        b"? [a]\n: 1\n",
        " (document 0): the document (line 1) has a key that is a list",
    ),
    Refused(
        "alias-key",
        "an alias of a mapping as a key",
        b"a: &m {x: 1}\nb: {*m : 1}\n",
        " (document 0): b (line 2) has a key that is an alias of no string",
    ),
    Refused(
        "merge-of-a-number",
        "a merge key takes mappings: PyYAML's error, named by field here",
        b"a: {<<: 1}\n",
        " (document 0): a (line 1) merges (<<) a number",
    ),
    Refused(
        "control-character",
        "a NUL byte: PyYAML's reader error, which has no mark, quotes where it is",
        b"a: 1\nb: \x00\n",
        ": not YAML at line 2: the character #x0000 is not allowed in YAML",
    ),
    Refused(
        "syntax",
        "a syntax error: its position and problem, never the line (it may be a Secret's)",
        b"a: {b: [1, 2}\n",
        ": not YAML at line 1, column 13: did not find expected ',' or ']'",
    ),
    Refused(
        "api-version-form",
        "an apiVersion the API server would not take",
        b"apiVersion: Apps/v1\nkind: Deployment\n",
        ' (document 0): apiVersion "Apps/v1" is not one Kubernetes accepts',
    ),
    Refused(
        "metadata-list",
        "metadata that is a list: no name to report the object by",
        b"kind: Secret\nmetadata: []\n",
        " (document 0): Secret's metadata is a list, not a mapping",
    ),
    Refused(
        "name-too-long",
        "a name longer than the API server's 253 characters, quoted cut short",
        b"kind: Secret\nmetadata: {name: " + b"n" * 300 + b"}\n",
        "... (300 characters) is not one Kubernetes accepts (at most 253 characters)",
    ),
    Refused(
        "namespace-number",
        "a namespace YAML reads as a number",
        b"kind: Secret\nmetadata: {name: a, namespace: 42}\n",
        " (document 0): Secret's metadata.namespace is a number, not a string",
    ),
]


@table(REFUSED)
def test_what_no_manifest_holds_is_refused_in_one_line_by_field(case: Refused) -> None:
    """Each construct is refused naming the file, the document and the field (or the YAML
    construct), on one line, quoting a user's text cut short."""
    with pytest.raises(UnreadableError) as e:
        read_bytes("f.yaml", case.text)
    line = str(e.value)
    assert line.startswith("f.yaml"), case.reason
    assert case.says in line, (case.reason, line[:500])
    assert "\n" not in line, case.reason
    assert len(line) < 1_000, case.reason


def _yaml_files() -> list[Path]:
    return sorted(
        p
        for pattern in ("examples/**/*.yaml", "xrds/*.yaml", "tests/unit/migrate/**/*.yaml")
        for p in REPO.glob(pattern)
    )


def test_every_manifest_of_the_repository_reads_as_pyyaml_reads_it() -> None:
    """The reader builds values itself (PyYAML's constructor recurses and builds any type): on
    every manifest the project ships, the same values, key order included."""
    files = _yaml_files()
    assert len(files) > 50
    for path in files:
        data = path.read_bytes()
        expected = list(yaml.safe_load_all(data))
        assert json.dumps(read_bytes(str(path), data)) == json.dumps(expected), path


@dataclass(frozen=True)
class Same(Case):
    text: str


SAME = [
    Same(
        "merge",
        "a merge key: the merged mapping first, the mapping's own keys win",
        "a: &a {x: 1, y: 2}\nb: {<<: *a, y: 3, z: 4}\n",
    ),
    Same(
        "merge-list",
        "of a list of merged mappings, the earlier wins",
        "a: &a {x: 1}\nc: &c {x: 9, w: 0}\nb: {<<: [*a, *c], y: 3}\n",
    ),
    Same(
        "merge-twice",
        "of two merge keys, the later wins",
        "a: &a {x: 1}\nc: &c {x: 9}\nb: {<<: *a, <<: *c}\n",
    ),
    Same("alias-string-key", "an alias of a string is a string key", "- &s hello\n- {*s : 1}\n"),
    Same(
        "scalars",
        "YAML 1.1's numbers, booleans and nulls, as PyYAML reads them (1e3 is text, 012 octal)",
        "a: [0, -0, 012, 0x1f, +3, 1_0, 1:2, 1.5, .5, -1.25, 1e3, 1.0e+3, yes, No, off, ~, null,"
        " '', x, '1', !!str 1, !!float 1, !!null '', 18446744073709551615]\n",
    ),
    Same("documents", "empty documents are None, and keep their index", "---\n---\na: 1\n...\n"),
    Same("empty", "an empty file has no document", ""),
]


@table(SAME)
def test_values_are_pyyamls(case: Same) -> None:
    """What PyYAML's safe loader builds, for the constructs the repository's files lack."""
    expected = list(yaml.safe_load_all(case.text))
    got = read_bytes("f.yaml", case.text.encode())
    assert json.dumps(got) == json.dumps(expected), case.reason


def test_a_string_at_the_bound_and_nesting_at_the_bound_are_read() -> None:
    """The bounds are inclusive: a value at each is read, one past it refused (above)."""
    [doc] = read_bytes("f.yaml", b'a: "' + b"x" * MAX_STRING + b'"\n')
    assert isinstance(doc, dict)
    assert len(str(doc["a"])) == MAX_STRING
    deep = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert read_bytes("f.yaml", f"a: {deep}\n".encode())


def test_a_stream_is_read_no_further_than_one_byte_past_the_bound() -> None:
    """Standard input has no size to check first: it is read up to the bound and refused."""
    stream = io.BytesIO(b"#" * (MAX_FILE_BYTES * 2))
    with pytest.raises(UnreadableError, match="more than the 8 MiB read from one file"):
        read_stream("-", stream)
    assert stream.tell() == MAX_FILE_BYTES + 1


def test_libyaml_parses() -> None:
    """The bounds of time the docs state assume libyaml's parser (the project's PyYAML wheels
    have it); PyYAML's own is fifty times slower."""
    assert yaml.__with_libyaml__
