"""What every Pod this function creates shares: the `restricted` Pod Security settings."""

from __future__ import annotations

from function.build import Manifest


def restricted_pod_security(run_as: int) -> Manifest:
    """Pod-level security context: non-root with a fixed uid, RuntimeDefault seccomp."""
    return {
        "runAsNonRoot": True,
        "runAsUser": run_as,
        "runAsGroup": run_as,
        "fsGroup": run_as,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def restricted_container_security() -> Manifest:
    """Container-level security context: no privilege escalation, no capabilities."""
    return {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
