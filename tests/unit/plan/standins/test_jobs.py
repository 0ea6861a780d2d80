"""What a container of the function's Jobs prints on the simulated node, by its role: the one
decision `aim plan`, devtools and the journeys share (aim_plan/standins/jobs.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aim_plan.standins import jobs, kubelet
from function.kube.jobs import pod_message
from tests.cases import Case, table

DRY_RUN = json.dumps([{"filename": "vllm-mi300x-fp8-tp1-latency.yaml"}])


def answers() -> jobs.Answers:
    """A node whose image answers every dry-run with `DRY_RUN` and that knows one source's size."""
    return jobs.Answers(lambda _: (0, DRY_RUN), sizes={"hf://org/known": 16 * 2**30})


@dataclass(frozen=True)
class Role(Case):
    """A container of one of our Jobs, and the exit code and message it leaves."""

    container: dict[str, Any]
    code: int
    said: Any = field(default=None)
    """The termination message, decoded from JSON where it is."""


def script(name: str, *args: str, **env: str) -> dict[str, Any]:
    """A container running a script with `args`, as function/build writes the Jobs' containers."""
    return {
        "name": name,
        "image": "ghcr.io/acme/model:1",
        "command": ["python3", "-c", "...", *args],
        "env": [{"name": k, "value": v} for k, v in env.items()],
    }


ADAPTERS = json.dumps([{"name": "a"}, {"name": "b"}])
ROLES = [
    Role(
        "discovery",
        "answers with the caller's dry-run",
        script("discovery"),
        0,
        json.loads(DRY_RUN),
    ),
    Role(
        "size-check",
        "measures a source the caller knows the size of",
        script("size-check", "hf://org/known"),
        0,
        {"url": "hf://org/known", "sizeBytes": 16 * 2**30},
    ),
    Role(
        "size-check-unknown",
        "fails as the Hugging Face client does for a source no one serves",
        script("size-check", "hf://org/missing"),
        1,
        "Repository Not Found for url: hf://org/missing",
    ),
    Role(
        "verify-hf",
        "a Hugging Face download is held to the hub's hashes",
        script("verify", "hf://org/known", "/cache"),
        0,
        {"method": "huggingface-sha256", "files": 1, "bytes": 1},
    ),
    Role(
        "verify-s3",
        "a bucket publishes no checksums, as the real check says naming the scheme",
        script("verify", "s3://bucket/model", "/cache"),
        0,
        {"method": "none", "reason": "s3:// publishes no checksums"},
    ),
    Role(
        "stage",
        "a service's adapter staging stages every adapter it is given",
        script("stage", "/disk", AIM_ADAPTERS=ADAPTERS),
        0,
        {"staged": 2, "removed": 0, "failed": {}},
    ),
    Role(
        "unknown",
        "a container of no role of ours is not guessed at: it fails, saying so",
        script("etl"),
        1,
        "the simulated node does not know container etl",
    ),
]


@table(ROLES)
def test_each_role_prints_what_the_function_reads_from_its_pod(case: Role) -> None:
    """The container's exit, put in its Job's Pod by the kubelet's stand-in, is what the function
    reads as the Job's result, in the phase the exit code gives."""
    code, message = jobs.runs(case.container, answers())
    assert code == case.code, case.reason
    job = {"metadata": {"name": "j", "namespace": "ns", "uid": "job-uid"}}
    state = kubelet.exited(code, message, "2025-01-01T00:00:00Z")
    status = kubelet.pod_status([case.container], kubelet.phase_after(code), state)
    pod = kubelet.job_pod(job, "x", status)
    read = pod_message([pod], case.container["name"], "Succeeded" if code == 0 else "Failed")
    assert read is not None, case.reason
    said = read if isinstance(case.said, str) else json.loads(read)
    assert said == case.said, case.reason


def test_a_job_whose_pod_failed_is_failed_for_good() -> None:
    """The stand-in's containers print the same on every retry, so the Job controller's verdict
    counts the Job's whole back-off as spent: the function sees it Failed at once."""
    job = {"metadata": {"name": "j"}, "spec": {"backoffLimit": 2}}
    status = jobs.job_status(job, 1, "2025-01-01T00:00:00Z")
    assert status["failed"] == 3
    assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
        ("Failed", "BackoffLimitExceeded")
    ]
    done = jobs.job_status(job, 0, "2025-01-01T00:00:00Z")
    assert (done["succeeded"], done["conditions"][0]["type"]) == (1, "Complete")


def test_the_progress_sidecar_reports_every_byte_downloaded_and_no_stall() -> None:
    """What the download's progress sidecar last writes: the function shows the bytes and reads
    an empty `stalled` as a download still moving."""
    data = jobs.progress(1 << 30, "2025-01-01T00:00:00Z")
    assert data == {
        "downloadedBytes": str(1 << 30),
        "grewAt": "2025-01-01T00:00:00Z",
        "updatedAt": "2025-01-01T00:00:00Z",
        "stalled": "",
    }
