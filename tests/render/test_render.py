"""The real `crossplane composition render` (CLI + core) against function-aim over gRPC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.render.harness import Rendered, render, render_example
from devtools.tools import ROOT, Tools
from tests.cases import Case, table

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/xr.yaml"))
BASIC = ROOT / "examples" / "aimservice-basic"

Obj = dict[str, Any]


def split(result: Rendered) -> tuple[Obj, list[Obj], list[Obj]]:
    """(XR, composed resources, function results) from render's YAML stream."""
    assert result.returncode == 0, result.stderr
    objects = result.objects
    results = [o for o in objects if o.get("kind") == "Result"]
    rest = [o for o in objects if o.get("kind") != "Result"]
    return rest[0], rest[1:], results


def status(xr: Obj) -> Any:
    return xr["status"]


def conditions(xr: Obj) -> dict[str, tuple[str, str]]:
    items = status(xr).get("conditions", [])
    assert isinstance(items, list)
    return {c["type"]: (c["status"], c.get("reason", "")) for c in items}


def write(tmp_path: Path, name: str, *docs: Obj) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


def expected_of(example: Path) -> Obj:
    """The example's reviewed expectations (see examples/README.md for the format)."""
    expected = yaml.safe_load((example / "expected.yaml").read_text())
    assert isinstance(expected, dict)
    return expected


def assert_subset(want: Any, have: Any, path: str = "status") -> None:
    if isinstance(want, dict):
        assert isinstance(have, dict), f"{path}: want an object, have {have!r}"
        for key, value in want.items():
            assert key in have, f"{path}.{key} missing from {have!r}"
            assert_subset(value, have[key], f"{path}.{key}")
    else:
        assert want == have, f"{path}: want {want!r}, have {have!r}"


