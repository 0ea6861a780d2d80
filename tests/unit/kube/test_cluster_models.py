"""AIMClusterRuntimeConfig: the AIMClusterModels it creates for services (creationScope: Cluster).

A namespaced service cannot compose a cluster-scoped object, so the cluster config of the
services' `runtimeConfigName` composes one AIMClusterModel per image, shared by every namespace.
`reconcile` stands in for Crossplane's required-resources loop (tests/unit/loop.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from function.api.meta import Manifest
from function.compose.runtimeconfig import compose_runtime_config
from function.kube.contract import Composition, Observed
from function.kube.objects import name_of
from function.rules import naming
from function.rules.status import ConditionStatus
from tests.cases import Case, table
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
IMAGE = "ghcr.io/acme/llm:1.0"
OTHER = "ghcr.io/acme/other:2.0"
AUTO = naming.auto_model_name(IMAGE)
CLUSTER = {"creationScope": "Cluster"}


def cluster_config(name: str = "default", **model: Any) -> Manifest:
    spec: dict[str, Any] = {"model": model} if model else {}
    return {
        "apiVersion": API,
        "kind": "AIMClusterRuntimeConfig",
        "metadata": {"name": name, "uid": "cfg-uid", "generation": 1},
        "spec": spec,
    }


def namespace_config(namespace: str, name: str = "default", **model: Any) -> Manifest:
    return {
        "apiVersion": API,
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"model": model},
    }


def service(
    namespace: str,
    image: str = IMAGE,
    name: str = "chat",
    config: str | None = None,
    resolved: str | None = None,
) -> Manifest:
    spec: dict[str, Any] = {"model": {"image": image}}
    if config is not None:
        spec["runtimeConfigName"] = config
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    if resolved is not None:
        out["status"] = {"resolvedModel": {"name": resolved, "kind": "AIMClusterModel"}}
    return out


def model(kind: str, name: str, image: str = IMAGE, namespace: str | None = None) -> Manifest:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": API, "kind": kind, "metadata": meta, "spec": {"image": image}}


def ours(image: str = IMAGE) -> Manifest:
    """A cluster model this config composed earlier, as Crossplane observes it."""
    return {
        **model("AIMClusterModel", naming.auto_model_name(image), image),
        "metadata": {
            "name": naming.auto_model_name(image),
            "labels": {"aim.silogen.ai/origin": "auto-generated"},
        },
    }


def reconcile(
    config: Manifest, pool: list[Manifest], composed: list[Manifest] | None = None
) -> Composition:
    observed = {name_of(m): m for m in composed or []}
    return loop.reconcile(compose_runtime_config, Observed(config, observed), pool)


def created(comp: Composition) -> dict[str, Any]:
    """The cluster models composed, by name."""
    return {k: v.manifest for k, v in comp.resources.items()}


def condition(comp: Composition) -> Any:
    return next(c for c in comp.conditions if c.type == "AutoCreatedModels")


def test_two_namespaces_with_one_image_share_one_cluster_model() -> None:
    """Services by the same image in two namespaces get one AIMClusterModel, made as a service
    would make its own: the image, discovery per autoDiscovery, the config's name, the labels
    that mark it auto-created."""
    cfg = cluster_config(creationScope="Cluster", autoDiscovery=True)
    comp = reconcile(cfg, [service("team-a"), service("team-b")])
    assert list(created(comp)) == [AUTO]
    made = created(comp)[AUTO]
    assert made["kind"] == "AIMClusterModel"
    assert "namespace" not in made["metadata"]
    assert made["metadata"]["labels"]["aim.silogen.ai/origin"] == "auto-generated"
    assert made["spec"]["image"] == IMAGE
    assert made["spec"]["discovery"]["enabled"] is True
    assert made["spec"]["runtimeConfigName"] == "default"
    assert comp.resources[AUTO].ready, "the config stays Ready while its models start"
    assert condition(comp).status is ConditionStatus.TRUE
    assert AUTO in condition(comp).message
    assert "2 namespace(s)" in condition(comp).message


@dataclass(frozen=True)
class NeedCase(Case):
    config: Manifest
    pool: list[Manifest]
    expected: list[str]
    composed: list[Manifest] = field(default_factory=list)


NEED_CASES = [
    NeedCase(
        "namespace-overrides-to-namespace",
        "a namespace's AIMRuntimeConfig merges over the cluster's, so its services create their "
        "own AIMModels and need no cluster model",
        cluster_config(creationScope="Cluster"),
        [service("team-a"), namespace_config("team-a", creationScope="Namespace")],
        [],
    ),
    NeedCase(
        "override-leaves-other-namespaces",
        "one namespace opting out changes nothing for another",
        cluster_config(creationScope="Cluster"),
        [
            service("team-a"),
            namespace_config("team-a", creationScope="Namespace"),
            service("team-b"),
        ],
        [AUTO],
    ),
    NeedCase(
        "namespace-cannot-switch-to-cluster",
        "a namespace asking for Cluster under a cluster config that does not is ignored: a "
        "cluster model is inspected with the platform's pull secrets, so only the platform "
        "switches to it (issue 46: any image a tenant named was composed)",
        cluster_config(),
        [service("team-a"), namespace_config("team-a", creationScope="Cluster")],
        [],
    ),
    NeedCase(
        "namespace-repeats-cluster",
        "a namespace saying Cluster under a cluster config that says it too changes nothing",
        cluster_config(creationScope="Cluster"),
        [service("team-a"), namespace_config("team-a", creationScope="Cluster")],
        [AUTO],
    ),
    NeedCase(
        "kept-after-the-upgrade",
        "a model composed for a namespace's Cluster before the upgrade stays while a service "
        "resolved to it: upgrades take no running service's model away",
        cluster_config(),
        [
            ours(),
            service("team-a", resolved=AUTO),
            namespace_config("team-a", creationScope="Cluster"),
        ],
        [AUTO],
        composed=[ours()],
    ),
    NeedCase(
        "override-without-scope",
        "a namespace config that sets other model fields keeps the cluster's scope",
        cluster_config(creationScope="Cluster"),
        [service("team-a"), namespace_config("team-a", autoDiscovery=True)],
        [AUTO],
    ),
    NeedCase(
        "in-the-catalog",
        "an image the catalog serves as an AIMClusterModel is what the services find",
        cluster_config(creationScope="Cluster"),
        [service("team-a"), model("AIMClusterModel", "llm")],
        [],
    ),
    NeedCase(
        "namespace-model",
        "a service finds its namespace's AIMModel first, so that namespace needs nothing; "
        "another namespace still does",
        cluster_config(creationScope="Cluster"),
        [
            service("team-a"),
            model("AIMModel", "llm", namespace="team-a"),
            service("team-b"),
        ],
        [AUTO],
    ),
    NeedCase(
        "namespace-model-only",
        "with every service served by its namespace's model, no cluster model is made",
        cluster_config(creationScope="Cluster"),
        [service("team-a"), model("AIMModel", "llm", namespace="team-a")],
        [],
    ),
    NeedCase(
        "other-config",
        "services of another runtime config are that config's business",
        cluster_config(creationScope="Cluster"),
        [service("team-a", config="gpu-team")],
        [],
    ),
    NeedCase(
        "named-config",
        "a config other than default serves the services that name it",
        cluster_config("gpu-team", creationScope="Cluster"),
        [service("team-a", config="gpu-team"), service("team-b")],
        [AUTO],
    ),
    NeedCase(
        "two-images",
        "one model per image",
        cluster_config(creationScope="Cluster"),
        [service("team-a"), service("team-a", OTHER, name="other"), service("team-b")],
        sorted([AUTO, naming.auto_model_name(OTHER)]),
    ),
    NeedCase(
        "scope-namespace",
        "under Namespace scope services compose their own models",
        cluster_config(),
        [service("team-a")],
        [],
    ),
    NeedCase(
        "no-services-left",
        "the model goes with the last service that needed it (Crossplane deletes it and its "
        "templates)",
        cluster_config(creationScope="Cluster"),
        [ours()],
        [],
        composed=[ours()],
    ),
    NeedCase(
        "kept-while-used",
        "a service that resolved to the model keeps it after its namespace turned to "
        "Namespace scope: dropping it would take its model away",
        cluster_config(creationScope="Cluster"),
        [
            ours(),
            service("team-a", resolved=AUTO),
            namespace_config("team-a", creationScope="Namespace"),
        ],
        [AUTO],
        composed=[ours()],
    ),
    NeedCase(
        "own-model-is-not-the-catalog",
        "the model this config made does not count as one that serves the image already",
        cluster_config(creationScope="Cluster"),
        [ours(), service("team-a")],
        [AUTO],
        composed=[ours()],
    ),
    NeedCase(
        "catalog-arrives",
        "once the catalog serves the image, services move to it and this config's model goes",
        cluster_config(creationScope="Cluster"),
        [ours(), model("AIMClusterModel", "llm"), service("team-a")],
        [],
        composed=[ours()],
    ),
]


@table(NEED_CASES)
def test_which_images_get_a_cluster_model(case: NeedCase) -> None:
    """A cluster model exists exactly for the images a service of this config would not find
    a model for otherwise, or serves already."""
    comp = reconcile(case.config, case.pool, case.composed)
    assert sorted(created(comp)) == case.expected


def test_models_are_kept_while_the_listings_are_not_fetched() -> None:
    """Gate, then never tear down: before Crossplane has listed the services and models, the
    models the config composed stay as they are."""
    cfg = cluster_config(creationScope="Cluster")
    comp = compose_runtime_config(Observed(cfg, {AUTO: ours()}))
    assert list(comp.resources) == [AUTO]
    assert comp.resources[AUTO].manifest["spec"] == {"image": IMAGE}
    assert condition(comp).status is ConditionStatus.UNKNOWN


def test_a_bad_image_is_skipped_and_named() -> None:
    """A user's image that yields no model name never fails the config: it is skipped and named
    in the condition, with the message bounded."""
    cfg = cluster_config(creationScope="Cluster")
    pool = [service("team-a"), *(service("team-b", f":{i}", name=f"s{i}") for i in range(9))]
    comp = reconcile(cfg, pool)
    assert list(created(comp)) == [AUTO]
    says = condition(comp).message
    assert "skipped 9 image(s)" in says
    assert "and 5 more" in says
    assert len(says) < 2000


def test_scope_namespace_everywhere_says_so_and_lists_no_services() -> None:
    """A config nobody asks cluster models of does not list every service in the cluster."""
    comp = reconcile(cluster_config(), [service("team-a")])
    assert not comp.resources
    assert {r.kind for r in comp.requirements} == {"AIMRuntimeConfig"}
    assert condition(comp).reason == "NoClusterModelsRequested"


def test_a_namespace_config_composes_nothing() -> None:
    """Only the cluster config creates cluster models; a namespace's config is only read."""
    comp = reconcile(namespace_config("team-a", creationScope="Namespace"), [service("team-a")])
    assert not comp.resources
    assert not comp.requirements
    assert not comp.conditions


