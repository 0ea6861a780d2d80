"""aim-migrate: old-generation manifests become canonical ones, with an honest report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from aim_migrate.cli import cli
from aim_migrate.rules import Context, collect_context, migrate
from function.rules.routepath import render_path
from tests.cases import Case, table

V = "aim.silogen.ai/v1alpha1"


def old(kind: str, spec: dict[str, Any], name: str = "x", namespace: str | None = None) -> Any:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": V, "kind": kind, "metadata": meta, "spec": spec}


def spec_of(doc: Any) -> Any:
    return doc["spec"]


def test_first_generation_image_becomes_a_cluster_model_and_its_id_maps_references() -> None:
    """Seed 000's image becomes a cluster model, and references to its id follow."""
    image = old("AIMImage", {"modelId": "meta/llama:1.1", "image": "ghcr.io/x/llama:1"}, "llama")
    service = old("AIMService", {"aimModelId": "meta/llama:1.1"}, "chat", "ml")
    context = collect_context([image, service])

    model = migrate(image, context)
    assert model.manifest["kind"] == "AIMClusterModel"  # type: ignore[index,call-overload]
    # An AIMImage read no labels unless asked; the model says so, since models do by default.
    assert spec_of(model.manifest) == {
        "image": "ghcr.io/x/llama:1",
        "discovery": {"enabled": False},
    }
    assert model.not_carried == []

    svc = migrate(service, context)
    assert spec_of(svc.manifest) == {"model": {"ref": "llama"}}
    assert svc.not_carried == []


def test_second_generation_namespaced_image_becomes_a_namespaced_model() -> None:
    """Seed 001's namespaced image becomes a namespaced model."""
    m = migrate(old("AIMImage", {"image": "ghcr.io/x/y:1"}, "y", "ml"), Context())
    assert m.manifest["kind"] == "AIMModel"  # type: ignore[index,call-overload]
    assert m.manifest["metadata"] == {"name": "y", "namespace": "ml"}  # type: ignore[index,call-overload]


def test_a_model_id_that_cannot_be_mapped_is_reported() -> None:
    """A model id that cannot be mapped is reported, not guessed."""
    m = migrate(old("AIMService", {"aimModelId": "meta/llama:1.1"}, "chat", "ml"), Context())
    assert spec_of(m.manifest) == {"model": {"ref": "meta/llama:1.1"}}
    [problem] = m.not_carried
    assert problem.startswith("spec.aimModelId: 'meta/llama:1.1' is a model id, not a model name")


def test_service_fields_of_the_second_generation() -> None:
    """Seed 001's service fields map to the canonical API."""
    m = migrate(
        old(
            "AIMService",
            {
                "aimImageName": "llama",
                "templateRef": "llama-latency",
                "cacheModel": True,
                "overrides": {"precision": "fp8", "gpuSelector": {"count": 2, "model": "MI300X"}},
                "routing": {"enabled": True, "routeTemplate": "/{.spec.aimImageName}/x"},
            },
            "chat",
            "ml",
        ),
        Context(),
    )
    assert spec_of(m.manifest) == {
        "cacheModel": True,
        "overrides": {"precision": "fp8", "hardware": {"gpu": {"requests": 2, "model": "MI300X"}}},
        "routing": {"enabled": True, "pathTemplate": "/{.spec.model.ref}/x"},
        "model": {"ref": "llama"},
        "template": {"name": "llama-latency"},
    }
    assert m.not_carried == []


SEED_002_ROUTE = "/{.metadata.namespace}/{.metadata.labels['team']}/{.spec.model}/"
"""Seed 002's route template, as it shows it on a service (seed 001 on a runtime config)."""


@dataclass(frozen=True)
class RouteCase(Case):
    """An old manifest's route template and what migration makes of it."""

    kind: str
    spec: dict[str, Any]
    want_template: str
    want_path: str | None = None
    """The path the migrated template renders for the migrated service (None: not checked)."""
    warning: str | None = None
    unmapped: str | None = None
    changes: tuple[str, ...] = field(default=())


