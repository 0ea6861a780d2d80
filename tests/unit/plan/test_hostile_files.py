"""aim plan on hostile files: one line and exit 2, or a plan; never a traceback or a stall."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from aim_migrate.manifests import MAX_DEPTH
from aim_plan.cli import cli
from tests.cases import Case, table
from tests.unit.migrate.hostile_files import (
    HOSTILE_FILES,
    LONGEST_LINE,
    OPERATOR_SERVICE,
    HostileFile,
    assert_refused,
)

JOURNEY = Path(__file__).parents[3] / "examples" / "journeys" / "custom-models"


@table(HOSTILE_FILES)
@pytest.mark.timeout(120)  # bounded time: the 7 MB string cost 28 CPU-s before the fix
def test_a_hostile_file_exits_2_with_one_line_naming_the_file_document_and_field(
    case: HostileFile, tmp_path: Path
) -> None:
    """Each file that crashed or stalled aim plan (issue 46) is refused with exit 2 and one line
    naming the file, the document and the field or YAML construct: no traceback, a user's value
    quoted cut short."""
    path = tmp_path / "m.yaml"
    path.write_bytes(case.content)
    result = CliRunner().invoke(cli, ["plan", str(path), "--offline"])
    assert_refused(result, path, case)


def test_what_the_converter_cannot_carry_is_cut_to_a_few_in_the_one_line(tmp_path: Path) -> None:
    """An operator manifest with many fields of no counterpart stops the plan in one line of
    bounded length: the first few named, the rest counted (scripts/migrate lists them all)."""
    fields = ", ".join(f"f{i}: {'v' * 100}" for i in range(50))
    path = tmp_path / "m.yaml"
    path.write_text(
        OPERATOR_SERVICE.replace(
            "spec: {model: {ref: m}}", f"spec: {{model: {{ref: m}}, {fields}}}"
        )
    )
    result = CliRunner().invoke(cli, ["plan", str(path), "--offline"])
    assert result.exit_code == 2, result.output[:2000]
    [line] = result.stderr.splitlines()
    assert "aim-migrate cannot carry AIMService/chat over: spec.f0: " in line
    assert "; and 47 more; fix the manifest" in line
    assert len(line) < LONGEST_LINE


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _chain(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"a": "x"}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@dataclass(frozen=True)
class Deepest(Case):
    kind: str
    env_at: tuple[str | int, ...]
    """Where the carrier's env list is, from the document."""


def _env_of(doc: dict[str, Any], at: tuple[str | int, ...]) -> list[Any]:
    node: Any = doc
    for step in at[:-1]:
        node = node[step]
    return node.setdefault(at[-1], [])  # type: ignore[no-any-return]


DEEPEST = [
    Deepest(
        "service-env",
        "a service's env goes into its InferenceService 4 levels deeper than written: the "
        "deepest place a field of a manifest ends up",
        "AIMService",
        ("spec", "env"),
    ),
    Deepest(
        "runtime-config-env",
        "a namespace's runtime config env reaches every service's InferenceService, as deep",
        "AIMRuntimeConfig",
        ("spec", "env"),
    ),
    Deepest(
        "model-env",
        "a model's env reaches its templates' services",
        "AIMModel",
        ("spec", "env"),
    ),
    Deepest(
        "model-source-env",
        "a custom model source's env goes into the download Job",
        "AIMService",
        ("spec", "model", "custom", "modelSources", 0, "env"),
    ),
]


@table(DEEPEST)
@pytest.mark.timeout(300)
def test_a_document_at_the_depth_bound_plans(case: Deepest, tmp_path: Path) -> None:
    """The reader's depth bound is what the rest can take: a document nested exactly to it, in
    the fields composing moves deepest (an env var's valueFrom, free-form), plans with no crash
    (at 50 levels, under the old bound of 64, the request could not be turned into protobuf)."""
    docs = [
        d for f in sorted(JOURNEY.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d
    ]
    if case.kind == "AIMRuntimeConfig":
        docs.append(
            {
                "apiVersion": "aim.silogen.ai/v1alpha1",
                "kind": "AIMRuntimeConfig",
                "metadata": {"name": "default", "namespace": "ml-team"},
                "spec": {},
            }
        )
    doc = next(
        d
        for d in docs
        if d["kind"] == case.kind and _has(d, case.env_at[:-1])  # the first that has the place
    )
    env: dict[str, Any] = {
        "name": "DEEP",
        "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}},
    }
    _env_of(doc, case.env_at).append(env)
    # The document, each step to the env list, the item and valueFrom hold the chain.
    env["valueFrom"]["deep"] = _chain(MAX_DEPTH - (len(case.env_at) + 3))
    assert max(_depth(d) for d in docs) == MAX_DEPTH
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump_all(copy.deepcopy(docs)))
    result = CliRunner().invoke(cli, ["plan", str(path), "--offline", "--gpu-node", "MI300X"])
    assert result.exit_code in {0, 1}, (case.reason, result.output[-2000:])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        case.reason,
        result.exception,
    )
    assert f"{case.kind} " in result.output


def _has(doc: dict[str, Any], at: tuple[str | int, ...]) -> bool:
    node: Any = doc
    for step in at:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, dict)
