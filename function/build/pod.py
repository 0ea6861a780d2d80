"""What every Pod this function creates shares: the `restricted` Pod Security settings."""

from __future__ import annotations

from collections.abc import Sequence

from function.api.meta import Manifest


def restricted_pod_security(
    run_as: int, *, group: int | None = None, supplemental_groups: Sequence[int] = ()
) -> Manifest:
    """Pod-level security context: non-root with a fixed uid, RuntimeDefault seccomp.

    The group (the uid's number unless given) also owns the pod's volumes (fsGroup), so a
    non-root container can write its caches.
    """
    gid = run_as if group is None else group
    context: Manifest = {
        "runAsNonRoot": True,
        "runAsUser": run_as,
        "runAsGroup": gid,
        "fsGroup": gid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if supplemental_groups:
        context["supplementalGroups"] = list(supplemental_groups)
    return context


def restricted_container_security() -> Manifest:
    """Container-level security context: no privilege escalation, no capabilities."""
    return {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
