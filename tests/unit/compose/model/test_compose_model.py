"""AIMModel / AIMClusterModel composer: metadata sources, templates, status, and one inspection."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.api.meta import Kind
from function.compose.model import compose_model
from function.kube.contract import Composition, Inspect, Observed
from function.registry import reference
from function.registry.inspect import (
    FailureKind,
    Inspection,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.server.fn import FunctionRunner
from tests.cases import Case, table
from tests.unit import loop
from tests.unit.columns import column_value

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
IMAGE = "registry.example.com/amd/aim-qwen-qwen3-32b:0.8.5"
DIGEST = "sha256:" + "ab" * 32
DEPLOYMENTS = (
    "[{'gpuModel': 'MI300X', 'gpuCount': 1, 'precision': 'fp8', 'metric': 'latency'},"
    " {'gpuModel': 'MI325X', 'gpuCount': 8, 'precision': 'fp16', 'metric': 'throughput'}]"
)
LABELS = {
    "com.amd.aim.model.canonicalName": "Qwen/Qwen3-32B",
    "com.amd.aim.model.recommendedDeployments": DEPLOYMENTS,
}


def model(kind: str = "AIMModel", status: dict[str, Any] | None = None, **spec: Any) -> Any:
    meta: dict[str, Any] = {"name": "qwen3", "uid": "uid-qwen3"}
    if kind == "AIMModel":
        meta["namespace"] = NS
    # No spec.discovery: discovery is on unless a model turns it off (seed 004).
    body: dict[str, Any] = {"image": IMAGE, **spec}
    out: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": meta, "spec": body}
    if status is not None:
        out["status"] = status
    return out


def secret(name: str = "creds") -> Any:
    auth = {"auths": {"registry.example.com": {"username": "u", "password": "p4ss"}}}
    data = base64.b64encode(json.dumps(auth).encode()).decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": name, "namespace": NS},
        "data": {".dockerconfigjson": data},
    }


def tree(value: object) -> Any:
    """A manifest as untyped nested data, for assertions."""
    return value


def compose(xr: Any, pool: list[Any] | None = None, **observed: Any) -> Composition:
    return loop.reconcile(compose_model, Observed(xr, **observed), pool or [])


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def condition_message(comp: Composition, ctype: str) -> str:
    return next(c.message for c in comp.conditions if c.type == ctype)


def inspected(image: str = IMAGE, labels: dict[str, str] | None = None) -> Inspection:
    return Inspection(image, DIGEST, LABELS if labels is None else labels, ("aim-runtime",))


def test_discovery_asks_for_the_image_with_the_pull_secret_credential() -> None:
    """The registry is asked with the model's pull secret; the password never shows in a repr."""
    xr = model(imagePullSecrets=[{"name": "creds"}])
    asked = loop.run(compose_model, Observed(xr), [secret()])

    assert isinstance(asked, Inspect)
    request = asked.request
    assert request.reference.registry == "registry.example.com"
    assert request.credential is not None
    assert request.credential.username == "u"
    assert "p4ss" not in repr(request)


def test_an_inspection_becomes_one_template_per_recommended_deployment() -> None:
    """Each deployment the image recommends becomes one template, recorded in status."""
    comp = compose(model(), inspection=inspected())

    names = sorted(tree(r.manifest)["metadata"]["name"] for r in comp.resources.values())
    assert len(names) == 2
    assert all(n.startswith("registry-example-com-amd-aim-") for n in names)
    assert "-1x-mi300x-lat-fp8-" in names[0]
    assert "-8x-mi325x-thr-fp16-" in names[1]
    tpl = tree(next(r.manifest for r in comp.resources.values() if "mi325x" in str(r.manifest)))
    assert tpl["kind"] == "AIMServiceTemplate"
    assert tpl["metadata"]["namespace"] == NS
    assert tpl["spec"]["hardware"] == {
        "gpu": {"requests": 8, "model": "MI325X", "resourceName": "amd.com/gpu"}
    }
    assert comp.status["imageDigest"] == DIGEST
    assert comp.status["inspectedImage"] == IMAGE
    assert comp.status["imageEntrypoint"] == ["aim-runtime"]
    assert tree(comp.status)["imageMetadata"]["model"]["canonicalName"] == "Qwen/Qwen3-32B"
    assert conditions(comp)["TemplatesReady"] == ("False", "TemplatesProgressing")
    assert comp.status["status"] == "Progressing"