@dataclass(frozen=True)
class ScopeCase(Case):
    pool: list[Manifest]
    said_reason: str
    status: ConditionStatus
    says: str


SCOPE_CASES = [
    ScopeCase("no-cluster-config", "nothing could create the model: the field is marked ignored",
              [], "ClusterScopeNotAllowed", ConditionStatus.FALSE, "none exists"),
    ScopeCase("cluster-says-namespace", "the platform did not switch to Cluster: ignored here",
              [cluster_config()], "ClusterScopeNotAllowed", ConditionStatus.FALSE,
              "it does not"),
    ScopeCase("cluster-says-cluster", "the platform's own Cluster: the field only repeats it",
              [cluster_config(creationScope="Cluster")], "ClusterModelsComposed",
              ConditionStatus.TRUE, "sets creationScope: Cluster too"),
]  # fmt: skip


@table(SCOPE_CASES)
def test_a_namespace_config_that_says_cluster_is_marked(case: ScopeCase) -> None:
    """The namespace's own config tells its team whether its `creationScope: Cluster` counts,
    naming the field; it composes nothing either way."""
    comp = reconcile(namespace_config("team-a", creationScope="Cluster"), case.pool)
    assert not comp.resources
    said = condition(comp)
    assert (said.reason, said.status) == (case.said_reason, case.status), case.reason
    assert case.says in said.message, case.reason
    if case.status is ConditionStatus.FALSE:
        assert "spec.model.creationScope: Cluster is ignored" in said.message
        assert said.warn, "told as a Warning event"


def test_the_cluster_config_names_the_namespaces_whose_cluster_scope_it_ignores() -> None:
    """The platform sees which teams asked for shared models it did not switch on."""
    pool = [service("team-a"), namespace_config("team-a", creationScope="Cluster")]
    said = condition(reconcile(cluster_config(), pool))
    assert said.reason == "NoClusterModelsRequested"
    assert "namespace(s) team-a sets creationScope: Cluster" in said.message
    assert "ClusterScopeNotAllowed" in said.message


def test_an_image_too_long_for_a_model_is_skipped_not_an_internal_error() -> None:
    """A listed service is read as stored: an image the model's schema refuses (over its 1,024
    characters; found by the fuzz tier) is skipped and named, never an internal error."""
    cfg = cluster_config(creationScope="Cluster")
    long_image = "registry.example.com/" + "9" * 1100
    comp = reconcile(cfg, [service("team-a"), service("team-b", long_image, name="long")])
    assert list(created(comp)) == [AUTO]
    assert "not an image a model accepts (spec.image)" in condition(comp).message
