"""aim-migrate on AIM operator manifests written inline: the kinds and fields the fixture files of
test_migrate_operator.py do not reach (model sources, profile caches, CPU profiles, a v1alpha2
service's profile overrides, the metadata the operator and the API server write)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aim_migrate.rules import collect_context, migrate
from tests.cases import Case, table

_V1 = "aim.eai.amd.com/v1alpha1"
_V2 = "aim.eai.amd.com/v1alpha2"
_MODEL: dict[str, Any] = {
    "apiVersion": _V1,
    "kind": "AIMModel",
    "metadata": {"name": "m", "namespace": "ns"},
    "spec": {"image": "img:1"},
}


@dataclass(frozen=True)
class Inline(Case):
    doc: dict[str, Any]
    kind: str | None
    """Kind of the result; None when it is left out."""
    spec: dict[str, Any] | None = None
    """The converted spec, whole; None to leave it unchecked."""
    said: tuple[str, ...] = ()
    """Text some line of the report (changes, warnings, not carried) holds."""
    not_carried: tuple[str, ...] = ()
    """What each not-carried line starts with, in order."""


CASES = [
    Inline(
        "cluster-model-source",
        "a model source keeps its registry and filters; a filter's and the spec's unknown "
        "fields are named, and the namespace goes (cluster-scoped)",
        {
            "apiVersion": _V1,
            "kind": "AIMClusterModelSource",
            "metadata": {"name": "hub", "namespace": "x"},
            "spec": {
                "registry": "docker.io",
                "filters": [{"image": "amdenterpriseai/aim-*", "exclude": ["a"], "tag": "x"}],
                "mirror": True,
            },
        },
        "AIMClusterModelSource",
        {
            "registry": "docker.io",
            "filters": [{"image": "amdenterpriseai/aim-*", "exclude": ["a"]}],
        },
        said=("metadata.namespace: dropped",),
        not_carried=("spec.filters[0].tag", "spec.mirror"),
    ),
    Inline(
        "profile-cache",
        "a profile cache becomes the template cache of the template its profile becomes; the "
        "profile scope is the template scope, and Dedicated is what a template cache is here",
        {
            "apiVersion": _V2,
            "kind": "AIMProfileCache",
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"profileName": "p1", "profileScope": "Cluster", "mode": "Dedicated"},
        },
        "AIMTemplateCache",
        {"templateName": "p1", "templateScope": "Cluster"},
        said=("spec.profileName: became spec.templateName", "spec.mode: Dedicated dropped"),
    ),
    Inline(
        "cpu-profile",
        "a CPU profile's CPU requests become the template's hardware.cpu, and its image the "
        "model of the run with that image",
        {
            "apiVersion": _V2,
            "kind": "AIMProfile",
            "metadata": {"name": "cpu", "namespace": "ns"},
            "spec": {
                "image": "img:1",
                "aimId": "x",
                "acceleratorType": "cpu",
                "resources": {"requests": {"cpu": "8"}},
            },
        },
        "AIMServiceTemplate",
        {
            "modelName": "m",
            "resources": {"requests": {"cpu": "8"}},
            "hardware": {"cpu": {"requests": "8"}},
        },
        said=("spec.acceleratorType: cpu became spec.hardware.cpu",),
    ),
    Inline(
        "cpu-profile-without-requests",
        "a CPU profile with no CPU requests cannot say what hardware it needs here, and a CPU "
        "model pins nothing: both are named",
        {
            "apiVersion": _V2,
            "kind": "AIMProfile",
            "metadata": {"name": "cpu2", "namespace": "ns"},
            "spec": {
                "image": "img:1",
                "aimId": "x",
                "acceleratorType": "cpu",
                "acceleratorModel": "epyc",
            },
        },
        "AIMServiceTemplate",
        {"modelName": "m"},
        not_carried=("spec.acceleratorModel", "spec.acceleratorType"),
    ),
    Inline(
        "service-profile-overrides",
        "a v1alpha2 service's profile overrides: their environment is appended to the "
        "service's (which wins, as here), engine arguments have no place",
        {
            "apiVersion": _V2,
            "kind": "AIMService",
            "metadata": {"name": "s", "namespace": "ns"},
            "spec": {
                "model": {"name": "m"},
                "cacheModel": True,
                "env": [{"name": "A", "value": "1"}],
                "profileOverrides": {
                    "containerEnv": [{"name": "B", "value": "2"}],
                    "engineArgs": {"x": 1},
                },
            },
        },
        "AIMService",
        {
            "model": {"ref": "m"},
            "cacheModel": True,
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        },
        said=("spec.profileOverrides.containerEnv: appended to spec.env",),
        not_carried=("spec.profileOverrides.engineArgs",),
    ),
    Inline(
        "operator-metadata",
        "what the API server and the operator wrote in metadata goes, each said; an owner "
        "reference is named Kind/name in the warning (an entry that is no object is skipped)",
        {
            "apiVersion": _V1,
            "kind": "AIMModel",
            "metadata": {
                "name": "m",
                "namespace": "ns",
                "uid": "u",
                "finalizers": ["f"],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "ownerReferences": [{"kind": "AIMClusterModelSource", "name": "hub"}, "junk"],
            },
            "spec": {"image": "img:1"},
        },
        "AIMModel",
        {"image": "img:1"},
        said=(
            "metadata.{uid}: dropped",
            "last-applied-configuration]: dropped",
            "metadata.finalizers: dropped",
            "the operator created this object for AIMClusterModelSource/hub.",
        ),
    ),
    Inline(
        "model-fields-that-now-act",
        "a model's default template and resources are carried, each with a warning that here "
        "they act where the operator's newest releases ignored them",
        {
            "apiVersion": _V1,
            "kind": "AIMModel",
            "metadata": {"name": "m2", "namespace": "ns"},
            "spec": {
                "image": "img:2",
                "defaultServiceTemplate": "t",
                "resources": {"limits": {"cpu": "1"}},
            },
        },
        "AIMModel",
        {"image": "img:2", "defaultServiceTemplate": "t", "resources": {"limits": {"cpu": "1"}}},
        said=(
            "spec.defaultServiceTemplate: carried; the operator stored it without using it",
            "spec.resources: carried; the operator's newest releases did not apply",
        ),
    ),
    Inline(
        "template-gpu-selector",
        "a template's older gpuSelector becomes hardware.gpu, its count the requests, and the "
        "report says so at the field's own path",
        {
            "apiVersion": _V1,
            "kind": "AIMServiceTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"modelName": "m", "gpuSelector": {"count": 2, "model": "MI300X"}},
        },
        "AIMServiceTemplate",
        {"modelName": "m", "hardware": {"gpu": {"requests": 2, "model": "MI300X"}}},
        said=("spec.gpuSelector: became spec.hardware.gpu (count → requests)",),
    ),
    Inline(
        "custom-model-gpu-selector",
        "a custom model's gpuSelector becomes its hardware.gpu, said at spec.model.custom",
        {
            "apiVersion": _V1,
            "kind": "AIMService",
            "metadata": {"name": "s", "namespace": "ns"},
            "spec": {
                "model": {
                    "custom": {
                        "baseImage": "img:1",
                        "gpuSelector": {"count": 1, "model": "MI300X"},
                    }
                }
            },
        },
        "AIMService",
        said=("spec.model.custom.gpuSelector: became spec.model.custom.hardware.gpu",),
    ),
    Inline(
        "no-kind",
        "an operator manifest naming no kind is left out, and the report says it has none",
        {"apiVersion": _V1, "metadata": {"name": "nokind"}},
        None,
        not_carried=("the whole (no kind): an operator kind this converter does not know",),
    ),
]


@table(CASES)
def test_inline_operator_manifests_convert(case: Inline) -> None:
    """Each manifest, converted in a run with the model `m` of image `img:1`, becomes the kind
    and spec the row says, and the report names what the row says."""
    m = migrate(case.doc, collect_context([_MODEL, case.doc]))
    assert m.dropped == (case.kind is None)
    manifest = m.manifest
    assert isinstance(manifest, dict)
    if case.kind is not None:
        assert manifest["kind"] == case.kind
        assert manifest["apiVersion"] == "aim.silogen.ai/v1alpha1"
    if case.spec is not None:
        assert manifest["spec"] == case.spec
    report = [*m.changes, *m.warnings, *m.not_carried]
    for text in case.said:
        assert any(text in line for line in report), (text, report)
    assert len(m.not_carried) == len(case.not_carried), m.not_carried
    for line, start in zip(m.not_carried, case.not_carried, strict=True):
        assert line.startswith(start), (line, start)
    metadata = manifest.get("metadata")
    assert isinstance(metadata, dict)
    assert not {"uid", "finalizers", "ownerReferences"} & set(metadata)