def test_a_cluster_model_creates_cluster_templates() -> None:
    """A catalog model's templates are catalog templates."""
    comp = compose(model("AIMClusterModel"), inspection=inspected())

    kinds = {r.manifest["kind"] for r in comp.resources.values()}
    assert kinds == {"AIMClusterServiceTemplate"}
    assert all("namespace" not in tree(r.manifest)["metadata"] for r in comp.resources.values())


def test_stored_labels_for_the_same_image_are_reused_without_asking() -> None:
    """An image read once is not read again on every reconcile."""
    stored = {"inspectedImage": IMAGE, "imageDigest": DIGEST, "imageLabels": LABELS}
    xr = model(status=stored)

    assert not isinstance(loop.run(compose_model, Observed(xr), []), Inspect)
    assert len(compose(xr).resources) == 2


def test_a_changed_image_is_inspected_again() -> None:
    """A new image is read afresh, not confused with the old one's labels."""
    stored = {"inspectedImage": "registry.example.com/amd/old:1", "imageLabels": LABELS}
    xr = model(status=stored)

    asked = loop.run(compose_model, Observed(xr), [])
    assert isinstance(asked, Inspect)
    assert asked.request.image == IMAGE


@dataclass(frozen=True)
class RegistryFailureCase(Case):
    kind: FailureKind
    state: str


REGISTRY_FAILURE_CASES = [
    RegistryFailureCase(
        "unauthorized",
        "retrying will not help until someone fixes a secret",
        FailureKind.UNAUTHORIZED,
        "Failed",
    ),
    RegistryFailureCase(
        "not-found",
        "retrying will not help until someone fixes the image",
        FailureKind.NOT_FOUND,
        "Failed",
    ),
    RegistryFailureCase(
        "timeout",
        "a slow registry may answer later: degraded, not failed",
        FailureKind.TIMEOUT,
        "Degraded",
    ),
    RegistryFailureCase(
        "unreachable", "a registry down now may be up later", FailureKind.UNREACHABLE, "Degraded"
    ),
]


@table(REGISTRY_FAILURE_CASES)
def test_registry_failures_are_conditions_with_the_registrys_words(
    case: RegistryFailureCase,
) -> None:
    """A registry failure is a condition with the registry's own words, retried later."""
    kind, state = case.kind, case.state
    failure = RegistryFailure(IMAGE, kind, "the registry's own words")
    comp = compose(model(), inspection=failure)

    # Seed 004's one failure reason; the specific cause leads the message.
    assert conditions(comp)["MetadataExtracted"] == ("False", "MetadataExtractionFailed")
    message = condition_message(comp, "MetadataExtracted")
    assert message.startswith(f"{kind.value}: ")
    assert "registry.example.com: the registry's own words" in message
    assert comp.status["status"] == state, case.reason
    assert comp.resources == {}
    assert comp.ttl_seconds == 60  # asked again a minute later


@dataclass(frozen=True)
class RefusedCase(Case):
    secrets: bool
    fix: str


REFUSED_CASES = [
    RefusedCase(
        "wrong-login",
        "a login was sent and refused: the secret's user name or password is what to check",
        secrets=True,
        fix="check the login for registry.example.com in the pull secrets (spec.imagePullSecrets",
    ),
    RefusedCase(
        "no-login",
        "nothing was sent: a pull secret with a login for the registry is what is missing",
        secrets=False,
        fix="no pull secret has a login for registry.example.com; add one to spec.imagePullSecrets",
    ),
]


@table(REFUSED_CASES)
def test_a_refusal_names_the_fix_for_the_login_sent_or_missing(case: RefusedCase) -> None:
    """RegistryUnauthorized says, after the registry's words, what the user fixes."""
    refused = RegistryFailure(IMAGE, FailureKind.UNAUTHORIZED, "401 Unauthorized")
    xr = model(imagePullSecrets=[{"name": "creds"}]) if case.secrets else model()
    comp = compose(xr, [secret()] if case.secrets else [], inspection=refused)

    message = condition_message(comp, "MetadataExtracted")
    assert message.startswith("RegistryUnauthorized: registry registry.example.com: 401 ")
    assert case.fix in message, case.reason
    assert "p4ss" not in message