def routed(template: str, **spec: Any) -> dict[str, Any]:
    return {**spec, "routing": {"enabled": True, "routeTemplate": template}}


ROUTE_CASES = [
    RouteCase(
        "seed-002-service",
        "seed 002's template: {.spec.model} meant the model's name, which is spec.model.ref now; "
        "left as it was it finds an object and the service is Degraded (RouteTemplateInvalid)",
        "AIMService",
        routed(SEED_002_ROUTE, aimImageName="meta-llama-3-8b-instruct"),
        "/{.metadata.namespace}/{.metadata.labels['team']}/{.spec.model.ref}/",
        want_path="/ml/nlp/meta-llama-3-8b-instruct",
        changes=("spec.routing.pathTemplate: JSONPath {.spec.model} now reads {.spec.model.ref}",),
    ),
    RouteCase(
        "seed-001-runtime-config",
        "a runtime config serves services of every model form: it gets the name (what the old "
        "generations' services all had) and a warning that services by image or weights fail",
        "AIMRuntimeConfig",
        routed(SEED_002_ROUTE),
        "/{.metadata.namespace}/{.metadata.labels['team']}/{.spec.model.ref}/",
        warning="spec.routing.pathTemplate: {.spec.model} became {.spec.model.ref}",
    ),
    RouteCase(
        "service-by-image",
        "a service that already names its model by image reads the image there",
        "AIMService",
        routed("/{.spec.model}", model={"image": "ghcr.io/x/llama:1"}),
        "/{.spec.model.image}",
        want_path="/ghcr.io%2Fx%2Fllama%3A1",
    ),
    RouteCase(
        "service-by-weights",
        "custom weights have no name to put in a path: reported, not guessed",
        "AIMService",
        routed("/{.spec.model}", model={"custom": {"modelSources": [{"sourceUri": "hf://a/b"}]}}),
        "/{.spec.model}",
        unmapped="spec.routing.pathTemplate: {.spec.model} names the model",
    ),
    RouteCase(
        "moved-fields",
        "every moved service field, in both JSONPath spellings, reads its new place and renders "
        "what it rendered before",
        "AIMService",
        routed(
            "/{.spec.aimImageName}/{.spec['templateRef']}/{.spec.configRef}"
            "/{.spec.overrides.gpuSelector.count}/{.spec.overrides.gpuSelector.model}",
            aimImageName="llama",
            templateRef="llama-latency",
            configRef="gpu",
            overrides={"gpuSelector": {"count": 2, "model": "MI300X"}},
        ),
        "/{.spec.model.ref}/{.spec.template.name}/{.spec.runtimeConfigName}"
        "/{.spec.overrides.hardware.gpu.requests}/{.spec.overrides.hardware.gpu.model}",
        want_path="/llama/llama-latency/gpu/2/mi300x",
    ),
    RouteCase(
        "model-id",
        "seed 000's model id becomes the model's name: the path changes, and the report says so",
        "AIMService",
        routed("/{.spec.aimModelId}", aimModelId="llama"),
        "/{.spec.model.ref}",
        want_path="/llama",
        warning="spec.routing.pathTemplate: {.spec.aimModelId} rendered the model id",
    ),
    RouteCase(
        "canonical-untouched",
        "paths that already read canonical fields, metadata or status are left as written",
        "AIMService",
        routed(
            "/{.metadata.labels.team}/{.spec.model.ref}/{.status.conditions[0].type}",
            aimImageName="llama",
        ),
        "/{.metadata.labels.team}/{.spec.model.ref}/{.status.conditions[0].type}",
    ),
    RouteCase(
        "unknown-field",
        "a field the canonical AIMService lacks is reported with the field, not left to fail on "
        "the cluster",
        "AIMService",
        routed("/{.metadata.name}/{.spec.workloadId}", aimImageName="llama"),
        "/{.metadata.name}/{.spec.workloadId}",
        unmapped="spec.routing.pathTemplate: {.spec.workloadId} reads .spec.workloadId",
    ),
    RouteCase(
        "unreadable",
        "an expression that does not start with a field path cannot be checked: reported",
        "AIMClusterRuntimeConfig",
        routed("/{..name}"),
        "/{..name}",
        unmapped="spec.routing.pathTemplate: {..name} does not start with a field path",
    ),
]


