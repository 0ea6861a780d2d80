"""aim plan's loader: what it reads, what it leaves out and says so, and the bounds it keeps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from aim_plan.cli import cli
from aim_plan.load import MAX_DEPTH, MAX_FILE_BYTES, LoadError, load
from tests.cases import Case, table

SERVICE = """\
apiVersion: aim.silogen.ai/v1alpha1
kind: AIMService
metadata: {name: chat, namespace: ml}
spec: {model: {ref: m}}
"""
SECRET_VALUE = "hf_do-not-print-me"  # noqa: S105 - a fake token the output must not show
SECRET = f"""\
apiVersion: v1
kind: Secret
metadata: {{name: hf-token, namespace: ml}}
stringData: {{token: {SECRET_VALUE}}}
"""


@dataclass(frozen=True)
class Bad(Case):
    text: str
    error: str


BAD = [
    Bad(
        "deep",
        "a document nested past the bound is refused before PyYAML builds it recursively",
        "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        f"(document 0): nested deeper than {MAX_DEPTH} levels",
    ),
    Bad(
        "deep-second",
        "the message names which document of a stream is too deep",
        SERVICE + "---\n" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "(document 1): nested deeper",
    ),
    Bad(
        "aliases",
        "aliases that expand past the bound (a billion laughs) are refused, not planned",
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
            for p, c in zip("abcdef", "bcdefg", strict=True)
        ),
        "aliases expand to more than",
    ),
    Bad("not-yaml", "a syntax error names its line", "a: [\n", "not YAML at line 2"),
    Bad("scalar", "a document that is no mapping is no object", "just text\n", "not a Kubernetes"),
    Bad(
        "no-name",
        "an object without metadata.name cannot be planned",
        "apiVersion: v1\nkind: Secret\nmetadata: {}\n",
        "has no metadata.name",
    ),
    Bad(
        "no-kind",
        "an object without a kind is refused, naming both fields",
        "apiVersion: v1\nmetadata: {name: x}\n",
        "has no apiVersion or no kind",
    ),
]


@table(BAD)
def test_unreadable_input_is_refused_naming_file_and_document(case: Bad, tmp_path: Path) -> None:
    """Each bound and malformed input fails with the file, the document and the fix."""
    path = tmp_path / "m.yaml"
    path.write_text(case.text)
    with pytest.raises(LoadError, match=r"m\.yaml") as e:
        load([path])
    assert case.error in str(e.value)


def test_a_file_over_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    """A huge file is refused before it is read, with how to split it."""
    path = tmp_path / "big.yaml"
    path.write_text("#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(LoadError, match="split it into several files"):
        load([path])


def test_a_syntax_error_in_a_secret_never_quotes_its_value(tmp_path: Path) -> None:
    """PyYAML's error quotes the line; the plan gives only its position, which may be a Secret's."""
    path = tmp_path / "s.yaml"
    path.write_text(SECRET.replace(f"{SECRET_VALUE}}}", f"{SECRET_VALUE}: ]}}"))
    result = CliRunner().invoke(cli, ["plan", str(path)])
    assert result.exit_code == 2
    assert "not YAML at line" in result.output
    assert SECRET_VALUE not in result.output


def test_directories_are_read_in_file_order_and_a_later_document_wins(tmp_path: Path) -> None:
    """Journeys are applied in file order; a later apply of the same object replaces it."""
    (tmp_path / "02-b.yaml").write_text(SERVICE.replace("ref: m", "ref: second"))
    (tmp_path / "01-a.yml").write_text(SERVICE)
    (tmp_path / "notes.txt").write_text("not a manifest")
    loaded = load([tmp_path])
    assert [p.name for p in loaded.files] == ["01-a.yml", "02-b.yaml"]
    [service] = loaded.objects
    assert service["spec"]["model"]["ref"] == "second"


def test_unknown_and_older_kinds_are_listed_as_ignored_with_the_fix(tmp_path: Path) -> None:
    """Nothing is dropped silently: what the plan does not use is listed, with why."""
    path = tmp_path / "m.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n---\n"
        "apiVersion: aim.silogen.ai/v1alpha1\nkind: AIMClusterImage\nmetadata: {name: old}\n"
    )
    loaded = load([path])
    assert loaded.objects == []
    assert [(i.source.endswith("(document 0)"), i.what) for i in loaded.ignored[:1]] == [
        (True, "Deployment ml/web")
    ]
    assert "aim-migrate" in loaded.ignored[1].why
    result = CliRunner().invoke(cli, ["plan", str(path)])
    assert "ignored" in result.output
    assert "Deployment ml/web" in result.output


def test_a_namespaced_object_without_a_namespace_lands_in_default_as_with_kubectl(
    tmp_path: Path,
) -> None:
    """As kubectl apply would place it, so the plan composes it where the cluster would."""
    path = tmp_path / "m.yaml"
    path.write_text(SERVICE.replace(", namespace: ml", ""))
    [service] = load([path]).objects
    assert service["metadata"]["namespace"] == "default"


@dataclass(frozen=True)
class Output(Case):
    pass


OUTPUTS = [
    Output("text", "the page a person reads, and pastes into tickets"),
    Output("json", "the end state tools read: every object but the Secrets"),
    Output("yaml", "the same for YAML tools"),
]


@table(OUTPUTS)
def test_secrets_are_read_but_never_printed(tmp_path: Path, case: Output) -> None:
    """A Secret's name and values stay out of every output format."""
    (tmp_path / "m.yaml").write_text(SECRET + "---\n" + SERVICE)
    result = CliRunner().invoke(cli, ["plan", str(tmp_path), "-o", case.id])
    assert result.exit_code == 0, result.output
    assert SECRET_VALUE not in result.output
    assert "hf-token" not in result.output