def test_an_answer_for_another_image_is_not_taken() -> None:
    """Labels read for another image are never applied to this one."""
    comp = compose(model(), inspection=inspected(image="registry.example.com/amd/other:1"))

    assert conditions(comp)["MetadataExtracted"] == ("False", "InspectingImage")


def test_unparseable_deployments_fail_naming_the_label() -> None:
    """A deployments label that is not JSON fails naming the label."""
    comp = compose(model(), inspection=inspected(labels={LABEL: "[{gpuModel: MI300X"}))

    assert conditions(comp)["MetadataExtracted"] == ("False", "MetadataExtractionFailed")
    assert condition_message(comp, "MetadataExtracted").startswith("ImageLabelsInvalid: ")
    assert comp.status["status"] == "Failed"
    assert comp.status["imageLabels"] == {LABEL: "[{gpuModel: MI300X"}


LABEL = "com.amd.aim.model.recommendedDeployments"
NAMED_KEY = "com.amd.aim.model.canonicalName"
NAMED = {NAMED_KEY: "Qwen/Qwen3-32B"}


def test_a_deployment_with_an_unknown_precision_is_skipped_and_said() -> None:
    """A deployment the API cannot express is skipped, and the model says so."""
    labels = {
        **NAMED,
        LABEL: "[{'gpuModel':'MI300X','gpuCount':1,'precision':'fp3','metric':'latency'}]",
    }
    comp = compose(model(), inspection=inspected(labels=labels))

    assert comp.resources == {}
    assert conditions(comp)["TemplatesReady"] == ("False", "RecommendedDeploymentSkipped")
    assert comp.status["status"] == "Degraded"


def test_auto_create_off_creates_nothing_from_the_labels() -> None:
    """autoCreateTemplates false creates no templates from the labels."""
    xr = model(discovery={"enabled": True, "autoCreateTemplates": False})
    comp = compose(xr, inspection=inspected())

    assert comp.resources == {}
    assert conditions(comp)["TemplatesReady"] == ("True", "NoTemplatesExpected")
    assert comp.status["status"] == "Ready"


def test_a_missing_pull_secret_fails_naming_it() -> None:
    """A pull secret that does not exist fails with its name and how to create it."""
    comp = compose(model(imagePullSecrets=[{"name": "absent"}]))

    assert conditions(comp)["MetadataExtracted"] == ("False", "MetadataExtractionFailed")
    assert condition_message(comp, "MetadataExtracted").startswith("SecretNotFound: ")
    assert "'absent'" in condition_message(comp, "MetadataExtracted")


def test_a_pull_secret_of_the_wrong_type_is_explained() -> None:
    """A pull secret that is not a docker config is explained, not used."""
    opaque = {**secret(), "type": "Opaque"}
    comp = compose(model(imagePullSecrets=[{"name": "creds"}]), [opaque])

    assert conditions(comp)["MetadataExtracted"] == ("False", "MetadataExtractionFailed")
    assert condition_message(comp, "MetadataExtracted").startswith("SecretInvalid: ")
    assert "kubernetes.io/dockerconfigjson" in condition_message(comp, "MetadataExtracted")


def _tpl(name: str, status: str | None) -> Any:
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"modelName": "qwen3"},
    }
    if status:
        out["status"] = {"status": status}
    return out


@dataclass(frozen=True)
class TemplatesCase(Case):
    statuses: list[str]
    want: tuple[str, str]


TEMPLATES_CASES = [
    TemplatesCase(
        "all-ready",
        "every template serves",
        ["Available", "Available"],
        ("Ready", "AllTemplatesReady"),
    ),
    TemplatesCase(
        "some-ready",
        "one template that serves is enough for a Ready model",
        ["Available", "NotAvailable"],
        ("Ready", "SomeTemplatesReady"),
    ),
    TemplatesCase(
        "none-available",
        "nothing fits this cluster: degraded, not failed",
        ["NotAvailable", "NotAvailable"],
        ("Degraded", "NoTemplatesAvailable"),
    ),
    TemplatesCase(
        "all-failed",
        "only when no template can work is the model Failed",
        ["Failed", "Degraded"],
        ("Failed", "AllTemplatesFailed"),
    ),
    TemplatesCase(
        "some-failed",
        "a failed template beside a working one degrades the model",
        ["Available", "Failed"],
        ("Degraded", "SomeTemplatesDegraded"),
    ),
    TemplatesCase(
        "progressing",
        "a template still resolving keeps the model progressing",
        ["Available", "Progressing"],
        ("Progressing", "TemplatesProgressing"),
    ),
]