@table(ROUTE_CASES)
def test_route_templates_read_the_canonical_fields(case: RouteCase) -> None:
    """A migrated route template renders on the migrated service, or migrate says why not."""
    m = migrate(old(case.kind, case.spec, "chat", "ml"), Context())
    manifest: Any = m.manifest
    assert manifest["spec"]["routing"]["pathTemplate"] == case.want_template, case.reason
    assert "routeTemplate" not in manifest["spec"]["routing"]
    for change in case.changes:
        assert change in m.changes
    if case.warning:
        [warning] = m.warnings
        assert warning.startswith(case.warning), warning
    else:
        assert m.warnings == []
    if case.unmapped:
        [problem] = m.not_carried
        assert problem.startswith(case.unmapped), problem
    else:
        assert m.not_carried == []
    if case.want_path is not None:
        manifest["metadata"]["labels"] = {"team": "NLP"}
        assert render_path(manifest["spec"]["routing"]["pathTemplate"], manifest) == case.want_path


def test_unmapped_route_paths_and_warnings_are_in_the_quiet_report(tmp_path: Path) -> None:
    """The report names the manifest and field of a route path migrate could not map or that
    changed meaning, even with --quiet, and only what was not carried fails the run."""
    warned = tmp_path / "warned.yaml"
    warned.write_text(yaml.safe_dump(old("AIMRuntimeConfig", routed(SEED_002_ROUTE), "t", "ml")))
    result = CliRunner().invoke(cli, ["--quiet", str(warned)])
    assert result.exit_code == 0, result.output
    header, warning = result.stderr.splitlines()
    assert header == "AIMRuntimeConfig/t"
    assert warning.startswith(
        "  WARNING: spec.routing.pathTemplate: {.spec.model} became {.spec.model.ref}"
    )
    assert "spec.model.image" in warning

    broken = tmp_path / "broken.yaml"
    spec = routed("/{.spec.workloadId}", aimImageName="llama")
    broken.write_text(yaml.safe_dump(old("AIMService", spec, "chat", "ml")))
    result = CliRunner().invoke(cli, ["--quiet", str(broken)])
    assert result.exit_code == 1
    header, problem = result.stderr.splitlines()
    assert header == "AIMService/chat"
    assert problem.startswith(
        "  NOT CARRIED: spec.routing.pathTemplate: {.spec.workloadId} reads .spec.workloadId"
    )


def test_cluster_config_keeps_the_first_generations_route_default_and_reports_credentials() -> None:
    """Seed 000's routing default survives; its credentials are reported for the user to move."""
    m = migrate(
        old(
            "AIMClusterConfig",
            {
                "routing": {"gateway": {"name": "gw"}},
                "cacheStorageClassName": "rwx",
                "imagePullSecrets": [{"name": "pull"}],
            },
            "default",
        ),
        Context(),
    )
    assert m.manifest["kind"] == "AIMClusterRuntimeConfig"  # type: ignore[index,call-overload]
    assert spec_of(m.manifest) == {
        "routing": {"gatewayRef": {"name": "gw"}, "enabled": True},
        "defaultStorageClassName": "rwx",
    }
    [problem] = m.not_carried
    assert problem.startswith('spec.imagePullSecrets: [{"name": "pull"}]')
    assert "AIMRuntimeConfig" in problem


