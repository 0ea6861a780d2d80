"""A service's LoRA adapters: its adapter disk, the Job that stages adapters onto it, the mount.

The disk is a ReadWriteMany claim of the service's own: every replica mounts its `live/` read-only
at `/adapters`, where the AIM runtime finds one directory per adapter. The Job mounts the disk
read-write and each adapter's cache (an AIMModelCache of `type: adapter`, downloaded and verified
like a model's) read-only, and runs adapter_sync.py in the download image: what changed is
copied in and swapped live, what is no longer wanted removed. The pod spec names the disk, never
an adapter, so in dynamic mode the set changes without a restart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.build.storage import job_manifest

SYNC_CONTAINER: Final = "stage"
SYNC_SCRIPT: Final = resources.files("function.build").joinpath("adapter_sync.py").read_text()
DISK_PATH: Final = "/adapter-disk"
SOURCES_PATH: Final = "/sources"
LIVE_DIR: Final = "live"
"""The disk's directory the inference pods mount (`subPath`)."""
MOUNT_PATH: Final = "/adapters"
"""Where the inference container finds its adapters: AIM_ADAPTER_SOURCE."""
BACKOFF_LIMIT: Final = 2


@dataclass(frozen=True)
class Staged:
    """One adapter for the Job.

    Its name is its directory and the model id clients ask for; `claim` is its cache's, `key`
    identifies its bytes, and `rank` is what its cache declares.
    """

    name: str
    claim: str
    key: str
    rank: int | None = None


def build_adapter_job(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    image: str,
    disk: str,
    adapters: Sequence[Staged],
    max_rank: int | None,
    pull_secrets: Sequence[str],
) -> Manifest:
    """A Job bringing the claim `disk` to `adapters`; its verdict is its termination message."""
    wanted = [
        {"name": a.name, "source": f"{SOURCES_PATH}/{a.name}", "key": a.key, "rank": a.rank}
        for a in adapters
    ]
    env: list[JsonValue] = [
        {"name": "AIM_ADAPTERS", "value": json.dumps(wanted, separators=(",", ":"))},
        {"name": "AIM_ADAPTER_MAX_RANK", "value": "" if max_rank is None else str(max_rank)},
    ]
    mounts: list[JsonValue] = [{"name": "disk", "mountPath": DISK_PATH}]
    volumes: list[JsonValue] = [{"name": "disk", "persistentVolumeClaim": {"claimName": disk}}]
    for i, a in enumerate(adapters):
        volume = f"adapter-{i}"
        mounts.append({"name": volume, "mountPath": f"{SOURCES_PATH}/{a.name}", "readOnly": True})
        claim: Manifest = {"claimName": a.claim, "readOnly": True}
        volumes.append({"name": volume, "persistentVolumeClaim": claim})
    container: Manifest = {
        "name": SYNC_CONTAINER,
        "image": image,
        "command": ["python3", "-c", SYNC_SCRIPT, DISK_PATH],
        "env": env,
        "volumeMounts": mounts,
    }
    return job_manifest(
        name,
        namespace=namespace,
        labels=labels,
        container=container,
        volumes=volumes,
        pull_secrets=pull_secrets,
        service_account=None,
        backoff_limit=BACKOFF_LIMIT,
    )
