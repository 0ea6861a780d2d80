"""aim-migrate on hostile input: refused by name, never a traceback.

A manifest written by hand, or by an older tool, may hold a list or a mapping where the operator
wants a string: each such row converts with the command (as scripts/migrate runs it) and expects
exit 1, the field named as not carried, and the rest of the report intact. A file that is no
manifests within the reader's bounds (tests/unit/migrate/hostile_files.py) exits 2 in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from aim_migrate import convert
from aim_migrate.cli import cli
from aim_migrate.rules import Migration
from tests.cases import Case, table
from tests.unit.migrate.hostile_files import (
    HOSTILE_FILES,
    LONGEST_LINE,
    HostileFile,
    assert_refused,
)

V1 = "aim.eai.amd.com/v1alpha1"
V2 = "aim.eai.amd.com/v1alpha2"


def manifest(api: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "x", "namespace": "ml"},
        "spec": spec,
    }


@dataclass(frozen=True)
class Hostile(Case):
    doc: dict[str, Any]
    field: str
    """The field the NOT CARRIED line must name, with the value as the report shows it."""


HOSTILE = [
    Hostile(
        "service-caching-mode-list",
        "a list is no caching mode (it crashed the converter: lists are not hashable)",
        manifest(V1, "AIMService", {"model": {"ref": "m"}, "caching": {"mode": [1]}}),
        "spec.caching.mode: [1]; not a mode",
    ),
    Hostile(
        "service-caching-mode-mapping",
        "nor is a mapping, which is not hashable either",
        manifest(V1, "AIMService", {"model": {"ref": "m"}, "caching": {"mode": {"a": 1}}}),
        'spec.caching.mode: {"a": 1}; not a mode',
    ),
    Hostile(
        "service-caching-string",
        "caching is a block: a string in its place is refused, not read as unset",
        manifest(V1, "AIMService", {"model": {"ref": "m"}, "caching": "Shared"}),
        'spec.caching: "Shared"; not a mapping',
    ),
    Hostile(
        "profile-type-list",
        "an AIMProfile's type that is a list (it crashed the converter)",
        manifest(V2, "AIMProfile", {"image": "i", "aimId": "a", "type": []}),
        "spec.type: []; types here are",
    ),
    Hostile(
        "template-type-list",
        "a template's type that is a list (the same rule as profiles')",
        manifest(V1, "AIMServiceTemplate", {"modelName": "m", "type": [1]}),
        "spec.type: [1]; types here are",
    ),
    Hostile(
        "model-custom-type-mapping",
        "a custom model's type that is an empty mapping: reported, not mistaken for unset (it "
        "was dropped silently)",
        manifest(V1, "AIMModel", {"image": "i", "custom": {"type": {}}}),
        "spec.custom.type: {}; types here are",
    ),
    Hostile(
        "model-custom-template-type-list",
        "a custom template's type that is a list",
        manifest(V1, "AIMModel", {"image": "i", "customTemplates": [{"name": "t", "type": [1]}]}),
        "spec.customTemplates[0].type: [1]; types here are",
    ),
    Hostile(
        "template-cache-scope-list",
        "a scope that is a list is refused, not dropped as the operator's Unknown is",
        manifest(V1, "AIMTemplateCache", {"templateName": "t", "templateScope": ["Cluster"]}),
        'spec.templateScope: ["Cluster"]; a scope is Namespace or Cluster',
    ),
]


@table(HOSTILE)
def test_a_field_of_the_wrong_shape_is_not_carried_by_name(case: Hostile, tmp_path: Path) -> None:
    """Exit 1 with the object and the field in the report, the output still written."""
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(case.doc))
    result = CliRunner().invoke(cli, [str(path)])
    assert result.exit_code == 1, (case.reason, result.stderr)
    assert f"{case.doc['kind']}/x" in result.stderr, case.reason
    assert f"NOT CARRIED: {case.field}" in result.stderr, (case.reason, result.stderr)
    assert yaml.safe_load(result.stdout)["apiVersion"] == "aim.silogen.ai/v1alpha1"


def test_a_rule_that_fails_names_the_file_and_document_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should a rule still meet a shape it does not expect, the command exits 2 naming the file
    and the document it failed on, with no traceback."""

    def failing(doc: Any, _: Any) -> Migration:
        if doc.get("kind") == "AIMService":
            msg = "unhashable type: 'list'"
            raise TypeError(msg)
        return Migration("ok", doc)

    monkeypatch.setattr(convert, "migrate", failing)
    path = tmp_path / "old.yaml"
    template = manifest(V1, "AIMServiceTemplate", {"modelName": "m"})
    path.write_text(
        yaml.safe_dump_all([template, None, manifest(V1, "AIMService", {"model": {"ref": "m"}})])
    )
    result = CliRunner().invoke(cli, [str(path)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert f"{path} (document 2): aim-migrate failed on it (TypeError:" in result.stderr
    assert "this is a bug in aim-migrate" in result.stderr


@table(HOSTILE_FILES)
@pytest.mark.timeout(120)  # bounded time: the billion laughs ran past 25 s before the fix
def test_a_hostile_file_exits_2_with_one_line_naming_the_file_document_and_field(
    case: HostileFile, tmp_path: Path
) -> None:
    """Each file that crashed or stalled aim-migrate (issue 46) is refused with exit 2 and one
    line naming the file, the document and the field or YAML construct: no traceback, no
    report, no output, a user's value quoted cut short."""
    path = tmp_path / "old.yaml"
    path.write_bytes(case.content)
    result = CliRunner().invoke(cli, [str(path)])
    assert_refused(result, path, case)


def test_a_converter_failure_quotes_the_exception_cut_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception's message may quote a manifest's value whole (a KeyError of a 1 MB key):
    the line that names the document cuts it."""

    def failing(*_: Any) -> Migration:
        raise KeyError("k" * 1_000_000)

    monkeypatch.setattr(convert, "migrate", failing)
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(manifest(V1, "AIMService", {"model": {"ref": "m"}})))
    result = CliRunner().invoke(cli, [str(path)])
    assert result.exit_code == 2, result.output[:2000]
    [line] = result.stderr.splitlines()
    assert f"{path} (document 0): aim-migrate failed on it (KeyError: 'kkk" in line
    assert "(1000002 characters)" in line
    assert len(line) < LONGEST_LINE