def test_route_creation_turned_off_in_the_first_generation_stays_off() -> None:
    """Routing turned off in seed 000 stays off after migration."""
    m = migrate(old("AIMClusterConfig", {"routing": {"autoCreateRoute": False}}), Context())
    assert spec_of(m.manifest) == {"routing": {"enabled": False}}


def test_template_cache_and_model_cache() -> None:
    """Cache manifests migrate to the canonical API."""
    tc = migrate(old("AIMTemplateCache", {"templateRef": "t"}, "t", "ml"), Context())
    assert spec_of(tc.manifest) == {"templateName": "t"}
    mc = migrate(old("ModelCache", {"sourceUri": "s3://b/k"}, "c", "ml"), Context())
    assert mc.manifest["kind"] == "AIMModelCache"  # type: ignore[index,call-overload]


def test_status_is_dropped_and_other_objects_pass_through() -> None:
    """Status is dropped and objects that are not AIM's pass through untouched."""
    with_status = old("AIMServiceTemplate", {"modelName": "llama"}, "t", "ml")
    with_status["status"] = {"status": "Available"}
    m = migrate(with_status, Context())
    assert "status" not in m.manifest  # type: ignore[operator]
    assert m.changes == ["status: dropped; the function writes status"]

    secret: Any = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    assert migrate(secret, Context()).manifest == secret
    assert migrate(secret, Context()).changes == []


def test_cli_exit_codes_and_report(tmp_path: Path) -> None:
    """aim-migrate's exit code and report tell what happened."""
    clean = tmp_path / "clean.yaml"
    clean.write_text(yaml.safe_dump(old("AIMTemplateCache", {"templateRef": "t"}, "t", "ml")))
    result = CliRunner().invoke(cli, [str(clean)])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout)["spec"] == {"templateName": "t"}
    assert "changed: spec.templateRef: renamed spec.templateName" in result.stderr

    lossy = tmp_path / "lossy.yaml"
    lossy.write_text(yaml.safe_dump(old("AIMService", {"aimModelId": "a/b:1"}, "s", "ml")))
    result = CliRunner().invoke(cli, ["--quiet", str(lossy)])
    assert result.exit_code == 1
    assert "NOT CARRIED: spec.aimModelId" in result.stderr
    assert "changed:" not in result.stderr

    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("a: [unclosed\n")
    result = CliRunner().invoke(cli, [str(garbage)])
    assert result.exit_code == 2
    assert "garbage.yaml: not YAML" in result.stderr


def test_cli_refuses_a_missing_file() -> None:
    """aim-migrate refuses a missing file with a message."""
    result = CliRunner().invoke(cli, ["nope.yaml"])
    assert result.exit_code == 2
    assert "nope.yaml" in result.stderr


@dataclass(frozen=True)
class ImageDiscoveryCase(Case):
    spec: dict[str, Any]
    want: dict[str, Any]


IMAGE_DISCOVERY_CASES = [
    ImageDiscoveryCase(
        "unset",
        "seed 001: an AIMImage's discovery is disabled by default; the model must stay so",
        {"image": "i:1"},
        {"enabled": False},
    ),
    ImageDiscoveryCase(
        "block-without-enabled",
        "a discovery block with only autoCreateTemplates still meant disabled",
        {"image": "i:1", "discovery": {"autoCreateTemplates": False}},
        {"autoCreateTemplates": False, "enabled": False},
    ),
    ImageDiscoveryCase(
        "asked",
        "an image that asked for discovery keeps it",
        {"image": "i:1", "discovery": {"enabled": True}},
        {"enabled": True},
    ),
]


@table(IMAGE_DISCOVERY_CASES)
def test_an_image_keeps_its_discovery_switch_as_it_was(case: ImageDiscoveryCase) -> None:
    """Converted images mean what they meant: discovery only where the AIMImage asked for it."""
    model = migrate(old("AIMImage", case.spec, "m", "ml"), collect_context([]))
    assert spec_of(model.manifest)["discovery"] == case.want, case.reason
