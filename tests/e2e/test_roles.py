"""The roles package/rbac gives people, as the real API server's authorizer applies them.

A team bound to Kubernetes' `edit` role in its namespace can write the AIM kinds there once the
controller manager has aggregated our rules into it; `view` reads them and writes nothing; the
cluster catalog stays out of reach of both until `catalog-viewer` is bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devtools.cluster.converge import AIM
from devtools.cluster.kube import Credentials, Kube, KubeError, wait_for
from devtools.cluster.kubeconfig import credentials
from devtools.cluster.platform import Platform
from tests.cases import Case, table

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


def test_a_service_accounts_token_kubeconfig_gets_what_view_gives(
    platform: Platform, tmp_path: Path
) -> None:
    """A kubeconfig with a bearer token (as a CI system's service account has, and the tier
    accepts for an existing cluster) authenticates to the real API server as that account:
    bound to `view`, it lists the team's services and is refused creating one."""
    kube = platform.kube
    platform.team_namespace(NS)
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "ci", "namespace": NS},
    }
    kube.apply(account)
    kube.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "ci-view", "namespace": NS},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "view",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "ci", "namespace": NS}],
        }
    )
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    path = f"/api/v1/namespaces/{NS}/serviceaccounts/ci/token"
    token = kube.request("POST", path, request).body["status"]["token"]
    config = tmp_path / "ci.kubeconfig"
    config.write_text(
        Credentials(kube.credentials.server, kube.credentials.ca, token=token).kubeconfig("ci")
    )

    ci = Kube(credentials(config, tmp_path / "ci"))

    def listed() -> list[dict[str, Any]] | None:
        try:
            return ci.list(AIM, "AIMService", NS)
        except KubeError as e:
            if e.status == 403:  # not aggregated into view yet
                return None
            raise

    wait_for("the account listing services through view", listed, timeout_s=30)
    service = {
        "apiVersion": AIM,
        "kind": "AIMService",
        "metadata": {"name": "x", "namespace": NS},
        "spec": {"model": {"ref": "m"}},
    }
    with pytest.raises(KubeError) as refused:
        ci.create(service)
    assert refused.value.status == 403
    assert f"system:serviceaccount:{NS}:ci" in refused.value.message


@dataclass(frozen=True)
class CrossplaneWrite(Case):
    obj: dict[str, Any]
    allowed: bool
    refusal: str = ""
    """A part of the refusal's message (the policy's, where it is the one refusing)."""


# A composed object's owner, as Crossplane sets it: the AIM object controls it. The API server
# checks no owner at admission (the garbage collector removes an orphan later, after the test).
AIM_OWNER = {
    "apiVersion": AIM,
    "kind": "AIMModelCache",
    "name": "some-cache",
    "uid": "00000000-0000-4000-8000-000000000001",
    "controller": True,
}


def _binding(
    role_kind: str,
    role: str,
    subject: dict[str, str],
    *,
    name: str = "",
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name or f"xp-{role.replace(':', '-')}", "namespace": NS}
    if owner:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [subject],
    }


