"""How a download reports its progress through the Kubernetes API, with rights to nothing else.

A model cache's download gets a ConfigMap of its own; a Role allowing `get` and `patch` on that
one ConfigMap (by name); a RoleBinding of it to the account the Job runs as (one made for the
cache when the runtime config names none); and a native sidecar that writes the ConfigMap
(progress.py). The account's token is projected into the sidecar only: the download container
still has no API access, and the sidecar can touch nothing but its own report.
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


@dataclass(frozen=True)
class Reporting:
    """The names of one download's report: its ConfigMap, Role and account; and the stall limit."""

    configmap: str
    role: str
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
    ]
    return {
        "name": CONTAINER,
        "image": image,
        "restartPolicy": "Always",
        "command": ["python3", "-c", SCRIPT],
        "env": env,
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}},
        "securityContext": restricted_container_security(),
        "volumeMounts": [
            {"name": "cache", "mountPath": directory, "readOnly": True},
            {"name": "report-token", "mountPath": ACCOUNT_DIR, "readOnly": True},
        ],
    }


def token_volume() -> Manifest:
    """The account's token and the cluster's CA, for the sidecar alone."""
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


def build_role(report: Reporting, *, namespace: str, labels: Mapping[str, str]) -> Manifest:
    """Read and patch this one ConfigMap: nothing else, not even to list or create it."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": report.role, "namespace": namespace, "labels": dict(labels)},
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": [report.configmap],
                "verbs": ["get", "patch"],
            }
        ],
    }


def build_role_binding(report: Reporting, *, namespace: str, labels: Mapping[str, str]) -> Manifest:
    """The Role, for the account the download Job runs as."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": report.role, "namespace": namespace, "labels": dict(labels)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": report.role},
        "subjects": [
            {"kind": "ServiceAccount", "name": report.service_account, "namespace": namespace}
        ],
    }


def build_service_account(name: str, *, namespace: str, labels: Mapping[str, str]) -> Manifest:
    """An account for a download when the runtime config names none; no token is automounted."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "automountServiceAccountToken": False,
    }
