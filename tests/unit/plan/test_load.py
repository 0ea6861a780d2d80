"""aim plan's loader: what it reads, what it leaves out and says so, and the bounds it keeps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import aim_migrate.convert
from aim_migrate.manifests import MAX_DEPTH, MAX_FILE_BYTES
from aim_plan.cli import cli
from aim_plan.load import LoadError, load
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
        "a document nested past the bound is refused, naming the field, before it is built",
        "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        f"(document 0): a{'[0]' * (MAX_DEPTH - 1)} (line 1) is nested deeper than {MAX_DEPTH}",
    ),
    Bad(
        "deep-second",
        "the message names which document of a stream is too deep",
        SERVICE + "---\n" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        f"(document 1): {'[0]' * MAX_DEPTH} (line 6) is nested deeper",
    ),
    Bad(
        "aliases",
        "aliases that expand past the bound (a billion laughs) are refused, not planned",
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
            for p, c in zip("abcdef", "bcdefg", strict=True)
        ),
        "(aliases counted as the values they repeat)",
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


def test_a_list_from_kubectl_is_planned_as_its_items(tmp_path: Path) -> None:
    """What `kubectl get -o yaml` writes (a `kind: List`) is read as its items, each named by
    its place in the list; a list whose items are no list is refused naming it."""
    path = tmp_path / "live.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        + "".join("- " + line + "\n" if i == 0 else "  " + line + "\n"
                  for i, line in enumerate(SERVICE.strip().splitlines()))
        + "metadata: {resourceVersion: ''}\n"
    )  # fmt: skip
    loaded = load([path])
    [service] = loaded.objects
    assert service["kind"] == "AIMService"
    assert loaded.ignored == []

    path.write_text("apiVersion: v1\nkind: List\nitems: {a: 1}\n")
    with pytest.raises(LoadError, match=r"live.yaml \(document 0\): List's items is"):
        load([path])


def test_unknown_kinds_are_listed_as_ignored_with_why(tmp_path: Path) -> None:
    """Nothing is dropped silently: what the plan does not use is listed, with why; an AIM
    group kind the converter does not know either is not mistaken for an older one."""
    path = tmp_path / "m.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ml}\n---\n"
        "apiVersion: aim.silogen.ai/v1alpha1\nkind: AIMGadget\nmetadata: {name: odd}\n"
    )
    loaded = load([path])
    assert loaded.objects == []
    assert [(i.source.endswith("(document 0)"), i.what) for i in loaded.ignored[:1]] == [
        (True, "Deployment ml/web")
    ]
    assert "nor a kind aim-migrate converts" in loaded.ignored[1].why
    result = CliRunner().invoke(cli, ["plan", str(path)])
    assert "ignored" in result.output
    assert "Deployment ml/web" in result.output


OLD_IMAGE = """\
apiVersion: aim.silogen.ai/v1alpha1
kind: AIMImage
metadata: {name: llama, namespace: ml}
spec: {image: ghcr.io/example/llama:1}
"""


def test_an_older_api_object_is_converted_as_scripts_migrate_would_and_noted(
    tmp_path: Path,
) -> None:
    """Planned, not ignored: the converter's result, with a note naming what it came from;
    an object of this API beside it is planned as written, with no note."""
    path = tmp_path / "m.yaml"
    path.write_text(OLD_IMAGE + "---\n" + SERVICE)
    loaded = load([path])
    model, service = loaded.objects
    assert (model["kind"], model["metadata"]["namespace"]) == ("AIMModel", "ml")
    assert model["spec"]["image"] == "ghcr.io/example/llama:1"
    assert service["spec"] == {"model": {"ref": "m"}}
    note = (
        f"{path} (document 0): AIMModel ml/llama converted from aim.silogen.ai/v1alpha1 AIMImage "
        "with aim-migrate (scripts/migrate writes the converted manifests)"
    )
    assert loaded.notes == [note]
    assert loaded.ignored == []


def test_what_the_converter_cannot_carry_over_stops_the_plan_in_its_words() -> None:
    """examples/migrate/old.yaml, which scripts/migrate converts with exit status 1: a cluster
    runtime config's pull secrets have no place here. The plan plans no half-converted catalog:
    exit 2, the file, the object and the field, as the converter reports them."""
    old = Path(__file__).parents[3] / "examples" / "migrate" / "old.yaml"
    result = CliRunner().invoke(cli, ["plan", str(old)])
    assert result.exit_code == 2, result.output
    assert f"{old} (document 0): aim-migrate cannot carry AIMClusterConfig/default over: " in (
        result.output
    )
    assert "spec.imagePullSecrets" in result.output
    assert "scripts/migrate prints the whole report" in result.output


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


def test_the_converters_warnings_ride_on_the_note() -> None:
    """An AIM operator manifest converts with a warning (carried, but it behaves differently):
    the note says so, in the converter's words, so the plan's reader sees it too."""
    operator = Path(__file__).parents[1] / "migrate" / "operator_manifests"
    loaded = load([operator / "runtime-config-deprecated.yaml"])
    [config] = loaded.objects
    assert config["apiVersion"] == "aim.silogen.ai/v1alpha1"
    [note] = loaded.notes
    assert "converted from aim.eai.amd.com/v1alpha1 AIMRuntimeConfig with aim-migrate" in note
    assert '; warning: spec.defaultStorageClassName: "old-class" left out' in note


OPERATOR_SERVICE = """\
apiVersion: aim.eai.amd.com/v1alpha1
kind: AIMService
metadata: {name: chat, namespace: ml}
spec: {model: {ref: m}, caching: {mode: [1]}}
"""
OPERATOR_PROFILE = """\
apiVersion: aim.eai.amd.com/v1alpha2
kind: AIMProfile
metadata: {name: fast, namespace: ml}
spec: {image: ghcr.io/example/llama:1, aimId: llama, type: []}
"""


@dataclass(frozen=True)
class Hostile(Case):
    text: str
    names: tuple[str, ...]
    """What the message must name besides the file and document: the object and the field."""


HOSTILE = [
    Hostile(
        "operator-caching-mode-list",
        "an operator service's caching.mode that is a list crashed the converter with a traceback",
        SERVICE + "---\n" + OPERATOR_SERVICE,
        ("(document 1)", "AIMService/chat", "spec.caching.mode: [1]"),
    ),
    Hostile(
        "operator-profile-type-list",
        "an AIMProfile's type that is a list crashed the converter the same way",
        OPERATOR_PROFILE,
        ("(document 0)", "AIMProfile/fast", "spec.type: []"),
    ),
    Hostile(
        "labels-string",
        "labels that are a string: the function reads them as a mapping (a selector's)",
        SERVICE.replace("namespace: ml}", 'namespace: ml, labels: "oops"}'),
        ("(document 0)", "AIMService's metadata.labels is a string, not a mapping"),
    ),
    Hostile(
        "labels-number",
        "labels that are a number, refused the same way",
        SERVICE.replace("namespace: ml}", "namespace: ml, labels: 3}"),
        ("AIMService's metadata.labels is a number, not a mapping",),
    ),
    Hostile(
        "label-value-number",
        "a label whose value YAML reads as a number: the API server would refuse it; the key "
        "is named, the value never (it may be a Secret's annotation)",
        SERVICE.replace("namespace: ml}", "namespace: ml, labels: {tier: 1}}"),
        ("AIMService's metadata.labels[tier] is a number, not a string", "quote the value"),
    ),
    Hostile(
        "annotations-list",
        "annotations that are a list",
        SERVICE.replace("namespace: ml}", "namespace: ml, annotations: [a]}"),
        ("AIMService's metadata.annotations is a list, not a mapping",),
    ),
    Hostile(
        "namespace-number",
        "a namespace YAML reads as a number is not a namespace until quoted",
        SERVICE.replace("namespace: ml}", "namespace: 42}"),
        ("AIMService's metadata.namespace is a number, not a string", "quote it"),
    ),
    Hostile(
        "name-list",
        "a name that is a list is no name",
        SERVICE.replace("name: chat", "name: [chat]"),
        ("AIMService's metadata.name is a list, not a string",),
    ),
]


@table(HOSTILE)
def test_hostile_shapes_exit_2_naming_the_file_and_the_field(case: Hostile, tmp_path: Path) -> None:
    """aim plan refuses each with exit 2 and a message naming the file, the document and the
    field, never a traceback."""
    path = tmp_path / "m.yaml"
    path.write_text(case.text)
    result = CliRunner().invoke(cli, ["plan", str(path), "--offline"])
    assert result.exit_code == 2, (case.reason, result.output)
    assert isinstance(result.exception, SystemExit), case.reason
    assert str(path) in result.output, case.reason
    for name in case.names:
        assert name in result.output, (case.reason, result.output)


def test_a_converter_failure_names_the_file_and_document_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the converter still fail on a shape no rule expects, the plan stops with exit 2
    naming the file and the document it failed on, and says it is the converter's bug."""

    def failing(*_: Any) -> Any:
        msg = "unhashable type: 'list'"
        raise TypeError(msg)

    monkeypatch.setattr(aim_migrate.convert, "migrate", failing)
    path = tmp_path / "m.yaml"
    path.write_text(SECRET + "---\n" + SERVICE)
    result = CliRunner().invoke(cli, ["plan", str(path), "--offline"])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert f"{path} (document 1): aim-migrate failed on it (TypeError:" in result.output
    assert "this is a bug in aim-migrate" in result.output


def test_a_null_or_empty_namespace_lands_in_default_as_with_kubectl(tmp_path: Path) -> None:
    """`namespace:` left empty (null) or "" is the default namespace, as kubectl reads it."""
    for value in ("null", '""'):
        path = tmp_path / "m.yaml"
        path.write_text(SERVICE.replace("namespace: ml", f"namespace: {value}"))
        [service] = load([path]).objects
        assert service["metadata"]["namespace"] == "default", value
