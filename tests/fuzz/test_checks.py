"""The fuzz tier's checks catch what they are for: each is shown a response it must flag."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from function.build import download_report
from tests.cases import Case, table
from tests.fuzz import checks

NS = "team-a"
RBAC = "rbac.authorization.k8s.io"


def binding(role: dict[str, str], subjects: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "r", "namespace": NS},
        "roleRef": role,
        "subjects": subjects,
    }


OURS = {"apiGroup": RBAC, "kind": "ClusterRole", "name": download_report.CLUSTER_ROLE}
ACCOUNT = {"kind": "ServiceAccount", "name": "x-download", "namespace": NS}


@dataclass(frozen=True)
class Rbac(Case):
    obj: dict[str, Any]
    flagged: bool


RBAC_CASES = [
    Rbac("ours", "the download report's binding is the one shape allowed",
         binding(OURS, [ACCOUNT]), flagged=False),
    Rbac("a-role", "a composed Role could grant anything Crossplane holds",
         {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "r", "namespace": NS},
          "rules": []}, flagged=True),
    Rbac("other-role", "binding another ClusterRole hands out its rights",
         binding({**OURS, "name": "edit"}, [ACCOUNT]), flagged=True),
    Rbac("other-namespace", "an account of another namespace would write this one's ConfigMaps",
         binding(OURS, [{**ACCOUNT, "namespace": "team-b"}]), flagged=True),
    Rbac("a-user", "only an account, never a person or group",
         binding(OURS, [{"kind": "Group", "name": "system:authenticated"}]), flagged=True),
    Rbac("two-subjects", "one account per download", binding(OURS, [ACCOUNT, ACCOUNT]),
         flagged=True),
]  # fmt: skip


@table(RBAC_CASES)
def test_rbac_problems_allow_only_the_download_report_binding(case: Rbac) -> None:
    """What the fuzz tier flags among composed RBAC objects."""
    response = {"desired": {"resources": {"rbac": {"resource": case.obj}}}}
    assert bool(checks.rbac_problems(response)) == case.flagged


def route(path: str) -> dict[str, Any]:
    return {
        "desired": {
            "resources": {
                "http-route": {
                    "resource": {
                        "kind": "HTTPRoute",
                        "spec": {"rules": [{"matches": [{"path": {"value": path}}]}]},
                    }
                }
            }
        }
    }


def cluster_config(routing: dict[str, Any]) -> dict[str, Any]:
    config = {"kind": "AIMClusterRuntimeConfig", "spec": {"routing": routing}}
    return {"requiredResources": {"runtime-config": {"items": [{"resource": config}]}}}


@dataclass(frozen=True)
class RoutePath(Case):
    path: str
    request: dict[str, Any]
    flagged: bool


ROUTE_PATHS = [
    RoutePath("own", "a path under the namespace's prefix", "/team-a/chat", {}, flagged=False),
    RoutePath("own-root", "the prefix itself is the team's too", "/team-a", {}, flagged=False),
    RoutePath("other-namespace", "another team's prefix", "/team-b/chat", {}, flagged=True),
    RoutePath("longer-name", "a namespace whose name starts like ours is not ours",
              "/team-ab/chat", {}, flagged=True),
    RoutePath("catch-all", "`/` would take every request on the Gateway", "/", {}, flagged=True),
    RoutePath("platform-policy", "a platform's own policy may allow another prefix",
              "/models/chat", cluster_config({"policy": {"pathPrefix": "/models/"}}),
              flagged=False),
    RoutePath("platform-without-policy", "a cluster config without a policy widens nothing",
              "/team-b/chat", cluster_config({"enabled": True}), flagged=True),
]  # fmt: skip


@table(ROUTE_PATHS)
def test_routes_outside_the_namespace_are_flagged_unless_the_platform_set_a_policy(
    case: RoutePath,
) -> None:
    """What the fuzz tier flags among composed HTTPRoutes of a service in team-a."""
    found = checks.routes_outside_the_namespace(case.request, route(case.path), "team-a")
    assert bool(found) == case.flagged


@dataclass(frozen=True)
class Said(Case):
    message: str
    flagged: bool


SAID = [
    Said("origin", "a URL quoted as its origin", "linked its next page to https://evil.example",
         flagged=False),
    Said("userinfo", "the token of issue 46, in a link to another origin",
         "linked its next page to https://robot:ghp_x@evil.example", flagged=True),
    Said("scheme-relative", "a link without a scheme has an authority too",
         "gave //robot:ghp_x@[::1/next", flagged=True),
    Said("email", "an address is no URL", "ask admin@example.com", flagged=False),
]  # fmt: skip


@table(SAID)
def test_userinfo_in_messages_is_flagged(case: Said) -> None:
    """What the fuzz tier flags among conditions and results."""
    response = {"conditions": [{"message": case.message}], "results": []}
    assert bool(checks.userinfo_in_messages(response)) == case.flagged, case.reason
    response = {"results": [{"message": case.message}]}
    assert bool(checks.userinfo_in_messages(response)) == case.flagged, case.reason


def slot_request(*, owned: bool) -> dict[str, Any]:
    """Two labelled Jobs listed for the slots; with `owned`, each controlled by a listed
    template."""
    templates = [{"resource": {"metadata": {"uid": f"t{i}"}}} for i in range(2)]

    def job(i: int) -> dict[str, Any]:
        refs = [{"uid": f"t{i}", "controller": True}] if owned else []
        return {"resource": {"metadata": {"name": f"j{i}", "ownerReferences": refs}}}

    return {
        "requiredResources": {
            "discovery-slots-jobs": {"items": [job(0), job(1)]},
            "discovery-queue-templates": {"items": templates},
        }
    }


def slot_response(running: int) -> dict[str, Any]:
    message = f"waiting for a discovery slot: {running} of at most 2 discovery Jobs run"
    return {"conditions": [{"type": "Discovered", "message": message}]}


@dataclass(frozen=True)
class Slots(Case):
    owned: bool
    running: int
    flagged: bool


SLOTS = [
    Slots("owned", "two Jobs two listed templates control take two slots", owned=True, running=2,
          flagged=False),
    Slots("labelled-only", "labels alone take no slot (issue 46)", owned=False, running=2,
          flagged=True),
    Slots("none-counted", "unowned Jobs not counted", owned=False, running=0, flagged=False),
]  # fmt: skip


@table(SLOTS)
def test_foreign_jobs_counted_is_flagged(case: Slots) -> None:
    """What the fuzz tier flags among templates waiting for a discovery slot."""
    found = checks.foreign_jobs_counted(slot_request(owned=case.owned), slot_response(case.running))
    assert bool(found) == case.flagged, case.reason


def test_a_listed_job_whose_metadata_is_no_map_is_no_controller_and_no_crash() -> None:
    """The tier draws hostile listed objects: a Job whose metadata is a list (as one full run
    drew) counts as controlled by nothing, so a slot it takes is flagged; the check does not
    fail on it."""
    request = slot_request(owned=True)
    jobs = request["requiredResources"]["discovery-slots-jobs"]["items"]
    jobs[0]["resource"]["metadata"] = ["not", "a", "map"]
    jobs[1]["resource"] = "not an object"
    assert checks.foreign_jobs_counted(request, slot_response(1)) == [
        "1 discovery Jobs counted, but templates control 0"
    ]


def cluster_config_call(scope: str | None, *, had: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A cluster runtime config's request (its own scope; an AIMClusterModel composed before, or
    not) and a response composing that model."""
    spec = {"model": {"creationScope": scope}} if scope else {}
    xr = {"kind": "AIMClusterRuntimeConfig", "spec": spec}
    observed = {"auto-1": {"resource": {"kind": "AIMClusterModel"}}} if had else {}
    request = {"observed": {"composite": {"resource": xr}, "resources": observed}}
    response = {"desired": {"resources": {"auto-1": {"resource": {"kind": "AIMClusterModel"}}}}}
    return request, response