def check_expected(example: Path, result: Rendered) -> tuple[Obj, list[Obj]]:
    """The render of `example` against its reviewed expected.yaml; the XR and composed objects."""
    xr, composed, results = split(result)
    expected = expected_of(example)

    assert_subset(expected["status"], status(xr))
    have = conditions(xr)
    for kind, want in expected.get("conditions", {}).items():
        assert " ".join(have.get(kind, ("absent", ""))) == want, kind
    assert sorted(c["kind"] for c in composed) == expected["composed"]
    if "names" in expected:
        assert sorted(c["metadata"]["name"] for c in composed) == expected["names"]
    warnings = [r for r in results if r.get("severity") == "Warning"]
    assert len(warnings) == expected["warnings"], warnings
    assert [r for r in results if r.get("severity") == "Fatal"] == []
    assert have["Synced"][0] == "True"
    isvc = next((c for c in composed if c["kind"] == "InferenceService"), None)
    if "image" in expected:
        assert isvc is not None
        assert isvc["spec"]["predictor"]["containers"][0]["image"] == expected["image"]
    if "deviceIds" in expected:
        assert isvc is not None
        terms = isvc["spec"]["predictor"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        assert [e for t in terms for e in t["matchExpressions"]] == [
            {"key": "amd.com/gpu.device-id", "operator": "In", "values": expected["deviceIds"]}
        ]
    if "env" in expected:
        assert isvc is not None
        env = {e["name"]: e.get("value") for e in isvc["spec"]["predictor"]["containers"][0]["env"]}
        assert_subset(expected["env"], env, "env")
    return xr, composed


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_renders_as_its_expected_yaml_says(
    tools: Tools, function_target: str, example: Path
) -> None:
    """Each example goes through the real engine and the function; the outcome is as reviewed."""
    check_expected(example, render_example(tools, function_target, example))


def test_basic_example_composes_an_inference_service_on_mi300x(
    tools: Tools, function_target: str
) -> None:
    """The InferenceService requests one AMD GPU and is pinned to MI300X device ids."""
    xr, composed, _ = split(render_example(tools, function_target, BASIC))

    assert [c["kind"] for c in composed] == ["InferenceService"]
    isvc = composed[0]
    meta = isvc["metadata"]
    assert isinstance(meta, dict)
    assert meta["name"] == "qwen-chat-a04542d9"
    assert meta["annotations"]["crossplane.io/composition-resource-name"] == "inference-service"
    assert meta["labels"]["crossplane.io/composite"] == "qwen-chat"
    assert meta["ownerReferences"][0]["kind"] == "AIMService"
    predictor = isvc["spec"]["predictor"]
    assert predictor["containers"][0]["resources"]["limits"]["amd.com/gpu"] == "1"
    expression = predictor["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert expression == {
        "key": "amd.com/gpu.device-id",
        "operator": "In",
        "values": ["74a1", "74a9", "74b5", "74bd"],
    }
    # Crossplane's own verdict: not ready until the InferenceService is.
    assert conditions(xr)["Ready"][0] == "False"


def test_a_runtime_config_propagates_the_labels_it_matches(
    tools: Tools, function_target: str
) -> None:
    """The service's labels the runtime config's patterns match reach its InferenceService
    through the real engine; the others stay on the service."""
    example = ROOT / "examples" / "aimservice-label-propagation"
    _, composed, _ = split(render_example(tools, function_target, example))
    [isvc] = composed
    labels = isvc["metadata"]["labels"]
    assert labels["billing.example.com/cost-center"] == "4711"
    assert labels["billing.example.com/project"] == "chat"
    assert "owner" not in labels
    assert labels["aim.silogen.ai/service"] == "qwen-chat"  # its own labels kept


def test_composed_aim_objects_are_owned_by_the_service(tools: Tools, function_target: str) -> None:
    """The AIMModel a service composes is garbage-collected with it (Crossplane owner ref)."""
    _, composed, _ = split(
        render_example(tools, function_target, ROOT / "examples" / "aimservice-model-custom")
    )
    [model] = composed
    assert model["metadata"]["ownerReferences"][0]["kind"] == "AIMService"
    assert model["metadata"]["labels"]["aim.silogen.ai/custom-model"] == "true"


def test_missing_template_is_reported_after_crossplane_looked(
    tools: Tools, function_target: str
) -> None:
    """Crossplane fetches the lookups, finds nothing, and the service says so: not "pending"."""
    xr, composed, results = split(render(tools, function_target, BASIC / "xr.yaml"))

    assert composed == []
    assert status(xr)["status"] == "Failed"
    assert conditions(xr)["TemplateReady"] == ("False", "TemplateNotFound")
    warnings = [str(r["message"]) for r in results if r.get("severity") == "Warning"]
    assert any("spec.template.name" in w for w in warnings)


def test_a_literal_credential_is_warned_about_by_name_never_by_value(
    tools: Tools, function_target: str
) -> None:
    """A cluster config's token in plain text: the Warning event and the condition name the env
    entry and the fix, and the token appears in neither (events are read more widely still)."""
    example = ROOT / "examples" / "aimclusterruntimeconfig-literal-credential"
    xr, _, results = split(render_example(tools, function_target, example))
    [warning] = [r for r in results if r.get("severity") == "Warning"]
    condition = next(c for c in status(xr)["conditions"] if c["type"] == "CredentialsInline")
    for said in (str(warning["message"]), str(condition["message"])):
        assert "HF_TOKEN" in said
        assert "secretKeyRef" in said
        assert "hf_NotARealTokenJustAnExample" not in said
        assert "AWS_SECRET_ACCESS_KEY" not in said  # from a Secret already


# One example per shape of input: required resources and observed resources, a discovery Job's
# result, a cache download; enough to see the older engine feed the function the same way.
# An example's directory is the case's id.
OLDEST_CORE_EXAMPLES = [
    Case("aimservice-running", "observed resources and readiness"),
    Case("aimclusterservicetemplate-discovered", "required Nodes, Jobs' Pods: the loop"),
    Case("aimmodelcache-downloading", "a composed PVC and Job"),
    Case("aimservice-template-auto", "selection over required templates"),
    Case(
        "aimservicetemplate-discovery-queued",
        "Jobs listed by label and templates by kind, in every namespace (no namespace given)",
    ),
    Case(
        "aimclusterruntimeconfig-cluster-models",
        "a cluster-scoped XR listing namespaced kinds across every namespace",
    ),
]


@table(OLDEST_CORE_EXAMPLES)
def test_the_oldest_core_the_packages_claim_renders_the_same(
    tools: Tools, function_target: str, case: Case
) -> None:
    """The packages claim Crossplane >= the oldest core scripts/build-tools.sh pins; its engine
    must compose exactly what the current one does."""
    oldest = tools.with_oldest_core()
    example = ROOT / "examples" / case.id
    current = render_example(tools, function_target, example)
    older = render_example(oldest, function_target, example)
    assert older.returncode == 0, older.stderr
    assert older.objects == current.objects
