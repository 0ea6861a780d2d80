"""examples/migrate: old manifests, converted as a user would convert them, pass the XRDs."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from devtools.admission import validate_objects
from devtools.render import ROOT, Tools
from function.rules.routepath import render_path
from tests.cases import Case, table

EXAMPLE = ROOT / "examples" / "migrate" / "old.yaml"
SEED_002 = ROOT / "examples" / "journeys" / "seed002-catalog"


def migrated(*paths: Path) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """`scripts/migrate` run on `paths` as a user runs it, and the manifests it wrote."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "migrate"), *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, list(yaml.safe_load_all(proc.stdout))


def test_migrated_example_validates_and_reports_what_it_dropped(tools: Tools) -> None:
    """A migrated example passes admission, and the report lists what migration dropped."""
    proc, converted = migrated(EXAMPLE)
    # Exit 1: the cluster config's pull secrets have no canonical place, and the report says so.
    assert proc.returncode == 1, proc.stderr
    not_carried = [line for line in proc.stderr.splitlines() if "NOT CARRIED" in line]
    assert len(not_carried) == 1
    assert "spec.imagePullSecrets" in not_carried[0]
    # The runtime config's route template reads the model's name, which only services that name
    # their model by ref have: the report warns of it.
    [warning] = [line for line in proc.stderr.splitlines() if "WARNING" in line]
    assert "{.spec.model} became {.spec.model.ref}" in warning

    old_kinds = [d["kind"] for d in yaml.safe_load_all(EXAMPLE.read_text())]
    assert len(converted) == len(old_kinds)
    assert {d["kind"] for d in converted} == {
        "AIMClusterRuntimeConfig",
        "AIMRuntimeConfig",
        "AIMClusterModel",
        "AIMClusterServiceTemplate",
        "AIMModelCache",
        "AIMTemplateCache",
        "AIMService",
    }
    results = validate_objects(tools, converted)
    assert [(name, errors) for name, errors in results if errors] == []
    assert len(results) == len(converted)


def _path_template(service: dict[str, Any], configs: list[dict[str, Any]]) -> str:
    """The template the function renders: the service's own, else its runtime config's."""
    own = (service["spec"].get("routing") or {}).get("pathTemplate")
    if own:
        return str(own)
    name = service["spec"].get("runtimeConfigName", "default")
    [config] = [
        c
        for c in configs
        if c["metadata"]["name"] == name
        and c["metadata"].get("namespace") == service["metadata"]["namespace"]
    ]
    return str(config["spec"]["routing"]["pathTemplate"])


@dataclass(frozen=True)
class RoutedCase(Case):
    paths: tuple[Path, ...]
    want: dict[str, str]
    """Service name → the path the function renders for it."""


ROUTED_CASES = [
    RoutedCase(
        "examples-migrate",
        "seed 001's runtime config template ({.spec.model}) serves a seed 000 service; a seed "
        "001 service's own template reads spec.aimImageName",
        (EXAMPLE,),
        {
            "chat": "/ml-team/nlp/llama-3-1-8b-instruct",
            "chat-dev": "/ml-team/llama-3-1-8b-instruct/chat-dev",
        },
    ),
    RoutedCase(
        "seed002-catalog",
        "the journey's service routed with seed 002's route template, {.spec.model} and all",
        (SEED_002 / "03-services.yaml",),
        {"llama-research": "/ml-research/research/meta-llama-3-8b-instruct-dev"},
    ),
]


@table(ROUTED_CASES)
def test_migrated_route_templates_render_for_their_services(case: RoutedCase) -> None:
    """The old route templates (seed 001's and seed 002's `{.spec.model}` among them) render
    for the migrated services as the function renders them: a fragment left pointing at a moved
    field would make the service Degraded with RouteTemplateInvalid."""
    paths, want = case.paths, case.want
    _, converted = migrated(*paths)
    configs = [d for d in converted if d["kind"] == "AIMRuntimeConfig"]
    services = [d for d in converted if d["kind"] == "AIMService"]
    routed = {
        s["metadata"]["name"]: render_path(_path_template(s, configs), s)
        for s in services
        if s["metadata"]["name"] in want
    }
    assert routed == want, case.reason