@dataclass(frozen=True)
class Platform(Case):
    scope: str | None
    had: bool
    flagged: bool


PLATFORM = [
    Platform("cluster", "the platform's own Cluster asks for it", "Cluster", had=False,
             flagged=False),
    Platform("namespace", "a config that says Namespace never adds one (issue 46)", "Namespace",
             had=False, flagged=True),
    Platform("unset", "nor one that does not say", None, had=False, flagged=True),
    Platform("kept", "one composed before the upgrade is kept while used", "Namespace", had=True,
             flagged=False),
]  # fmt: skip


@table(PLATFORM)
def test_cluster_models_the_platform_did_not_ask_are_flagged(case: Platform) -> None:
    """What the fuzz tier flags among a cluster runtime config's composed models."""
    request, response = cluster_config_call(case.scope, had=case.had)
    found = checks.cluster_models_the_platform_did_not_ask(request, response)
    assert bool(found) == case.flagged, case.reason


def desired(obj: Any) -> dict[str, Any]:
    """A response composing `obj`, whatever it is."""
    return {"desired": {"resources": {"it": {"resource": obj}}}}


ODD_BINDING = {**binding(OURS, []), "subjects": ACCOUNT}


@dataclass(frozen=True)
class Hostile(Case):
    found: Callable[[], list[str]]
    expected: list[str]