@table(TEMPLATES_CASES)
def test_the_model_follows_its_templates(case: TemplatesCase) -> None:
    """The model's headline follows its templates' states."""
    xr = model(discovery={"enabled": False})
    pool = [_tpl(f"t{i}", s) for i, s in enumerate(case.statuses)]
    comp = compose(xr, pool)

    got = (comp.status["status"], conditions(comp)["TemplatesReady"][1])
    assert got == case.want, case.reason
    assert comp.status["templates"] == 2


def test_a_template_whose_deployment_left_the_labels_is_kept() -> None:
    """A template services may use survives its deployment leaving the image's labels."""
    first = compose(model(), inspection=inspected())
    observed = {
        k: {**v.manifest, "status": {"status": "Available"}} for k, v in first.resources.items()
    }
    fewer = {**NAMED, LABEL: DEPLOYMENTS.split("},", maxsplit=1)[0] + "}]"}
    comp = compose(model(), inspection=inspected(labels=fewer), resources=observed)

    assert set(comp.resources) == set(first.resources)


def test_custom_models_get_templates_from_their_spec_and_no_inspection() -> None:
    """A custom model's templates come from its spec; its image is never inspected."""
    xr = model(
        image="amdenterpriseai/aim-base:0.9",
        modelSources=[{"modelId": "custom-model-test/w", "sourceUri": "hf://org/w"}],
        custom={
            "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
            "templates": [
                {"profile": {"precision": "fp16", "metric": "latency"}},
                {"name": "multi-gpu", "hardware": {"gpu": {"requests": 2}}},
            ],
        },
    )
    xr["metadata"]["name"] = "custom-model-test"
    comp = compose(xr)

    assert not isinstance(loop.run(compose_model, Observed(xr), []), Inspect)
    tpls = {tree(r.manifest)["metadata"]["name"]: tree(r.manifest) for r in comp.resources.values()}
    assert "custom-model-test-custom-multi-gpu-mi300x-e999d587" in tpls  # the operator's name
    multi = tpls["custom-model-test-custom-multi-gpu-mi300x-e999d587"]
    assert multi["spec"]["hardware"]["gpu"]["requests"] == 2
    assert multi["spec"]["hardware"]["gpu"]["model"] == "MI300X"
    assert multi["spec"]["modelSources"][0]["sourceUri"] == "hf://org/w"
    assert multi["metadata"]["labels"]["aim.silogen.ai/template.alias"] == "multi-gpu"
    assert comp.status["sourceType"] == "Custom"
    assert conditions(comp)["MetadataExtracted"] == ("True", "CustomModel")


class CountingInspector:
    """A fake registry (no network): answers every image with LABELS and counts the calls."""

    def __init__(self) -> None:
        self.calls: list[InspectionRequest] = []

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        self.calls.append(request)
        return inspected(request.image)


def _request(xr: Any) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    resource.update(req.observed.composite, xr)
    # The first call of a reconcile asks for everything (the runtime config is not known yet).
    first = compose_model(Observed(xr))
    assert isinstance(first, Composition)
    for name, items in loop.answer(first, []).items():
        req.required_resources[name].SetInParent()
        for item in items:
            resource.update(req.required_resources[name].items.add(), item)
    return req


def test_the_registry_is_asked_once_per_image_across_reconciles() -> None:
    """Through the gRPC servicer: the status written by the first call stops the second ask."""
    inspector = CountingInspector()
    runner = FunctionRunner(inspector=inspector)

    first = asyncio.run(runner.RunFunction(_request(model())))
    written = resource.struct_to_dict(first.desired.composite.resource)["status"]
    second = asyncio.run(runner.RunFunction(_request(model(status=written))))

    assert len(inspector.calls) == 1
    assert inspector.calls[0].reference == reference.parse(IMAGE)
    assert len(first.desired.resources) == 2
    assert set(second.desired.resources) == set(first.desired.resources)


