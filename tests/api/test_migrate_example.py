"""examples/migrate: old manifests, converted as a user would convert them, pass the XRDs."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from devtools.render.admission import validate_objects
from devtools.tools import ROOT, Tools
from function.rules.routepath import render_path
from tests.cases import Case, table

EXAMPLE = ROOT / "examples" / "migrate" / "old.yaml"
OLDER_CATALOG = ROOT / "examples" / "journeys" / "older-api-catalog"


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
        "older-api-catalog",
        "the journey's service routed with seed 002's route template, {.spec.model} and all",
        (OLDER_CATALOG / "03-services.yaml",),
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


OPERATOR_V1ALPHA1 = ROOT / "examples" / "migrate" / "operator-v1alpha1.yaml"
OPERATOR_V1ALPHA2 = ROOT / "examples" / "migrate" / "operator-v1alpha2.yaml"


@dataclass(frozen=True)
class OperatorExampleCase(Case):
    path: Path
    exit_code: int
    kinds: dict[str, int]
    """Kind of the converted manifests → how many."""
    not_carried: tuple[str, ...]
    """What each NOT CARRIED line of the report names, in order."""


OPERATOR_EXAMPLES = [
    OperatorExampleCase(
        "operator-v1alpha1",
        "every v1alpha1 kind the operator serves and this package has: all of it carries over "
        "(exit 0), the artifact becoming a model cache",
        OPERATOR_V1ALPHA1,
        0,
        {
            "AIMClusterRuntimeConfig": 1,
            "AIMRuntimeConfig": 1,
            "AIMClusterModel": 1,
            "AIMModel": 1,
            "AIMClusterServiceTemplate": 1,
            "AIMServiceTemplate": 1,
            "AIMService": 2,
            "AIMTemplateCache": 1,
            "AIMModelCache": 1,
            "AIMClusterModelSource": 1,
        },
        (),
    ),
    OperatorExampleCase(
        "operator-v1alpha2",
        "v1alpha2's profile path: the profile becomes a template on the model with its image, "
        "the service names both; engine arguments and the profile set have no place (exit 1)",
        OPERATOR_V1ALPHA2,
        1,
        {"AIMModel": 1, "AIMServiceTemplate": 1, "AIMService": 1, "AIMTemplateCache": 1},
        ("spec.engineArgs", "the whole AIMProfileSet"),
    ),
]


@table(OPERATOR_EXAMPLES)
def test_converted_operator_examples_pass_admission(
    tools: Tools, case: OperatorExampleCase
) -> None:
    """The AIM operator's manifests, converted as a user converts them, pass the XRDs' schemas
    and CEL rules as creations, and the report names exactly what was not carried."""
    proc, converted = migrated(case.path)
    assert proc.returncode == case.exit_code, proc.stderr
    lines = [line.strip() for line in proc.stderr.splitlines() if "NOT CARRIED" in line]
    named = tuple(line.removeprefix("NOT CARRIED: ").split(":", 1)[0] for line in lines)
    assert named == case.not_carried, (case.reason, lines)
    kinds: dict[str, int] = {}
    for doc in converted:
        assert doc["apiVersion"] == "aim.silogen.ai/v1alpha1", doc
        kinds[doc["kind"]] = kinds.get(doc["kind"], 0) + 1
    assert kinds == case.kinds, case.reason
    results = validate_objects(tools, converted)
    assert [(name, errors) for name, errors in results if errors] == [], case.reason
    assert len(results) == len(converted)


def test_operator_route_templates_render_for_the_converted_services() -> None:
    """The operator's path templates read `spec.model.name` and `spec.profile.name`; converted,
    they read `spec.model.ref` and `spec.template.name` and render the same paths."""
    _, v1 = migrated(OPERATOR_V1ALPHA1)
    [cluster_config] = [d for d in v1 if d["kind"] == "AIMClusterRuntimeConfig"]
    template = cluster_config["spec"]["routing"]["pathTemplate"]
    [chat] = [d for d in v1 if d["metadata"]["name"] == "chat"]
    assert render_path(template, chat) == "/ml-team/qwen3-32b"
    _, v2 = migrated(OPERATOR_V1ALPHA2)
    [service] = [d for d in v2 if d["kind"] == "AIMService"]
    own = service["spec"]["routing"]["pathTemplate"]
    assert render_path(own, service) == "/ml-team/qwen3-32b-fp8-mi300x"
