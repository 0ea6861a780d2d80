"""Kubernetes' `restricted` Pod Security level, in process, for the pod specs we compose.

Written from the Pod Security Standards (restricted includes baseline), for the fields our pod
specs can carry. The end-to-end tier checks the same pods against the API server's own
admission; this is for the unit and fuzz tiers, which have no API server.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

_RESTRICTED_VOLUMES: Final = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
        "image",
    }
)
_CONTAINER_LISTS: Final = ("initContainers", "containers", "ephemeralContainers")


def restricted_violations(pod: Mapping[str, Any]) -> list[str]:
    """What Kubernetes' `restricted` Pod Security level (with `baseline`) forbids in `pod`."""
    pod_sc = pod.get("securityContext") or {}
    found = [f"{field} is set" for field in ("hostNetwork", "hostPID", "hostIPC") if pod.get(field)]
    for volume in pod.get("volumes") or []:
        types = set(volume) - {"name"}
        if not types <= _RESTRICTED_VOLUMES:
            found.append(f"volume {volume.get('name')} has type {sorted(types)}")
    if pod_sc.get("runAsUser") == 0:
        found.append("the pod runs as uid 0")
    if pod_sc.get("sysctls"):
        found.append("the pod sets sysctls")
    containers = [c for field in _CONTAINER_LISTS for c in pod.get(field) or []]
    if not containers:
        found.append("the pod has no containers")
    for c in containers:
        found += [f"container {c.get('name')}: {p}" for p in _container_violations(c, pod_sc)]
    return found


def _container_violations(c: Mapping[str, Any], pod_sc: Mapping[str, Any]) -> Iterator[str]:
    sc = c.get("securityContext") or {}
    if sc.get("privileged"):
        yield "privileged"
    if sc.get("allowPrivilegeEscalation") is not False:
        yield "allowPrivilegeEscalation is not false"
    if not (sc.get("runAsNonRoot") is True or pod_sc.get("runAsNonRoot") is True):
        yield "runAsNonRoot is not true"
    if sc.get("runAsNonRoot") is False:
        yield "runAsNonRoot is false"
    if sc.get("runAsUser") == 0:
        yield "runs as uid 0"
    seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
    if seccomp not in {"RuntimeDefault", "Localhost"}:
        yield f"seccompProfile is {seccomp!r}"
    yield from _capability_violations(c, sc)


def _capability_violations(c: Mapping[str, Any], sc: Mapping[str, Any]) -> Iterator[str]:
    capabilities = sc.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        yield "capabilities do not drop ALL"
    if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
        yield f"capabilities add {capabilities.get('add')}"
    if any(p.get("hostPort") for p in c.get("ports") or []):
        yield "uses a hostPort"
    if sc.get("procMount", "Default") != "Default":
        yield "procMount is not Default"