def test_same_input_same_output() -> None:
    """Composing is deterministic: the same request gives the same answer."""
    xr = model()
    observed = Observed(xr, inspection=inspected())
    first = compose_model(observed)
    assert isinstance(first, Composition)
    observed = dataclasses.replace(observed, required=loop.answer(first, []))
    assert compose_model(observed) == compose_model(observed)


# --- seed 004's conditions ------------------------------------------------------------------------


def runtime_config(name: str, kind: str = "AIMRuntimeConfig") -> Any:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}"}
    if kind == "AIMRuntimeConfig":
        meta["namespace"] = NS
    return {"apiVersion": API, "kind": kind, "metadata": meta, "spec": {}}


@dataclass(frozen=True)
class RuntimeCase(Case):
    config_name: str
    pool: list[Any]
    want: tuple[str, str]


RUNTIME_CASES = [
    RuntimeCase(
        "no-default",
        "no default config: built-in defaults, a note, not a failure",
        "default",
        [],
        ("True", "DefaultRuntimeConfigMissing"),
    ),
    RuntimeCase(
        "named-missing",
        "a config the user named and that does not exist is their mistake to fix",
        "platform",
        [],
        ("False", "RuntimeConfigMissing"),
    ),
    RuntimeCase(
        "named",
        "the named config exists",
        "platform",
        [runtime_config("platform")],
        ("True", "RuntimeResolved"),
    ),
]


@table(RUNTIME_CASES)
def test_runtime_resolved_uses_seed_004s_reasons(case: RuntimeCase) -> None:
    """RuntimeResolved uses the reasons seed 004 names."""
    xr = model(runtimeConfigName=case.config_name, discovery={"enabled": False})
    comp = compose(xr, case.pool)
    assert conditions(comp)["RuntimeResolved"] == case.want, case.reason
    assert "RuntimeConfigReady" not in conditions(comp)


@dataclass(frozen=True)
class AutoGeneratedCase(Case):
    xr: Any
    inspection: Inspection | None
    want: tuple[str, str]


AUTO_GENERATED_CASES = [
    AutoGeneratedCase(
        "recommended",
        "the image recommends deployments: one template each",
        model(),
        inspected(),
        ("True", "TemplatesAutoGenerated"),
    ),
    AutoGeneratedCase(
        "none-recommended",
        "the labels recommend nothing (seed 004's troubleshooting reason)",
        model(),
        inspected(labels=NAMED),
        ("False", "NoRecommendedTemplates"),
    ),
    AutoGeneratedCase(
        "auto-create-off",
        "the user turned autoCreateTemplates off, and the condition says so",
        model(discovery={"enabled": True, "autoCreateTemplates": False}),
        inspected(),
        ("False", "AutoCreateTemplatesDisabled"),
    ),
    AutoGeneratedCase(
        "discovery-off",
        "discovery off and no metadata given: nothing to generate from",
        model(discovery={"enabled": False}),
        None,
        ("False", "DiscoveryDisabled"),
    ),
]


@table(AUTO_GENERATED_CASES)
def test_templates_auto_generated_says_whether_and_why_not(case: AutoGeneratedCase) -> None:
    """TemplatesAutoGenerated says whether templates were made, and if not why."""
    comp = compose(case.xr, inspection=case.inspection)
    assert conditions(comp)["TemplatesAutoGenerated"] == case.want, case.reason


def test_templates_auto_generated_waits_while_the_labels_cannot_be_read_yet() -> None:
    """The first call of a reconcile: the runtime config, which may name pull secrets for the
    registry, is not fetched yet, so the image is not inspected and nothing is decided."""
    comp = compose_model(Observed(model()))
    assert isinstance(comp, Composition)
    assert conditions(comp)["TemplatesAutoGenerated"] == ("Unknown", "AwaitingMetadata")


def test_templates_auto_generated_does_not_set_the_headline() -> None:
    """An image that recommends nothing leaves a Ready model (the operator's table)."""
    comp = compose(model(), inspection=inspected(labels=NAMED))
    assert comp.status["status"] == "Ready"