HOSTILE = [
    Hostile("route-policy-spec-list", "a drawn config whose spec is a list sets no policy",
            lambda: checks.routes_outside_the_namespace(
                {"requiredResources": {"c": {"items": [
                    {"resource": {"kind": "AIMClusterRuntimeConfig", "spec": ["routing"]}},
                    {"resource": {"kind": "AIMClusterRuntimeConfig", "spec": {"routing": [1]}}},
                    {"resource": ["not", "an", "object"]}, "no item"]},
                    "d": {"items": {"not": "a list"}}, "e": None}},
                route("/team-b/chat"), "team-a"),
            ["http-route routes '/team-b/chat', outside /team-a/"]),
    Hostile("route-rules-no-maps", "rules and matches that are no maps route nowhere; a match "
            "whose path is no map has none: `/`, the catch-all",
            lambda: checks.routes_outside_the_namespace(
                {}, desired({"kind": "HTTPRoute", "spec": {"rules": [
                    "r", {"matches": "m"}, {"matches": ["m", {"path": "/"}]}]}}), "team-a"),
            ["it routes '', outside /team-a/"]),
    Hostile("cluster-model-spec-list", "a config whose spec is a list asks for no model",
            lambda: checks.cluster_models_the_platform_did_not_ask(
                {"observed": {"composite": {"resource": {
                    "kind": "AIMClusterRuntimeConfig", "spec": [{"model": "Cluster"}]}},
                    "resources": ["auto-1"]}},
                desired({"kind": "AIMClusterModel"})),
            ["it: a new AIMClusterModel the platform's config did not ask for"]),
    Hostile("slot-refs-no-list", "ownerReferences that are a map, or hold no maps, control nothing",
            lambda: checks.foreign_jobs_counted(
                {"requiredResources": {
                    "discovery-queue-templates": {"items": [
                        {"resource": {"metadata": {"uid": "t"}}}]},
                    "discovery-slots-jobs": {"items": [
                        {"resource": {"metadata": {"ownerReferences": {"uid": "t"}}}},
                        {"resource": {"metadata": {"ownerReferences": ["t"]}}}]}}},
                slot_response(1)),
            ["1 discovery Jobs counted, but templates control 0"]),
    Hostile("metadata-list", "a composed object whose metadata is a list has no name",
            lambda: checks.bad_names(desired({"kind": "Job", "metadata": ["name"]})),
            ["it (Job): no name"]),
    Hostile("labels-list", "labels that are no map are flagged, not read",
            lambda: checks.bad_names(desired({"kind": ["Job"], "metadata": {
                "name": "a", "namespace": 7, "labels": ["a=b"]}})),
            ["it (['Job']): invalid namespace 7", "it (['Job']): labels ['a=b'] are no map"]),
    Hostile("pod-parts-no-maps", "pod spec parts that are no maps or lists name nothing (an env "
            "entry that is no map has no name, which is flagged)",
            lambda: checks.bad_references(desired({"kind": "Job", "spec": {"template": {"spec": {
                "imagePullSecrets": ["s"], "volumes": {"name": "v"},
                "containers": ["c", {"name": "c", "env": ["E", {"name": "A=B"}]}]}}}})),
            ["it: env name None", "it: env name 'A=B'"]),
    Hostile("template-string", "a Job template that is no map is a pod spec without fields",
            lambda: [str(pod) for _, pod in checks.pod_specs(desired(
                {"kind": "Job", "spec": {"template": "t"}}))],
            ["{}"]),
    Hostile("subjects-map", "subjects that are no list are unlike the one allowed",
            lambda: checks.rbac_problems(desired(ODD_BINDING)),
            [f"it composes RoleBinding {json.dumps(ODD_BINDING, sort_keys=True)[:300]}"]),
    Hostile("messages-no-maps", "conditions and results that are no maps say nothing",
            lambda: checks.internal_errors({"results": ["internal error", {"message": 7}]})
            + checks.userinfo_in_messages({"conditions": {"message": "//a:b@c"}, "results": [
                None]})
            + checks.scope_problems({"results": ["fatal"], "requirements": {"resources": {
                "s": "Secret"}}}, cluster=True, namespace=None, system_namespace="aim-system"),
            []),
]  # fmt: skip


@table(HOSTILE)
def test_a_value_that_is_no_map_counts_as_absent(case: Hostile) -> None:
    """The checks read drawn, hostile objects (and composed ones that keep what they observed):
    where a map or list should be and is not, a check judges the rest as if it were absent,
    instead of failing on it."""
    assert case.found() == case.expected, case.reason
