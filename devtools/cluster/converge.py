"""Waiting for a cluster to converge, and reading what a user would read once it has.

Shared by the scenarios and the journeys: every wait names what it waits for and, when it times
out, prints the AIM objects' statuses and the end of Crossplane's and the function's logs.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from devtools.cluster.kube import Kube, condition, wait_for

AIM: Final = "aim.silogen.ai/v1alpha1"
ISVC: Final = "serving.kserve.io/v1beta1"
ROUTE: Final = "gateway.networking.k8s.io/v1"
CONVERGE_S: Final = 120.0
AIM_KINDS: Final = (
    "AIMService",
    "AIMModel",
    "AIMServiceTemplate",
    "AIMTemplateCache",
    "AIMModelCache",
)
CLUSTER_KINDS: Final = ("AIMClusterModelSource", "AIMClusterModel", "AIMClusterServiceTemplate")


class Platform(Protocol):
    """What waiting needs of a platform: a client, and what to print when a wait fails."""

    @property
    def kube(self) -> Kube:
        """An admin client."""

    def diagnose(self) -> str:
        """The end of the function's log."""


def wait_status(  # noqa: PLR0913, PLR0917 - a journey names the object as kubectl does
    platform: Platform,
    kind: str,
    name: str,
    namespace: str | None,
    want: str,
    timeout_s: float = CONVERGE_S,
) -> dict[str, Any]:
    """Wait until an AIM object's status.status is `want`; return the object."""
    kube = platform.kube

    def reached() -> dict[str, Any] | None:
        obj = kube.get(AIM, kind, name, namespace)
        return obj if (obj or {}).get("status", {}).get("status") == want else None

    def explain() -> str:
        obj = kube.get(AIM, kind, name, namespace) or {}
        return (
            f"{kind} {name} status: {obj.get('status')}\n"
            f"{aim_statuses(kube, namespace or '')}\n{platform.diagnose()}"
        )

    where = f"{namespace}/{name}" if namespace else name
    return wait_for(f"{kind} {where} to be {want}", reached, timeout_s=timeout_s, explain=explain)


def wait_condition(  # noqa: PLR0913, PLR0917 - a journey names the object as kubectl does
    platform: Platform,
    kind: str,
    name: str,
    namespace: str | None,
    ctype: str,
    want: str,
    reason: str | None = None,
) -> dict[str, Any]:
    """Wait for a condition's status (and reason, if given); return the condition.

    Crossplane writes the conditions in a status update of their own, a moment after the AIM
    status (`status.status`), so they are waited for rather than read with it.
    """
    kube = platform.kube

    def reached() -> dict[str, Any] | None:
        found = condition(kube.get(AIM, kind, name, namespace), ctype) or {}
        ok = found.get("status") == want and reason in {None, found.get("reason")}
        return found if ok else None

    return wait_for(
        f"{kind} {name}'s {ctype} condition to be {want} {reason or ''}".strip(),
        reached,
        timeout_s=CONVERGE_S,
        explain=lambda: aim_statuses(kube, namespace or ""),
    )


def templates_of(
    kube: Kube, kind: str, model: str, namespace: str | None = None
) -> list[dict[str, Any]]:
    """The templates made for a model."""
    return [t for t in kube.list(AIM, kind, namespace) if t["spec"].get("modelName") == model]


def aim_statuses(kube: Kube, namespace: str) -> str:
    """Every AIM object's status in a namespace (and cluster scope), for a failed wait."""
    lines = []
    scoped = [(k, namespace) for k in AIM_KINDS if namespace] + [(k, None) for k in CLUSTER_KINDS]
    for kind, ns in scoped:
        for obj in kube.list(AIM, kind, ns):
            st = obj.get("status") or {}
            conds = [
                f"{c['type']}={c['status']}/{c.get('reason')}: {c.get('message', '')}"
                for c in st.get("conditions", [])
            ]
            lines.append(f"{kind} {obj['metadata']['name']}: {st.get('status')} {conds}")
    return "\n".join(lines)


def one(platform: Platform, api_version: str, kind: str, namespace: str) -> dict[str, Any]:
    """Wait for exactly one object of a kind in a namespace; return it."""
    kube = platform.kube
    objs = wait_for(
        f"a {kind} in {namespace}",
        lambda: kube.list(api_version, kind, namespace) or None,
        timeout_s=CONVERGE_S,
        explain=lambda: aim_statuses(kube, namespace),
    )
    if len(objs) != 1:
        msg = f"expected one {kind} in {namespace}, found {[o['metadata']['name'] for o in objs]}"
        raise AssertionError(msg)
    return objs[0]


def owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    """True when `owner` is obj's controller."""
    return any(
        ref.get("uid") == owner["metadata"]["uid"] and ref.get("controller")
        for ref in obj["metadata"].get("ownerReferences", [])
    )