def test_disabling_discovery_keeps_the_generated_templates_and_says_so() -> None:
    """Seed 004: templates made before discovery was turned off stay, and the condition too."""
    first = compose(model(), inspection=inspected())
    observed = {
        k: {**v.manifest, "status": {"status": "Available"}} for k, v in first.resources.items()
    }
    off = model(discovery={"enabled": False})
    comp = compose(off, resources=observed)

    assert set(comp.resources) == set(first.resources)
    assert conditions(comp)["TemplatesAutoGenerated"] == ("True", "TemplatesAutoGenerated")


def test_a_deployment_that_declares_its_type_labels_its_template() -> None:
    """A deployment's declared type reaches its template."""
    labels = {
        **NAMED,
        LABEL: "[{'gpuModel':'MI300X','gpuCount':1,'metric':'latency','type':'optimized'}]",
    }
    comp = compose(model(), inspection=inspected(labels=labels))
    [tpl] = [tree(r.manifest) for r in comp.resources.values()]
    assert tpl["metadata"]["labels"]["aim.silogen.ai/profile-type"] == "optimized"
    assert "type" not in tpl["spec"]  # the spec is the user's word; the label is the image's


# --- discovery by default; images without AIM labels; metadata that cannot be read -------------


@dataclass(frozen=True)
class DefaultCase(Case):
    discovery: dict[str, Any] | None
    inspects: bool


DEFAULT_CASES = [
    DefaultCase("omitted", "seed 004: discovery is attempted automatically", None, inspects=True),
    DefaultCase(
        "block-without-enabled",
        "a block that only sets autoCreateTemplates leaves discovery on",
        {"autoCreateTemplates": True},
        inspects=True,
    ),
    DefaultCase(
        "enabled",
        "said explicitly, as seed 004's examples say it",
        {"enabled": True},
        inspects=True,
    ),
    DefaultCase(
        "disabled",
        "enabled: false is how a model turns it off",
        {"enabled": False},
        inspects=False,
    ),
]


@table(DEFAULT_CASES)
def test_discovery_is_on_unless_the_model_turns_it_off(case: DefaultCase) -> None:
    """A model reads its image's labels from the registry unless spec.discovery.enabled is false."""
    xr = model() if case.discovery is None else model(discovery=case.discovery)
    outcome = loop.run(compose_model, Observed(xr), [])

    assert isinstance(outcome, Inspect) is case.inspects, case.reason
    if isinstance(outcome, Composition):
        assert conditions(outcome)["MetadataExtracted"] == ("True", "DiscoveryDisabled")
        assert conditions(outcome)["TemplatesAutoGenerated"] == ("False", "DiscoveryDisabled")


@dataclass(frozen=True)
class UnlabelledCase(Case):
    labels: dict[str, str]


UNLABELLED_CASES = [
    UnlabelledCase("no-labels", "an image that is no AIM image at all", {}),
    UnlabelledCase(
        "oci-only",
        "standard OCI labels do not make an image an AIM model image",
        {"org.opencontainers.image.title": "llama-dev", "maintainer": "ml-team"},
    ),
    UnlabelledCase(
        "deployments-without-a-name",
        "recommended deployments alone do not name the model the image serves",
        {LABEL: DEPLOYMENTS},
    ),
    UnlabelledCase(
        "empty-name", "an empty canonical name names nothing", {**NAMED, NAMED_KEY: " "}
    ),
]


@table(UNLABELLED_CASES)
def test_an_image_without_the_required_aim_labels_fails_the_model_naming_them(
    case: UnlabelledCase,
) -> None:
    """Seed 004: required labels missing is `Failed` with `MetadataExtractionFailed`, the message
    naming the labels and the ways out; no templates, and the labels are kept so the registry is
    not asked again for the same image."""
    comp = compose(model(), inspection=inspected(labels=case.labels))

    assert comp.status["status"] == "Failed", case.reason
    assert conditions(comp)["MetadataExtracted"] == ("False", "MetadataExtractionFailed")
    message = condition_message(comp, "MetadataExtracted")
    assert message.startswith("ImageLabelsMissing: ")
    assert "com.amd.aim.model.canonicalName or org.amd.silogen.model.canonicalName" in message
    assert "spec.imageMetadata" in message
    assert "spec.discovery.enabled" in message
    assert comp.resources == {}
    assert comp.status["inspectedImage"] == IMAGE
    assert conditions(comp)["TemplatesReady"] == ("False", "MetadataUnavailable")
    assert any("ImageLabelsMissing" in w for w in comp.warnings)