PROGRESS = "aim-crossplane:download-progress"
CATALOG_VIEWER = "aim-crossplane:catalog-viewer"
DOWNLOADER = {"kind": "ServiceAccount", "name": "some-download", "namespace": NS}
POLICY = "aim-crossplane.composed-rolebindings"
CROSSPLANE_WRITES = [
    CrossplaneWrite("no-role-with-secrets", "a Role Crossplane could create would hand out the "
                    "Secrets it reads to whoever made it compose one",
                    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": {"name": "xp-secrets", "namespace": NS},
                     "rules": [{"apiGroups": [""], "resources": ["secrets"],
                                "verbs": ["get", "list"]}]},
                    allowed=False),
    CrossplaneWrite("no-empty-role", "not even a Role granting nothing: no Role at all",
                    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": {"name": "xp-empty", "namespace": NS}, "rules": []},
                    allowed=False),
    CrossplaneWrite("binds-download-progress", "the one binding a download's report needs",
                    _binding("ClusterRole", PROGRESS, DOWNLOADER), allowed=True),
    CrossplaneWrite("cannot-bind-edit", "binding a role with rights Crossplane lacks is "
                    "escalation, refused by the API server",
                    _binding("ClusterRole", "edit", DOWNLOADER), allowed=False),
    CrossplaneWrite("aim-owned-download-progress", "the binding exactly as the function composes "
                    "it, owned by its cache, passes the policy",
                    _binding("ClusterRole", PROGRESS, DOWNLOADER, name="some-download",
                             owner=AIM_OWNER), allowed=True),
    CrossplaneWrite("held-role-not-aims", "a role whose rights Crossplane holds passes the "
                    "escalation check; bound outside AIM, the policy leaves it alone",
                    _binding("ClusterRole", CATALOG_VIEWER, DOWNLOADER, name="some-download"),
                    allowed=True),
    CrossplaneWrite("aim-owned-held-role", "the same binding owned by an AIM object: only the "
                    "policy stands between a wrong function and it",
                    _binding("ClusterRole", CATALOG_VIEWER, DOWNLOADER, name="some-download",
                             owner=AIM_OWNER), allowed=False,
                    refusal="may bind only ClusterRole aim-crossplane:download-progress"),
    CrossplaneWrite("aim-owned-user-subject", "the right role bound to a person, not the "
                    "download's account",
                    _binding("ClusterRole", PROGRESS, {"kind": "User", "name": "mallory",
                                                       "apiGroup": "rbac.authorization.k8s.io"},
                             name="some-download", owner=AIM_OWNER), allowed=False,
                    refusal="must be the one ServiceAccount"),
    CrossplaneWrite("aim-owned-other-account", "the right role for an account that is no "
                    "download's, though named like its binding",
                    _binding("ClusterRole", PROGRESS, {**DOWNLOADER, "name": "builder"},
                             name="builder", owner=AIM_OWNER), allowed=False,
                    refusal="the account of a download"),
    CrossplaneWrite("aim-owned-other-namespace", "the right role for an account of another "
                    "namespace, which would report into this one",
                    _binding("ClusterRole", PROGRESS, {**DOWNLOADER, "namespace": "default"},
                             name="some-download", owner=AIM_OWNER), allowed=False,
                    refusal="must be the one ServiceAccount"),
]  # fmt: skip


@table(CROSSPLANE_WRITES)
def test_crossplane_writes_only_the_rbac_a_download_report_needs(
    platform: Platform, case: CrossplaneWrite
) -> None:
    """As Crossplane core's own identity (its client certificate, rights from its chart's role
    plus package/rbac, aggregated by the real controller manager), the API server refuses every
    Role and any binding that would hand out more than the download-progress role; and the
    shipped policy (package/rbac/composed-rolebindings.yaml) refuses any other binding an AIM
    object owns, with a message that names the binding and what it may be."""
    kube = platform.kube
    platform.team_namespace(NS)
    pki = platform.cluster.pki
    crossplane = Kube(
        Credentials(kube.credentials.server, pki.ca.cert, pki.crossplane.cert, pki.crossplane.key)
    )
    name = case.obj["metadata"]["name"]
    kind = case.obj["kind"]
    # Crossplane's role is aggregated a moment after package/rbac is applied: wait until it can
    # create the allowed binding, so that a denial below is the rule's, not the race's.
    wait_for(
        "package/rbac aggregated into Crossplane's role",
        lambda: _can_bind(crossplane),
        timeout_s=30,
    )
    message = ""
    try:
        crossplane.create(case.obj)
        made = True
    except KubeError as e:
        assert e.status == 403, e  # noqa: PT017 - the status tells a refusal from a failure
        made, message = False, e.message
    finally:
        kube.delete("rbac.authorization.k8s.io/v1", kind, name, NS)
    assert made == case.allowed, message
    if case.refusal:
        assert POLICY in message, message
        assert case.refusal in message, message
        assert f"RoleBinding {NS}/{name}" in message, message


def _can_bind(crossplane: Kube) -> bool:
    probe = _binding("ClusterRole", PROGRESS, DOWNLOADER)
    probe["metadata"]["name"] = "xp-probe"
    try:
        crossplane.create(probe)
    except KubeError:
        return False
    crossplane.delete("rbac.authorization.k8s.io/v1", "RoleBinding", "xp-probe", NS)
    return True
