"""The RBAC platform teams apply (package/rbac): Crossplane's matches what the function does, and
the roles for people cover every AIM kind at the right scope."""

from __future__ import annotations

from typing import Any

import yaml

from devtools.tools import ROOT
from function.api.definitions import DEFINITIONS
from function.build import download_report

GROUP = "aim.silogen.ai"


def crossplane_grants() -> dict[tuple[str, str], set[str]]:
    """What package/rbac adds to Crossplane's role: verbs by (group, resource), any name."""
    role = yaml.safe_load((ROOT / "package" / "rbac" / "aggregate-to-crossplane.yaml").read_text())
    assert role["metadata"]["labels"]["rbac.crossplane.io/aggregate-to-crossplane"] == "true"
    return {
        (g, r): set(rule["verbs"])
        for rule in role["rules"]
        if not rule.get("resourceNames")
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }


def test_crossplane_rbac_covers_what_the_function_composes_and_reads() -> None:
    """package/rbac grants Crossplane every kind the composers emit or require."""
    granted = crossplane_grants()
    for composed in [
        ("batch", "jobs"),
        ("", "persistentvolumeclaims"),
        ("serving.kserve.io", "inferenceservices"),
        ("gateway.networking.k8s.io", "httproutes"),
        ("http.keda.sh", "httpscaledobjects"),
        ("", "configmaps"),
        ("", "serviceaccounts"),
        ("", "services"),
        ("rbac.authorization.k8s.io", "rolebindings"),
    ]:
        assert {"create", "update", "delete", "watch"} <= granted[composed]
    # Templates count the discovery Jobs of every namespace before starting theirs.
    assert "list" in granted["batch", "jobs"]
    for read in [
        ("", "nodes"),
        ("", "pods"),
        ("", "secrets"),
        ("autoscaling", "horizontalpodautoscalers"),
        ("gateway.networking.k8s.io", "gateways"),
    ]:
        assert {"get", "list", "watch"} <= granted[read]


def test_crossplane_cannot_write_roles_and_binds_one_fixed_cluster_role() -> None:
    """A Role Crossplane could create would grant anything Crossplane holds (Secrets included) to
    whoever made it compose one: it may only delete the per-download Roles older versions made,
    and the one ClusterRole the download reports need is bound by name."""
    role = yaml.safe_load((ROOT / "package" / "rbac" / "aggregate-to-crossplane.yaml").read_text())
    granted = crossplane_grants()
    assert granted["rbac.authorization.k8s.io", "roles"] == {"get", "list", "watch", "delete"}
    assert ("rbac.authorization.k8s.io", "clusterroles") not in granted, "no name-less rule"
    assert ("rbac.authorization.k8s.io", "clusterrolebindings") not in granted
    [bind] = [r for r in role["rules"] if r.get("resourceNames")]
    assert bind == {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"],
        "resourceNames": [download_report.CLUSTER_ROLE],
        "verbs": ["bind"],
    }


def test_the_download_progress_role_reads_and_patches_config_maps_only() -> None:
    """The role every download's binding names (the function's constant and the file agree) lets
    its reporter patch ConfigMaps: not read or list them, not create, not anything else."""
    text = (ROOT / "package" / "rbac" / "download-progress.yaml").read_text()
    role = yaml.safe_load(text)
    assert role["metadata"]["name"] == download_report.CLUSTER_ROLE
    assert "labels" not in role["metadata"], "aggregated into nothing"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["patch"]}]


def user_roles() -> dict[str, dict[str, Any]]:
    """package/rbac's roles for people, by name."""
    text = (ROOT / "package" / "rbac" / "aggregate-to-users.yaml").read_text()
    return {d["metadata"]["name"]: d for d in yaml.safe_load_all(text) if d}


def grants(role: dict[str, Any]) -> dict[str, set[str]]:
    """Verbs by resource, over every rule of the AIM group."""
    out: dict[str, set[str]] = {}
    for rule in role["rules"]:
        assert rule["apiGroups"] == [GROUP]
        for resource in rule["resources"]:
            out.setdefault(resource, set()).update(rule["verbs"])
    return out


def plurals(scope: str) -> set[str]:
    return {d.plural for d in DEFINITIONS if d.scope == scope}


def test_teams_edit_and_view_every_namespaced_kind_through_the_built_in_roles() -> None:
    """Kubernetes' edit (and admin) role lets a team write every namespaced AIM kind, and view
    read each one and its status; a kind added later without a role fails here."""
    roles = user_roles()
    edit, view = (
        roles["aim-crossplane:aggregate-to-edit"],
        roles["aim-crossplane:aggregate-to-view"],
    )
    labels = "rbac.authorization.k8s.io/aggregate-to-"
    assert {f"{labels}admin", f"{labels}edit"} <= set(edit["metadata"]["labels"])
    assert f"{labels}view" in view["metadata"]["labels"]
    for plural in plurals("Namespaced"):
        assert {"create", "update", "patch", "delete"} <= grants(edit)[plural]
        assert {"get", "list", "watch"} <= grants(view)[plural]
        assert grants(view)[f"{plural}/status"] == {"get", "list", "watch"}


def test_the_cluster_catalog_is_never_granted_through_namespace_roles() -> None:
    """Roles aggregated into admin/edit/view are bound per namespace, and a cluster-scoped kind in
    them would be writable by every namespace admin: the catalog has roles of its own."""
    roles = user_roles()
    aggregated = ("aim-crossplane:aggregate-to-edit", "aim-crossplane:aggregate-to-view")
    for name in aggregated:
        assert not {r.split("/")[0] for r in grants(roles[name])} & plurals("Cluster")
    for plural in plurals("Cluster"):
        assert grants(roles["aim-crossplane:catalog-viewer"])[plural] == {"get", "list", "watch"}
        assert {"create", "update", "delete"} <= grants(roles["aim-crossplane:catalog-admin"])[
            plural
        ]
    assert not any(r.get("aggregationRule") for r in roles.values())
    assert "labels" not in roles["aim-crossplane:catalog-admin"]["metadata"]


def test_the_rolebinding_policy_names_the_role_the_function_binds() -> None:
    """The shipped policy holds AIM-owned RoleBindings to the role the function's bindings name,
    matched by an owner in the AIM group, and is bound to deny: a renamed role or group would
    refuse every download's binding (the end-to-end tier applies it to real ones)."""
    policy, binding = yaml.safe_load_all(
        (ROOT / "package" / "rbac" / "composed-rolebindings.yaml").read_text()
    )
    assert policy["kind"] == "ValidatingAdmissionPolicy"
    [match] = policy["spec"]["matchConditions"]
    assert f"'{GROUP}/'" in match["expression"]
    role = policy["spec"]["validations"][0]["expression"]
    assert f"object.roleRef.name == '{download_report.CLUSTER_ROLE}'" in role
    assert binding["kind"] == "ValidatingAdmissionPolicyBinding"
    assert binding["spec"] == {
        "policyName": policy["metadata"]["name"],
        "validationActions": ["Deny"],
    }
