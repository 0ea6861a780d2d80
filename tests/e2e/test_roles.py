"""The roles package/rbac gives people, as the real API server's authorizer applies them.

A team bound to Kubernetes' `edit` role in its namespace can write the AIM kinds there once the
controller manager has aggregated our rules into it; `view` reads them and writes nothing; the
cluster catalog stays out of reach of both until `catalog-viewer` is bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from devtools.kube import Kube, wait_for
from tests.cases import Case, table
from tests.e2e.platform import Platform

NS = "team-roles"


@dataclass(frozen=True)
class Access(Case):
    user: str
    verb: str
    resource: str
    namespace: str | None
    allowed: bool


ACCESS = [
    Access("editor-creates-services", "edit lets a team run services", "alice", "create",
           "aimservices", NS, allowed=True),
    Access("editor-deletes-caches", "edit covers every namespaced kind", "alice", "delete",
           "aimmodelcaches", NS, allowed=True),
    Access("editor-not-elsewhere", "a namespace's edit binding stops at its namespace",
           "alice", "create", "aimservices", "default", allowed=False),
    Access("editor-not-the-catalog", "namespace roles never reach the cluster catalog",
           "alice", "create", "aimclustermodels", None, allowed=False),
    Access("editor-not-status", "status is the function's to write, through Crossplane",
           "alice", "update", "aimservices/status", NS, allowed=False),
    Access("viewer-reads", "view reads services and their status", "bob", "get",
           "aimservices", NS, allowed=True),
    Access("viewer-writes-nothing", "view writes nothing", "bob", "create", "aimmodels", NS,
           allowed=False),
    Access("catalog-viewer-lists", "the catalog role lets anyone bound pick models",
           "carol", "list", "aimclustermodels", None, allowed=True),
    Access("catalog-viewer-writes-nothing", "only the platform team writes the catalog",
           "carol", "create", "aimclusterservicetemplates", None, allowed=False),
]  # fmt: skip


def allowed(kube: Kube, case: Access) -> bool:
    """The authorizer's answer (a SubjectAccessReview, as `kubectl auth can-i --as` asks)."""
    attributes: dict[str, Any] = {"group": "aim.silogen.ai", "verb": case.verb}
    resource, _, subresource = case.resource.partition("/")
    attributes["resource"] = resource
    if subresource:
        attributes["subresource"] = subresource
    if case.namespace:
        attributes["namespace"] = case.namespace
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "metadata": {},
        "spec": {"user": case.user, "resourceAttributes": attributes},
    }
    return bool(kube.create(review).body["status"].get("allowed"))


def bind(kube: Kube, kind: str, name: str, role: str, user: str) -> None:
    """A RoleBinding in `NS` (or a ClusterRoleBinding) of `role` to `user`."""
    meta: dict[str, Any] = {"name": name}
    if kind == "RoleBinding":
        meta["namespace"] = NS
    kube.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": kind,
            "metadata": meta,
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
    )


@table(ACCESS)
def test_teams_get_the_aim_kinds_through_the_built_in_roles(
    platform: Platform, case: Access
) -> None:
    """Each user can do what their binding promises and nothing more, as the API server decides."""
    kube = platform.kube
    platform.team_namespace(NS)
    bind(kube, "RoleBinding", "alice-edit", "edit", "alice")
    bind(kube, "RoleBinding", "bob-view", "view", "bob")
    bind(kube, "ClusterRoleBinding", "carol-catalog", "aim-crossplane:catalog-viewer", "carol")
    # The aggregation controller copies our rules into edit and view a moment after they exist:
    # wait for that, so that no denial below passes only because it has not happened yet.
    aggregated = ACCESS[0]
    wait_for("our rules aggregated into edit", lambda: allowed(kube, aggregated), timeout_s=30)
    assert allowed(kube, case) == case.allowed
