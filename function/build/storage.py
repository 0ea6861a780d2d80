"""A model cache's Kubernetes objects: its PVC, a download Job, and a size-check Job.

The size-check Job measures the source when its size is unknown.

The download image follows KServe's storage-initializer convention: it is run with
`<sourceUri> <destination>` and fetches `hf://` and `s3://` sources. Credentials reach it only as
environment variables the user gave (the cache's and its runtime config's, usually
`valueFrom.secretKeyRef`), never through the function. The Jobs' own variables come first, the
user's over them by name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.build import download_report
from function.build.pod import restricted_container_security, restricted_pod_security
from function.rules.merge import by_name

Env = list[dict[str, JsonValue]]

MOUNT_PATH: Final = "/mnt/models"
_HF_HOME: Final = "/tmp/.hf"  # noqa: S108 - the Pod's own emptyDir
RUN_AS: Final = 1000
DOWNLOAD_CONTAINER: Final = "download"
SIZE_CHECK_CONTAINER: Final = "size-check"
SIZE_CHECK_SCRIPT: Final = resources.files("function.build").joinpath("size_check.py").read_text()
VERIFY_CONTAINER: Final = "verify"
VERIFY_SCRIPT: Final = resources.files("function.build").joinpath("verify.py").read_text()
# Downloads may take hours; a Job's own retries cover a flaky network, not a wrong source.
DOWNLOAD_BACKOFF_LIMIT: Final = 2
TTL_AFTER_FINISHED_S: Final = 3600


def build_pvc(
    *, name: str, namespace: str, labels: Mapping[str, str], size: str, storage_class: str | None
) -> Manifest:
    """A ReadWriteMany claim: one download, mounted by every replica of every service."""
    spec: Manifest = {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": size}},
    }
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec,
    }


def build_download_job(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    image: str,
    source_uri: str,
    claim: str,
    env: Sequence[Mapping[str, JsonValue]],
    pull_secrets: Sequence[str],
    service_account: str | None = None,
    report: download_report.Reporting | None = None,
    checksums: Mapping[str, str] | None = None,
) -> Manifest:
    """A Job that downloads `source_uri` into the PVC `claim`, then verifies what it wrote.

    The download is an init container and the check against the source's published checksums
    (verify.py) the main one, so a Job completes only with verified files; `checksums` (sha256
    by path) are checked too, whatever the source. With `report`, a
    sidecar writes the bytes downloaded into the report's ConfigMap and stops an attempt that
    stalls; the pod shares its process namespace for that (the sidecar hides its token from the
    other containers before they start), and runs as the report's account.
    """
    job_env = _with_defaults(env, HF_HOME=_HF_HOME, TMPDIR="/tmp")  # noqa: S108 - an emptyDir
    container: Manifest = {
        "name": DOWNLOAD_CONTAINER,
        "image": image,
        "args": [source_uri, MOUNT_PATH],
        "env": [dict(e) for e in job_env],
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": restricted_container_security(),
        "volumeMounts": [
            {"name": "cache", "mountPath": MOUNT_PATH},
            {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 - the Pod's own emptyDir
        ],
    }
    verify: Manifest = {
        "name": VERIFY_CONTAINER,
        "image": image,
        "command": ["python3", "-c", VERIFY_SCRIPT, source_uri, MOUNT_PATH],
        "env": [dict(e) for e in _merged(job_env, _checksums_env(checksums))],
        "volumeMounts": [
            {"name": "cache", "mountPath": MOUNT_PATH, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 - the Pod's own emptyDir
        ],
    }
    volumes: list[JsonValue] = [
        {"name": "cache", "persistentVolumeClaim": {"claimName": claim}},
        {"name": "tmp", "emptyDir": {}},
    ]
    extra: Manifest = {"initContainers": [container]}
    if report is not None:
        volumes.extend(download_report.volumes())
        sidecar = download_report.sidecar(report, image=image, directory=MOUNT_PATH)
        # The sidecar first: it starts before the download and runs until the check ends.
        extra = {"shareProcessNamespace": True, "initContainers": [sidecar, container]}
    return job_manifest(
        name,
        namespace=namespace,
        labels=labels,
        container=verify,
        volumes=volumes,
        pull_secrets=pull_secrets,
        service_account=report.service_account if report else service_account,
        backoff_limit=DOWNLOAD_BACKOFF_LIMIT,
        pod=extra,
    )


def build_size_check_job(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    image: str,
    source_uri: str,
    env: Sequence[Mapping[str, JsonValue]],
    pull_secrets: Sequence[str],
    service_account: str | None = None,
) -> Manifest:
    """A Job that measures `source_uri` and leaves `{"sizeBytes": N}` in its termination message."""
    container: Manifest = {
        "name": SIZE_CHECK_CONTAINER,
        "image": image,
        "command": ["python3", "-c", SIZE_CHECK_SCRIPT, source_uri],
        "env": [dict(e) for e in _with_defaults(env, HF_HOME=_HF_HOME)],
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],  # noqa: S108 - an emptyDir
    }
    volumes: list[JsonValue] = [{"name": "tmp", "emptyDir": {}}]
    return job_manifest(
        name,
        namespace=namespace,
        labels=labels,
        container=container,
        volumes=volumes,
        pull_secrets=pull_secrets,
        service_account=service_account,
        backoff_limit=1,
    )


def job_manifest(  # noqa: PLR0913 - the parts the cache and adapter Jobs differ in
    name: str,
    *,
    namespace: str,
    labels: Mapping[str, str],
    container: Manifest,
    volumes: list[JsonValue],
    pull_secrets: Sequence[str],
    service_account: str | None,
    backoff_limit: int,
    pod: Manifest | None = None,
) -> Manifest:
    """A Job of one hardened container (non-root, `restricted`, no token) run once."""
    pod_spec: Manifest = {
        **(pod or {}),
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": restricted_pod_security(RUN_AS),
        "containers": [
            {
                **container,
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "securityContext": restricted_container_security(),
            }
        ],
        "volumes": volumes,
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
            "backoffLimit": backoff_limit,
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED_S,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }


def _with_defaults(env: Sequence[Mapping[str, JsonValue]], **defaults: str) -> Env:
    """`defaults` first, then `env` over them by name (as the operator's Jobs merge theirs)."""
    return _merged([{"name": k, "value": v} for k, v in defaults.items()], env)


def _merged(*layers: Sequence[Mapping[str, JsonValue]]) -> Env:
    """One entry per variable name, the last layer's winning in the first one's place."""
    return [dict(e) for e in by_name(layers, lambda e: str(e.get("name")))]


def _checksums_env(checksums: Mapping[str, str] | None) -> Env:
    """The user's sha256 by path, for the check (a map in a fixed order: the same Job spec)."""
    if not checksums:
        return []
    return [{"name": "AIM_CHECKSUMS", "value": json.dumps(dict(sorted(checksums.items())))}]
