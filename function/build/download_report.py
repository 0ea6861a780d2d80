"""How a download reports its progress through the Kubernetes API, with rights to little else.

A model cache's download gets a ConfigMap of its own, a ServiceAccount of its own, and a
RoleBinding of that account to one fixed ClusterRole the platform installs (package/rbac:
`patch` on ConfigMaps), so Crossplane never needs to create Roles. A native sidecar
(progress.py) writes the ConfigMap with the account's token, which is projected into the sidecar
alone; the sidecar makes itself non-dumpable before the download starts, so the download
container, which shares its process namespace, cannot read the token through `/proc`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.build.pod import restricted_container_security

CONTAINER: Final = "progress"
SCRIPT: Final = resources.files("function.build").joinpath("progress.py").read_text()
INTERVAL_S: Final = 10
ACCOUNT_DIR: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
# Kubernetes' minimum for a projected token; the kubelet refreshes it well before it expires.
TOKEN_EXPIRY_S: Final = 3600
KEYS: Final = ("downloadedBytes", "grewAt", "updatedAt", "stalled")
"""What the sidecar writes into the ConfigMap's data."""
CLUSTER_ROLE: Final = "aim-crossplane:download-progress"
"""The ClusterRole (package/rbac) every report's RoleBinding names, and the only one bound."""
GUARD_DIR: Final = "/run/aim-progress"
GUARDED: Final = f"{GUARD_DIR}/guarded"
"""Written by the sidecar once its token is out of other processes' reach: its startup probe."""
# The kubelet starts the download only after this probe passes: until then, no other container
# of the pod runs, so nothing can read the token before the sidecar has hidden it.
_STARTUP_PROBE: Final = f"import os, sys; sys.exit(0 if os.path.exists({GUARDED!r}) else 1)"


@dataclass(frozen=True)
class Reporting:
    """The names of one download's report: its ConfigMap and account; and the stall limit."""

    configmap: str
    service_account: str
    stall_after_s: int

    @property
    def interval_s(self) -> int:
        """How often the sidecar measures: every 10 s, or more often for a short stall limit."""
        return max(1, min(INTERVAL_S, self.stall_after_s // 4))


def sidecar(report: Reporting, *, image: str, directory: str) -> Manifest:
    """The native sidecar (an init container that keeps running) that writes the report."""
    env: list[JsonValue] = [
        {"name": "AIM_PROGRESS_CONFIGMAP", "value": report.configmap},
        {
            "name": "AIM_PROGRESS_NAMESPACE",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        },
        {"name": "AIM_PROGRESS_DIR", "value": directory},
        {"name": "AIM_PROGRESS_INTERVAL_S", "value": str(report.interval_s)},
        {"name": "AIM_STALL_AFTER_S", "value": str(report.stall_after_s)},
        {"name": "AIM_PROGRESS_GUARDED", "value": GUARDED},
    ]
    return {
        "name": CONTAINER,
        "image": image,
        "restartPolicy": "Always",
        "command": ["python3", "-c", SCRIPT],
        "env": env,
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}},
        "securityContext": restricted_container_security(),
        "startupProbe": {
            "exec": {"command": ["python3", "-c", _STARTUP_PROBE]},
            "periodSeconds": 1,
            "failureThreshold": 120,
        },
        "volumeMounts": [
            {"name": "cache", "mountPath": directory, "readOnly": True},
            {"name": "report-token", "mountPath": ACCOUNT_DIR, "readOnly": True},
            {"name": "report-guard", "mountPath": GUARD_DIR},
        ],
    }


def volumes() -> list[Manifest]:
    """The account's token and the cluster's CA, and the sidecar's own scratch space."""
    return [_token_volume(), {"name": "report-guard", "emptyDir": {"medium": "Memory"}}]


def _token_volume() -> Manifest:
    return {
        "name": "report-token",
        "projected": {
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": TOKEN_EXPIRY_S}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
            ]
        },
    }


def build_configmap(report: Reporting, *, namespace: str, labels: Mapping[str, str]) -> Manifest:
    """The report, empty until the sidecar writes it (the function never writes its data)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": report.configmap, "namespace": namespace, "labels": dict(labels)},
    }


def build_role_binding(report: Reporting, *, namespace: str, labels: Mapping[str, str]) -> Manifest:
    """The fixed ClusterRole, in this namespace only, for the download's own account.

    Named after the account: an earlier version's binding, named after the report, bound a Role,
    and a binding's roleRef cannot change.
    """
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": report.service_account,
            "namespace": namespace,
            "labels": dict(labels),
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": CLUSTER_ROLE,
        },
        "subjects": [
            {"kind": "ServiceAccount", "name": report.service_account, "namespace": namespace}
        ],
    }


def build_service_account(name: str, *, namespace: str, labels: Mapping[str, str]) -> Manifest:
    """The download's own account: only its report's RoleBinding names it; no token automounted.

    The runtime config's account is for discovery and size checks: a download runs as an
    account no inference pod shares, so no other pod can forge its report.
    """
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "automountServiceAccountToken": False,
    }
