"""What the containers of the function's Jobs do on a node, and the Job controller's verdict.

No node runs where the function is tried, so no container runs either: each prints what the real
one would, by its role (the container's name, `function/build`):

- `discovery` prints its AIM image's `dry-run --format=json`; only the caller knows the image
  (`Answers.dry_run`: the plan answers from the model's metadata, the end-to-end tier from its
  test images);
- `size-check` prints the source's size, where the caller knows it (`Answers.sizes`), or fails;
- `verify`, after its download (an init container, which succeeded), prints what the check
  prints for whole files by the source's scheme: Hugging Face's hashes held, no checksums else;
- `stage`, a service's adapter staging, stages every adapter it is given: no volume holds bytes
  here (the script itself runs on real directories in tests/unit/builders, and on the
  end-to-end tier's real node in test_node.py);
- any other container is none of ours: the node does not know what it would print, and fails it.

Around them, the download's progress sidecar reports the bytes the download left, and where no
Job controller runs (`aim plan`) the Job's status is what it writes when its one Pod ends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aim_plan.standins.conditions import true
from function.build.adapters import SYNC_CONTAINER
from function.build.job import CONTAINER as DISCOVERY
from function.build.storage import SIZE_CHECK_CONTAINER, VERIFY_CONTAINER

Exit = tuple[int, str]
"""A container's exit code and termination message."""


def not_found(uri: str) -> str:
    """Why a size check of a source no one serves fails, as the Hugging Face client says it."""
    return f"Repository Not Found for url: {uri}"


@dataclass(frozen=True)
class Answers:
    """What only the caller knows of the world outside the cluster, which the containers ask."""

    dry_run: Callable[[Mapping[str, Any]], Exit]
    """The discovery container's exit: its image's dry-run for its environment, or why not."""
    sizes: Mapping[str, int] = field(default_factory=dict)
    """The size in bytes of each source a size check may measure, by URI."""
    unsized: Callable[[str], str] = not_found
    """Why the size check of a URI not in `sizes` fails."""


def literal_env(container: Mapping[str, Any]) -> dict[str, str]:
    """A container's environment variables given by value (not from a Secret or a field)."""
    return {str(e["name"]): str(e["value"]) for e in container.get("env") or [] if "value" in e}


def runs(container: Mapping[str, Any], answers: Answers) -> Exit:
    """What `container` of one of the function's Jobs exits with, by its role."""
    name = container.get("name")
    command = [str(arg) for arg in container.get("command") or []]
    if name == DISCOVERY:
        return answers.dry_run(container)
    if name == SIZE_CHECK_CONTAINER:
        uri = command[-1] if command else ""
        if uri not in answers.sizes:
            return 1, answers.unsized(uri)
        return 0, json.dumps({"url": uri, "sizeBytes": answers.sizes[uri]})
    if name == VERIFY_CONTAINER:
        uri = command[-2] if len(command) > 1 else ""
        return 0, json.dumps(verdict(uri))
    if name == SYNC_CONTAINER:
        wanted = json.loads(literal_env(container).get("AIM_ADAPTERS", "[]"))
        return 0, json.dumps({"staged": len(wanted), "removed": 0, "failed": {}})
    return 1, f"the simulated node does not know container {name}"


def verdict(uri: str) -> dict[str, Any]:
    """What the download's check prints of whole files from `uri` (`function/build/verify.py`)."""
    scheme = uri.partition("://")[0]
    if scheme == "hf":
        return {"method": "huggingface-sha256", "files": 1, "bytes": 1}
    return {"method": "none", "reason": f"{scheme}:// publishes no checksums"}


def progress(downloaded: int, at: str) -> dict[str, str]:
    """The data the download's progress sidecar last writes into its report ConfigMap."""
    return {"downloadedBytes": str(downloaded), "grewAt": at, "updatedAt": at, "stalled": ""}


def job_status(job: Mapping[str, Any], code: int, at: str) -> dict[str, Any]:
    """The Job's status once its one Pod ended with `code`: Complete, or Failed for good.

    Failed for good at once: the stand-in's containers print the same on every retry.
    """
    status: dict[str, Any] = {"startTime": at}
    if code == 0:
        status |= {"succeeded": 1, "completionTime": at}
        status["conditions"] = [true("Complete", at, "Completed")]
    else:
        status["failed"] = int((job.get("spec") or {}).get("backoffLimit") or 0) + 1
        status["conditions"] = [true("Failed", at, "BackoffLimitExceeded")]
    return status
