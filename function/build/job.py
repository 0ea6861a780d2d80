"""The discovery Job (batch/v1): an AIM image's dry-run, hardened for `restricted` Pod Security."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.build.pod import restricted_container_security, restricted_pod_security

CONTAINER: Final = "discovery"
RUN_AS: Final = 65532
OUTPUT_DIR: Final = "/aim-discovery"
# Kubernetes keeps at most this many bytes of a container's termination message.
TERMINATION_MESSAGE_LIMIT: Final = 4096
# A dry-run takes seconds; one that hangs must fail, so that discovery retries.
DEADLINE_S: Final = 600
# A safety net only: the template drops its Job once the result is in its status.
TTL_AFTER_FINISHED_S: Final = 3600
SCRIPT: Final = resources.files("function.build").joinpath("discovery.sh").read_text()


def build_discovery_job(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    image: str,
    entrypoint: Sequence[str],
    env: Sequence[Mapping[str, JsonValue]],
    pull_secrets: Sequence[str],
    service_account: str | None,
) -> Manifest:
    """A Job running `<entrypoint> dry-run --format=json`; the result is its termination message.

    discovery.sh wraps the dry-run so that its JSON lands in the termination message.
    """
    pod_spec: Manifest = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": restricted_pod_security(RUN_AS),
        "containers": [
            {
                "name": CONTAINER,
                "image": image,
                "command": ["/bin/sh", "-c", SCRIPT, "aim-discovery", *entrypoint],
                "args": ["dry-run", "--format=json"],
                "env": [dict(e) for e in env],
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "resources": {
                    "requests": {"cpu": "100m", "memory": "256Mi"},
                    "limits": {"memory": "2Gi"},
                },
                "securityContext": restricted_container_security(),
                "volumeMounts": [{"name": "output", "mountPath": OUTPUT_DIR}],
            }
        ],
        "volumes": [{"name": "output", "emptyDir": {"sizeLimit": "64Mi"}}],
    }
    if pull_secrets:
        pod_spec["imagePullSecrets"] = [{"name": s} for s in pull_secrets]
    if service_account:
        pod_spec["serviceAccountName"] = service_account
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE_S,
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED_S,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }
