"""`scripts/render` (and `make render`) as a user calls it: what each argument renders, and the
answer to one that names nothing renderable.

The error cases run the script itself and never reach the tools, so a wrong path answers at once;
the rendering cases go through the real crossplane CLI and core, as the user's command does.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from devtools.tools import ROOT
from tests.cases import table

SCRIPT = ROOT / "scripts" / "render"
BASIC = ROOT / "examples" / "aimservice-basic"


def run(*args: str, cwd: Path = ROOT, make: bool = False) -> subprocess.CompletedProcess[str]:
    """scripts/render (or make render with variables) as typed in `cwd`."""
    cmd = (
        ["make", "--no-print-directory", "-C", str(ROOT), "render", *args]
        if make
        else [
            str(SCRIPT),
            *args,
        ]
    )
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def kinds(stdout: str) -> list[str]:
    """The kinds of the rendered stream, in order (the XR first)."""
    return [d["kind"] for d in yaml.safe_load_all(stdout) if isinstance(d, dict)]


@dataclass(frozen=True)
class Wrong:
    """An argument that names nothing renderable, and what the answer must say."""

    id: str
    reason: str
    args: tuple[str, ...]
    says: tuple[str, ...]
    files: tuple[tuple[str, str], ...] = ()


WRONG = [
    Wrong(
        "typo-in-name",
        "a misspelt example name gets the one meant and the list, not a stack trace",
        ("aimservice-basc",),
        ("no such example directory or file", "did you mean: aimservice-basic", "aimmodel-custom"),
    ),
    Wrong(
        "directory-without-xr",
        "a folder of examples is not one; the answer lists them (claims/ included)",
        ("examples/claims",),
        ("a directory without xr.yaml", "claims/aimservice-basic", "FILE=my-service.yaml"),
    ),
    Wrong(
        "two-objects-in-one-file",
        "a file with the XR and its catalog together says to split them and how",
        ("both.yaml",),
        ("holds 2 YAML documents", "--required"),
        (("both.yaml", "kind: AIMService\n---\nkind: AIMClusterModel\n"),),
    ),
    Wrong(
        "not-an-aim-kind",
        "a Deployment is no XR here; the answer names the kinds that are",
        ("deploy.yaml",),
        ("kind 'Deployment' is not an AIM kind", "AIMService", "XAIMService"),
        (("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\n"),),
    ),
    Wrong(
        "not-yaml",
        "a file that is not YAML is named with the parser's reason",
        ("broken.yaml",),
        ("broken.yaml: not YAML",),
        (("broken.yaml", "kind: [AIMService\n"),),
    ),
    Wrong(
        "missing-required-file",
        "a --required file that is not there is named before anything is built",
        (str(BASIC / "xr.yaml"), "--required", "nowhere.yaml"),
        ("--required", "nowhere.yaml: no such file"),
    ),
]


@table(WRONG)
def test_a_wrong_argument_answers_with_the_fix(case: Wrong, tmp_path: Path) -> None:
    """Exit code 2 and a message naming the problem and what to pass instead, at once."""
    for name, text in case.files:
        (tmp_path / name).write_text(text)
    proc = run(*case.args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("render: ")
    for words in case.says:
        assert words in proc.stderr, proc.stderr
    assert "[build-tools]" not in proc.stderr  # refused before building or starting anything


def test_make_render_passes_a_wrong_example_through_to_the_same_answer() -> None:
    """`make render EXAMPLE=...` is the command the README shows; its answer is the script's."""
    proc = run("EXAMPLE=aimservice-basc", make=True)
    assert proc.returncode != 0
    assert "did you mean: aimservice-basic" in proc.stderr


@pytest.mark.usefixtures("tools")
def test_a_bare_example_name_renders_that_example() -> None:
    """`EXAMPLE=aimservice-basic` means examples/aimservice-basic, its required.yaml included:
    the service resolves its model and template and composes the InferenceService."""
    proc = run("aimservice-basic", cwd=Path("/"))
    assert proc.returncode == 0, proc.stderr
    assert kinds(proc.stdout)[:2] == ["AIMService", "InferenceService"]


@pytest.mark.usefixtures("tools")
def test_a_users_own_manifest_renders_with_its_required_objects(tmp_path: Path) -> None:
    """A manifest of one's own, in a file of any name, with the catalog it names passed by
    REQUIRED= in two files (models, templates): rendered as the example it was copied from is
    (`make render FILE=... REQUIRED="a.yaml b.yaml"`)."""
    mine = tmp_path / "my-service.yaml"
    doc = yaml.safe_load((BASIC / "xr.yaml").read_text())
    doc["metadata"]["name"] = "my-chat"
    mine.write_text(yaml.safe_dump(doc))
    catalog = [d for d in yaml.safe_load_all((BASIC / "required.yaml").read_text()) if d]
    models, templates = tmp_path / "models.yaml", tmp_path / "templates.yaml"
    models.write_text(yaml.safe_dump_all([d for d in catalog if d["kind"].endswith("Model")]))
    templates.write_text(yaml.safe_dump_all([d for d in catalog if "Template" in d["kind"]]))
    proc = run(f"FILE={mine}", f"REQUIRED={models} {templates}", make=True)
    assert proc.returncode == 0, proc.stderr
    objects = [d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict)]
    assert objects[0]["metadata"]["name"] == "my-chat"
    isvc = next(o for o in objects if o["kind"] == "InferenceService")
    assert isvc["metadata"]["name"].startswith("my-chat-")


@pytest.mark.usefixtures("tools")
def test_a_users_manifest_alone_renders_what_the_function_says_is_missing(tmp_path: Path) -> None:
    """Without the catalog beside it a service still renders: no InferenceService, and the
    service Failed with a condition naming the template it could not find and the field that
    names it, rather than a harness error."""
    mine = tmp_path / "my-service.yaml"
    mine.write_text((BASIC / "xr.yaml").read_text())
    proc = run(str(mine))
    assert proc.returncode == 0, proc.stderr
    assert "InferenceService" not in kinds(proc.stdout)
    service = next(d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict))
    assert service["status"]["status"] == "Failed"
    [template] = [c for c in service["status"]["conditions"] if c["type"] == "TemplateReady"]
    assert (template["status"], template["reason"]) == ("False", "TemplateNotFound")
    assert "spec.template.name" in template["message"]
    assert "qwen3-32b-mi300x-latency-fp8" in template["message"]