def test_the_legacy_canonical_name_label_is_enough() -> None:
    """Images labelled with the legacy `org.amd.silogen.` prefix are AIM images too."""
    labels = {"org.amd.silogen.model.canonicalName": "Qwen/Qwen3-32B", LABEL: DEPLOYMENTS}
    comp = compose(model(), inspection=inspected(labels=labels))

    assert conditions(comp)["MetadataExtracted"] == ("True", "MetadataExtracted")
    assert len(comp.resources) == 2


def test_turning_discovery_off_stops_judging_stored_labels_that_fail() -> None:
    """A model Failed for its image's labels recovers with `enabled: false`, the documented way
    out, even though the labels read before stay in status."""
    stored = {"inspectedImage": IMAGE, "imageDigest": DIGEST, "imageLabels": {"maintainer": "x"}}
    failed = compose(model(status=stored))
    off = compose(model(status=stored, discovery={"enabled": False}))

    assert failed.status["status"] == "Failed"
    assert off.status["status"] == "Ready"
    assert conditions(off)["MetadataExtracted"] == ("True", "DiscoveryDisabled")


@dataclass(frozen=True)
class UnreadableCase(Case):
    spec: dict[str, Any]
    pool: list[Any]
    inspection: InspectionOutcome | None
    cause: str


UNREADABLE_CASES = [
    UnreadableCase(
        "missing-secret",
        "the issue's case: a pull secret that does not exist",
        {"imagePullSecrets": [{"name": "absent"}]},
        [],
        None,
        "SecretNotFound",
    ),
    UnreadableCase(
        "refused",
        "the registry refuses the credentials",
        {},
        [],
        RegistryFailure(IMAGE, FailureKind.UNAUTHORIZED, "401 Unauthorized"),
        "RegistryUnauthorized",
    ),
    UnreadableCase(
        "timeout",
        "the registry does not answer in time",
        {},
        [],
        RegistryFailure(IMAGE, FailureKind.TIMEOUT, "deadline exceeded"),
        "RegistryTimeout",
    ),
    UnreadableCase(
        "labels-missing",
        "the image was read but is no AIM image",
        {},
        [],
        Inspection(IMAGE, DIGEST, {}),
        "ImageLabelsMissing",
    ),
]


@table(UNREADABLE_CASES)
def test_metadata_that_cannot_be_read_never_reads_as_fine_or_disabled(case: UnreadableCase) -> None:
    """A model whose metadata is unavailable says so with the cause: its templates are not
    "Ready, none recommended", and discovery is not "disabled"."""
    comp = compose(model(**case.spec), case.pool, inspection=case.inspection)

    assert conditions(comp)["MetadataExtracted"] == ("False", "MetadataExtractionFailed")
    assert conditions(comp)["TemplatesReady"] == ("False", "MetadataUnavailable"), case.reason
    assert f"({case.cause}; see MetadataExtracted)" in condition_message(comp, "TemplatesReady")
    assert conditions(comp)["TemplatesAutoGenerated"] == ("Unknown", "MetadataUnavailable")
    assert "spec.discovery.enabled" not in condition_message(comp, "TemplatesAutoGenerated")
    assert comp.status["status"] in {"Failed", "Degraded"}


AIR_GAPPED = {
    "model": {
        "canonicalName": "Qwen/Qwen3-32B",
        "recommendedDeployments": [
            {"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}
        ],
    },
    "oci": {"licenses": "Apache-2.0"},
}


def test_given_metadata_shows_in_status_where_kubectl_reads_the_model_column() -> None:
    """An air-gapped model's `spec.imageMetadata` is its `status.imageMetadata`, so `kubectl get
    aimmodels -o wide` shows its MODEL as for a model whose image was read."""
    comp = compose(model(imageMetadata=AIR_GAPPED))

    assert conditions(comp)["MetadataExtracted"] == ("True", "MetadataProvided")
    assert comp.status["imageMetadata"] == AIR_GAPPED
    assert column_value(Kind.MODEL, "Model", {"status": comp.status}) == "Qwen/Qwen3-32B"
    assert len(comp.resources) == 1
