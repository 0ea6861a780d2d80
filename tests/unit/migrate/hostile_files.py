"""Files that crashed or stalled aim-migrate and `aim plan` (issue 46), as a table both use.

Both commands read files with `aim_migrate.manifests`, so each row is run through each command
(tests/unit/migrate/test_migrate_hostile.py, tests/unit/plan/test_hostile_files.py): exit 2, one
line naming the file, the document and the field (or the YAML construct), no traceback, in
bounded time. Sizes are the ones the issue measured.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from click.testing import Result

from tests.cases import Case

SERVICE = """\
apiVersion: aim.silogen.ai/v1alpha1
kind: AIMService
metadata: {name: chat, namespace: ml}
spec: {model: {ref: m}}
"""
OPERATOR_SERVICE = SERVICE.replace("aim.silogen.ai/v1alpha1", "aim.eai.amd.com/v1alpha1")
FIRST_DOCUMENT = """\
apiVersion: v1
kind: Secret
metadata: {name: hf-token, namespace: ml}
stringData: {token: x}
---
"""
LONGEST_LINE = 1_000
"""No message line is longer: a user's value is quoted cut short."""


def laughs(levels: int) -> str:
    """A "billion laughs": each level an anchored list of ten aliases of the one before."""
    names = "abcdefghijklmnopqrstuvwxyz"[:levels]
    lines = [f"    a: &a [{', '.join(['x'] * 10)}]"]
    lines += [f"    {c}: &{c} [{', '.join(['*' + p] * 10)}]" for p, c in itertools.pairwise(names)]
    return SERVICE.replace(
        "spec: {model: {ref: m}}", "spec:\n  model: {ref: m}\n  x:\n"
    ) + "\n".join(lines)


@dataclass(frozen=True)
class HostileFile(Case):
    content: bytes
    names: tuple[str, ...]
    """What the one line must say besides the file: the document and the field, or the YAML
    construct."""


def assert_refused(result: Result, path: Path, case: HostileFile) -> None:
    """The command refused the file as a user must see it: exit 2 with one short line on stderr
    that names the file and what the case says, nothing on stdout, no traceback."""
    assert result.exit_code == 2, (case.reason, result.output[:2000])
    assert isinstance(result.exception, SystemExit), (case.reason, result.exception)
    assert "Traceback" not in result.output, case.reason
    assert result.stdout == "", case.reason
    [line] = result.stderr.splitlines()
    assert len(line) < LONGEST_LINE, (case.reason, len(line))
    assert line.startswith(f"Error: {path}"), (case.reason, line)
    for name in case.names:
        assert name in line, (case.reason, line)


def _with_spec(field: str, base: str = SERVICE) -> bytes:
    return base.replace("spec: {model: {ref: m}}", f"spec: {{model: {{ref: m}}, {field}}}").encode()


HOSTILE_FILES = [
    HostileFile(
        "not-utf8",
        "a Latin-1 byte: a UnicodeDecodeError traceback, exit 1 (migrate's 'not carried' code)",
        SERVICE.replace("name: chat", "name: caf\xe9").encode("latin-1"),
        ("not UTF-8 text (byte 73, line 3)", "save it as UTF-8"),
    ),
    HostileFile(
        "nested-400",
        "400 levels of lists: a RecursionError traceback in PyYAML's constructor",
        ("a: " + "[" * 400 + "]" * 400 + "\n").encode(),
        ("(document 0): a[0][0]", "(line 1) is nested deeper than 24 levels"),
    ),
    HostileFile(
        "billion-laughs",
        "nine levels of aliases (10^9 values): migrate still ran after 25 s; refused by count, "
        "without expanding them",
        laughs(9).encode(),
        ("(document 0): spec.x.f[", "past 200000 values (aliases counted"),
    ),
    HostileFile(
        "string-7mb-operator",
        "a 7 MB string in an operator manifest: 10.9 CPU-s in migrate, 28 in aim plan",
        _with_spec('x: "' + "a" * 7_000_000 + '"', OPERATOR_SERVICE),
        ("(document 0): spec.x (line 4)", "a string of 7000000 characters"),
    ),
    HostileFile(
        "date",
        "an unquoted date is a datetime.date to PyYAML: a TypeError in aim plan (not JSON); the "
        "second document, so the index is checked",
        FIRST_DOCUMENT.encode() + _with_spec("when: 2024-01-01"),
        ("(document 1): spec.when (line 9)", 'a YAML date or time ("2024-01-01")'),
    ),
    HostileFile(
        "binary",
        "!!binary is bytes to PyYAML: a TypeError in aim plan",
        _with_spec("blob: !!binary aGVsbG8="),
        ("(document 0): spec.blob (line 4)", "!!binary"),
    ),
    HostileFile(
        "number-key",
        "a key YAML reads as a number: a TypeError comparing keys in aim plan",
        _with_spec("1: one"),
        ("(document 0): spec (line 4)", 'has a key YAML reads as a number ("1")'),
    ),
    HostileFile(
        "nested-50",
        "50 levels, under the old bound of 64: crashed turning the request into protobuf",
        _with_spec("x: " + "[" * 50 + "]" * 50),
        ("(document 0): spec.x[0]", "nested deeper than 24 levels"),
    ),
    HostileFile(
        "kind-list",
        "kind: [AIMService]: a TypeError (a list is not hashable) in aim plan",
        SERVICE.replace("kind: AIMService", "kind: [AIMService]").encode(),
        ("(document 0): kind is a list, not a string",),
    ),
    HostileFile(
        "kind-1mb",
        "a 1 MB kind was quoted whole in the line that said it was ignored",
        SERVICE.replace("kind: AIMService", "kind: " + "K" * 1_000_000).encode(),
        ('(document 0): kind "KKKK', "(1000000 characters) is not one Kubernetes accepts"),
    ),
    HostileFile(
        "string-7mb",
        "a 7 MB string in this API's manifest: 28 CPU-s in aim plan before any error",
        _with_spec('x: "' + "a" * 7_000_000 + '"'),
        ("(document 0): spec.x (line 4)", "a string of 7000000 characters"),
    ),
]
