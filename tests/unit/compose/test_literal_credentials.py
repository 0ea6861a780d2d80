"""A cluster config, template or model with a credential in plain text in its env: warned.

The rule is `function.rules.credentials`; these tests hold the composers to it: the cluster kinds
warn (once, as a Warning event), the namespaced kinds do not, and nothing stops being Ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.compose.model import compose_model
from function.compose.runtimeconfig import compose_runtime_config
from function.compose.template import compose_template
from function.kube.contract import Composition, Observed
from function.kube.transitions import carried, transitions
from tests.cases import Case, table
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz"  # noqa: S105 - what the message must never show
LITERAL = [{"name": "HF_TOKEN", "value": TOKEN}, {"name": "VLLM_ENABLE_METRICS", "value": "1"}]
FROM_SECRET = [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}}]
WARNED = {"type": "CredentialsInline", "status": "True", "reason": "LiteralCredential"}
SOURCES = [{"modelId": "org/m", "sourceUri": "hf://org/m", "size": "16Gi"}]


def config(kind: str, env: list[Any], conditions: list[Any] | None = None) -> Any:
    meta: dict[str, Any] = {"name": "default", "generation": 1}
    if kind == "AIMRuntimeConfig":
        meta["namespace"] = NS
    out: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": meta, "spec": {"env": env}}
    if conditions is not None:
        out["status"] = {"conditions": conditions}
    return out


def template(
    kind: str, env: list[Any], conditions: list[Any] | None = None, sources: Any = None
) -> Any:
    meta: dict[str, Any] = {"name": "tpl", "uid": "uid-tpl"}
    if kind == "AIMServiceTemplate":
        meta["namespace"] = NS
    spec = {
        "modelName": "qwen3",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
        "modelSources": SOURCES if sources is None else sources,
        "env": env,
    }
    out: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": meta, "spec": spec}
    if conditions is not None:
        out["status"] = {"conditions": conditions}
    return out


def model(kind: str, env: list[Any], conditions: list[Any] | None = None, **spec: Any) -> Any:
    """A custom model (its weights downloaded, so no registry is asked) with `env`."""
    meta: dict[str, Any] = {"name": "qwen3", "uid": "uid-qwen3"}
    if kind == "AIMModel":
        meta["namespace"] = NS
    body = {
        "image": "ghcr.io/acme/base:1.0",
        "modelSources": SOURCES,
        "custom": {"hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
        "env": env,
        **spec,
    }
    out: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": meta, "spec": body}
    if conditions is not None:
        out["status"] = {"conditions": conditions}
    return out


def catalog(kind: str) -> list[Any]:
    """A model for the template, a node with its GPU and a default config: it is Available."""
    model_meta: dict[str, Any] = {"name": "qwen3"}
    model_kind = "AIMClusterModel"
    if kind == "AIMServiceTemplate":
        model_meta["namespace"] = NS
        model_kind = "AIMModel"
    return [
        {
            "apiVersion": API,
            "kind": model_kind,
            "metadata": model_meta,
            "spec": {"image": "ghcr.io/acme/llm:1.0"},
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1", "labels": {"amd.com/gpu.device-id": "74a1"}},
        },
        config("AIMClusterRuntimeConfig", []),
    ]


def compose(xr: Any) -> Composition:
    if xr["kind"].endswith("RuntimeConfig"):
        return loop.reconcile(compose_runtime_config, Observed(xr), [])
    if xr["kind"].endswith("Model"):
        return loop.reconcile(compose_model, Observed(xr), [config("AIMClusterRuntimeConfig", [])])
    return loop.reconcile(compose_template, Observed(xr), catalog(xr["kind"]))


def credentials(comp: Composition) -> tuple[str, str] | None:
    found = [c for c in comp.conditions if c.type == "CredentialsInline"]
    return (found[0].status.value, found[0].reason) if found else None


@dataclass(frozen=True)
class ComposerCase(Case):
    xr: Any
    want: tuple[str, str] | None


CASES = [
    ComposerCase(
        "cluster-config",
        "a cluster config's env reaches every team's pods",
        config("AIMClusterRuntimeConfig", LITERAL),
        ("True", "LiteralCredential"),
    ),
    ComposerCase(
        "cluster-template",
        "so does a cluster template's",
        template("AIMClusterServiceTemplate", LITERAL),
        ("True", "LiteralCredential"),
    ),
    ComposerCase(
        "cluster-template-source",
        "a cluster template's download env reaches every namespace's caches of it",
        template(
            "AIMClusterServiceTemplate",
            FROM_SECRET,
            sources=[{**SOURCES[0], "env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "k"}]}],
        ),
        ("True", "LiteralCredential"),
    ),
    ComposerCase(
        "cluster-model",
        "a cluster model's env reaches every namespace's inference pods",
        model("AIMClusterModel", LITERAL),
        ("True", "LiteralCredential"),
    ),
    ComposerCase(
        "cluster-model-custom-template",
        "so does the env of its custom templates",
        model(
            "AIMClusterModel",
            FROM_SECRET,
            custom={
                "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
                "templates": [{"env": [{"name": "DB_PASSWORD", "value": "p"}]}],
            },
        ),
        ("True", "LiteralCredential"),
    ),
    ComposerCase(
        "namespace-model",
        "a namespace's model stays in the namespace",
        model("AIMModel", LITERAL),
        None,
    ),
    ComposerCase(
        "cluster-model-fixed",
        "a cluster model fixed after the warning clears it",
        model("AIMClusterModel", FROM_SECRET, [WARNED]),
        ("False", "NoLiteralCredentials"),
    ),
    ComposerCase(
        "namespace-config",
        "a namespace's own config is the place for its own token",
        config("AIMRuntimeConfig", LITERAL),
        None,
    ),
    ComposerCase(
        "namespace-template",
        "a namespace's template stays in the namespace",
        template("AIMServiceTemplate", LITERAL),
        None,
    ),
    ComposerCase(
        "cluster-config-secret",
        "a secretKeyRef is the fix",
        config("AIMClusterRuntimeConfig", FROM_SECRET),
        None,
    ),
    ComposerCase(
        "cluster-template-secret",
        "a secretKeyRef is the fix, for a template too",
        template("AIMClusterServiceTemplate", FROM_SECRET),
        None,
    ),
    ComposerCase(
        "cluster-config-fixed",
        "a config fixed after the warning clears it (Crossplane would keep it otherwise)",
        config("AIMClusterRuntimeConfig", FROM_SECRET, [WARNED]),
        ("False", "NoLiteralCredentials"),
    ),
    ComposerCase(
        "cluster-template-fixed",
        "a template fixed after the warning clears it",
        template("AIMClusterServiceTemplate", FROM_SECRET, [WARNED]),
        ("False", "NoLiteralCredentials"),
    ),
]


@table(CASES)
def test_cluster_kinds_warn_about_literal_credentials(case: ComposerCase) -> None:
    """Only the cluster kinds, only literal values; a fixed object says so."""
    assert credentials(compose(case.xr)) == case.want, case.reason


def test_the_warning_leaves_the_template_available_and_never_shows_the_value() -> None:
    """The template works as before; the warning is one Warning event, not one per call."""
    xr = template("AIMClusterServiceTemplate", LITERAL)
    comp = compose(xr)
    assert comp.status["status"] == "Available"
    assert comp.ready is True
    assert all(TOKEN not in c.message for c in comp.conditions)
    assert all(TOKEN not in w for w in comp.warnings)

    first = [n for n in transitions(carried(xr), comp.conditions) if n.warning_reason]
    assert [n.warning_reason for n in first] == ["LiteralCredential"]
    assert "HF_TOKEN" in first[0].message
    assert TOKEN not in first[0].message
    again = {**xr, "status": {"conditions": [WARNED]}}
    assert not [
        n for n in transitions(carried(again), compose(again).conditions) if n.warning_reason
    ]


def test_the_warning_names_the_field_of_each_entry() -> None:
    """The platform team is told where to look: the template's env or a source's."""
    sources = [SOURCES[0], {**SOURCES[0], "env": [{"name": "MY_API_KEY", "value": "k"}]}]
    comp = compose(template("AIMClusterServiceTemplate", LITERAL, sources=sources))
    [said] = [c.message for c in comp.conditions if c.type == "CredentialsInline"]
    assert "'HF_TOKEN' in spec.env" in said
    assert "'MY_API_KEY' in spec.modelSources[1].env" in said


def test_the_warning_leaves_a_cluster_config_to_crossplanes_readiness() -> None:
    """A runtime config has no headline: the warning must not make it one."""
    comp = compose(config("AIMClusterRuntimeConfig", LITERAL))
    assert comp.ready is None
    assert all(TOKEN not in c.message for c in comp.conditions)
