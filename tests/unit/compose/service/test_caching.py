"""Caching: sizing, names, failure reasons, and the model cache, template cache and service
composers through Crossplane's requirements loop (Job, Pod and PVC status written by hand: no
Job controller, kubelet or storage provisioner runs in unit tests).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from function.api.common import EnvVar
from function.api.meta import Kind
from function.compose.cache import compose_model_cache, compose_template_cache
from function.compose.cache.steps import DOWNLOAD_JOB, PVC, SIZE_CHECK_JOB
from function.compose.service import INFERENCE_SERVICE, TEMPLATE_CACHE, compose_service
from function.compose.template import TEMPLATE_CACHE as OWN_CACHE
from function.compose.template import compose_template
from function.kube.contract import Composition, Observed
from function.rules import caching, quantity
from function.rules.status import Reason
from tests import simulated
from tests.cases import Case, table
from tests.unit import loop
from tests.unit.columns import column_value

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"


def tree(value: object) -> Any:
    return value


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def message(comp: Composition, kind: str) -> str:
    return next(c.message for c in comp.conditions if c.type == kind)


# --- sizing, names, reasons ----------------------------------------------------------------------


@dataclass(frozen=True)
class SizeCase(Case):
    size: int
    headroom: int
    want: str


SIZE_CASES = [
    SizeCase(
        "operator", "the operator's own example sizes the same here", 9_094_593_249, 10, "10Gi"
    ),
    SizeCase("tiny", "a volume is at least 1Gi", 100 * 2**20, 10, "1Gi"),
    SizeCase("round-up", "17.6 GiB is rounded up, never down", 16 * 2**30, 10, "18Gi"),
    SizeCase("no-headroom", "0% headroom is exactly the weights", 16 * 2**30, 0, "16Gi"),
    SizeCase("headroom", "the percentage applies to the source size", 61 * 2**30, 25, "77Gi"),
]


@table(SIZE_CASES)
def test_pvc_size_is_the_source_plus_headroom_rounded_up_to_gib(case: SizeCase) -> None:
    """A cache's volume has room for its weights plus headroom, in whole GiB."""
    assert quantity.with_headroom_gib(case.size, case.headroom) == case.want, case.reason


@dataclass(frozen=True)
class BytesCase(Case):
    text: str
    want: float


BYTES_CASES = [
    BytesCase("binary", "Gi is 2^30", "16Gi", 16 * 2**30),
    BytesCase("mebi", "Mi is 2^20", "512Mi", 512 * 2**20),
    BytesCase("plain", "a size check's byte count has no suffix", "17244293365", 17244293365),
    BytesCase("decimal", "G is 10^9, and fractions are allowed", "1.5G", 1.5e9),
    BytesCase("exponent", "the API server accepts exponents", "1e3", 1000),
    BytesCase("sign", "...and a leading sign", "+5Gi", 5 * 2**30),
    BytesCase("leading-dot", "...and a leading dot", ".5Gi", 2**29),
]


@table(BYTES_CASES)
def test_quantities_to_bytes(case: BytesCase) -> None:
    """Sizes in every Kubernetes notation read as the same byte counts."""
    assert quantity.to_bytes(case.text) == case.want, case.reason


def test_model_cache_names_are_the_operators_shape_and_differ_by_env_and_class() -> None:
    """Cache names match the operator's; caches that would download differently differ."""
    name = caching.model_cache_name("hf://Qwen/Qwen2-0.5B", [], None)
    assert name.startswith("hf---qwen-qwen2-0-5b-")
    assert len(name.rsplit("-", 1)[1]) == 10
    with_env = caching.model_cache_name("hf://Qwen/Qwen2-0.5B", [EnvVar(name="A", value="1")], None)
    with_class = caching.model_cache_name("hf://Qwen/Qwen2-0.5B", [], "nfs")
    assert len({name, with_env, with_class}) == 3
    long_name = caching.model_cache_name("s3://bucket/" + "x" * 120, [], None)
    assert len(long_name) <= 63


@dataclass(frozen=True)
class FailureCase(Case):
    log: str
    want: Reason


FAILURE_CASES = [
    FailureCase(
        "hf-401",
        "a missing or wrong HF_TOKEN: fix the credentials, not the source",
        "401 Client Error: Unauthorized for url: https://huggingface.co/api/models/x",
        Reason.CACHE_UNAUTHORIZED,
    ),
    FailureCase(
        "hf-gated",
        "a gated repository is a credentials problem too",
        "Cannot access gated repo for url",
        Reason.CACHE_UNAUTHORIZED,
    ),
    FailureCase(
        "s3-key",
        "S3's wrong key is the same reason as Hugging Face's",
        "botocore.exceptions.ClientError: InvalidAccessKeyId",
        Reason.CACHE_UNAUTHORIZED,
    ),
    FailureCase(
        "hf-404",
        "a misspelt repository: fix the source URI",
        "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error",
        Reason.CACHE_SOURCE_NOT_FOUND,
    ),
    FailureCase(
        "s3-bucket",
        "a missing bucket is a missing source",
        "An error occurred (NoSuchBucket) when calling ListObjectsV2",
        Reason.CACHE_SOURCE_NOT_FOUND,
    ),
    FailureCase(
        "disk-full",
        "a volume too small: raise the size or headroom",
        "OSError: [Errno 28] No space left on device",
        Reason.CACHE_STORAGE_FULL,
    ),
    FailureCase(
        "unknown",
        "anything else is a plain failed download, never a guess",
        "downloaded 4011 files, then Killed",
        Reason.CACHE_DOWNLOAD_FAILED,
    ),
]


@table(FAILURE_CASES)
def test_failures_are_told_apart(case: FailureCase) -> None:
    """A download's failure is classified, so the condition says what to fix."""
    assert caching.classify_failure(case.log)[0] is case.want, case.reason


@dataclass(frozen=True)
class SizeOutputCase(Case):
    output: str


SIZE_OUTPUT_CASES = [
    SizeOutputCase("empty", "a size check that printed nothing", ""),
    SizeOutputCase("not-json", "a size check that printed something else", "oops"),
    SizeOutputCase("zero", "no model is zero bytes", '{"sizeBytes": 0}'),
    SizeOutputCase("string", "a byte count is a number", '{"sizeBytes": "12"}'),
    SizeOutputCase("huge", "1e30 bytes is no disk", '{"sizeBytes": 1e30}'),
]


@table(SIZE_OUTPUT_CASES)
def test_a_size_check_result_must_be_a_sane_byte_count(case: SizeOutputCase) -> None:
    """A size check's output is trusted only when it is a plausible byte count."""
    with pytest.raises(ValueError, match="sizeBytes"):
        caching.parse_size(case.output)


# --- AIMModelCache -------------------------------------------------------------------------------


def model_cache(status: dict[str, Any] | None = None, **spec: Any) -> Any:
    body = {"sourceUri": "hf://Org/Model", "modelId": "Org/Model", **spec}
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": "AIMModelCache",
        "metadata": {"name": "org-model", "namespace": NS},
        "spec": body,
    }
    if status is not None:
        out["status"] = status
    return out


def reconcile(
    composer: Any, xr: Any, pool: list[Any] | None = None, **observed: Any
) -> Composition:
    return loop.reconcile(composer, Observed(xr, **observed), pool or [])


def with_status(obj: Any, **status: Any) -> Any:
    return {**obj, "status": status}


def complete(job: Any) -> Any:
    return with_status(job, succeeded=1, conditions=[{"type": "Complete", "status": "True"}])


def failed(job: Any) -> Any:
    return with_status(job, failed=2, conditions=[{"type": "Failed", "status": "True"}])


def pod(job: Any, phase: str, msg: str, container: str) -> Any:
    out = simulated.discovery_pod(job, phase, message=msg)
    out["status"]["containerStatuses"][0]["name"] = container
    return out


def test_without_a_size_a_size_check_runs_first() -> None:
    """A source of unknown size is measured before any volume is made."""
    comp = reconcile(compose_model_cache, model_cache())
    assert set(comp.resources) == {SIZE_CHECK_JOB}
    job = tree(comp.resources[SIZE_CHECK_JOB].manifest)
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["python3", "-c"]
    assert container["command"][-1] == "hf://Org/Model"
    assert comp.status["status"] == "Pending"


def test_a_measured_size_is_kept_and_the_pvc_and_download_follow() -> None:
    """The measured size is recorded, then the volume and the download follow."""
    first = reconcile(compose_model_cache, model_cache())
    job = tree(first.resources[SIZE_CHECK_JOB].manifest)
    pods = [pod(job, "Succeeded", json.dumps({"sizeBytes": 16 * 2**30}), "size-check")]
    comp = reconcile(
        compose_model_cache, model_cache(), pods, resources={SIZE_CHECK_JOB: complete(job)}
    )

    assert comp.status["size"] == "16Gi"
    assert SIZE_CHECK_JOB not in comp.resources  # its result is in status now
    pvc = tree(comp.resources[PVC].manifest)
    assert pvc["spec"]["resources"]["requests"]["storage"] == "18Gi"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert DOWNLOAD_JOB in comp.resources


def test_storage_class_and_headroom_come_from_the_runtime_config() -> None:
    """The platform's runtime config decides the storage class and headroom."""
    config = {
        "apiVersion": API,
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": "default", "namespace": NS},
        "spec": {"defaultStorageClassName": "nfs-rwx", "pvcHeadroomPercent": 50},
    }
    comp = reconcile(compose_model_cache, model_cache(size="10Gi"), [config])
    pvc = tree(comp.resources[PVC].manifest)
    assert pvc["spec"]["storageClassName"] == "nfs-rwx"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "15Gi"


def test_a_size_the_api_server_accepts_but_no_disk_has_is_a_condition_not_a_crash() -> None:
    """An absurd size becomes a condition naming the field, not an error."""
    comp = reconcile(compose_model_cache, model_cache(size="-5Gi"))
    assert conditions(comp)["SizeKnown"] == ("False", "InvalidSpec")
    assert "spec.size" in message(comp, "SizeKnown")
    assert comp.status["status"] == "Failed"
    assert comp.resources == {}


def test_a_model_cache_is_ready_exactly_when_it_is_available() -> None:
    """Crossplane would call a cache that composed nothing Ready (nothing of it is unready): the
    XR's Ready follows the cache's headline instead, so a failed cache is not Ready and an
    available one is."""
    failed_cache = reconcile(compose_model_cache, model_cache(size="-5Gi"))
    assert failed_cache.resources == {}
    assert failed_cache.ready is False

    _, pvc, job = downloading()
    done = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        resources={PVC: pvc, DOWNLOAD_JOB: complete(job)},
    )
    assert done.status["status"] == "Available"
    assert done.ready is True


def test_the_download_job_is_hardened_and_gets_credentials_only_from_the_users_env() -> None:
    """The download runs restricted and sees only the credentials the user gave."""
    secret_env = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}}
    comp = reconcile(compose_model_cache, model_cache(size="1Gi", env=[secret_env]))
    job = tree(comp.resources[DOWNLOAD_JOB].manifest)
    pod_spec = job["spec"]["template"]["spec"]
    sidecar, container = pod_spec["initContainers"]
    [verify] = pod_spec["containers"]
    assert container["args"] == ["hf://Org/Model", "/mnt/models"]
    assert secret_env in container["env"]
    assert secret_env in verify["env"], "the check asks the Hub for hashes as the download does"
    assert secret_env not in sidecar["env"], "the reporter needs no source credentials"
    assert verify["command"][-2:] == ["hf://Org/Model", "/mnt/models"]
    assert pod_spec["securityContext"]["runAsNonRoot"] is True
    for c in (sidecar, container, verify):
        assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}, c["name"]
    assert pod_spec["volumes"][0]["persistentVolumeClaim"]["claimName"] == "org-model-cache"
    assert "HF_TOKEN" not in json.dumps(comp.status)


def downloading() -> tuple[Composition, Any, Any]:
    comp = reconcile(compose_model_cache, model_cache(size="1Gi"))
    pvc = with_status(tree(comp.resources[PVC].manifest), phase="Bound")
    return comp, pvc, tree(comp.resources[DOWNLOAD_JOB].manifest)


def test_a_finished_download_makes_the_cache_available_and_drops_the_job() -> None:
    """A finished download makes the cache Available and removes its Job."""
    _, pvc, job = downloading()
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        resources={PVC: pvc, DOWNLOAD_JOB: complete(job)},
    )
    assert comp.status["status"] == "Available"
    assert comp.status["persistentVolumeClaim"] == "org-model-cache"
    assert DOWNLOAD_JOB not in comp.resources
    assert comp.resources[PVC].ready is True

    # Latched: the next reconcile, without the Job, stays Available.
    again = reconcile(
        compose_model_cache, model_cache(comp.status, size="1Gi"), resources={PVC: pvc}
    )
    assert again.status["status"] == "Available"
    assert DOWNLOAD_JOB not in again.resources


def test_a_download_says_which_attempt_runs_and_why_the_last_one_failed() -> None:
    """A user watching a slow download sees its protocol and attempt in status, and, on a
    retry, what the failed attempt said, without waiting for the last attempt to fail."""
    _, pvc, job = downloading()
    first = reconcile(
        compose_model_cache, model_cache(size="1Gi"), resources={PVC: pvc, DOWNLOAD_JOB: job}
    )
    assert first.status["download"] == {
        "protocol": "hf",
        "attempt": 1,
        "totalAttempts": 3,
        "totalBytes": 2**30,
    }
    assert "(attempt 1 of 3)" in message(first, "DownloadReady")

    retrying = with_status(job, failed=1, active=1)
    failed_pod = pod(job, "Failed", "ConnectionResetError: reset by peer", "download")
    second = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[failed_pod],
        resources={PVC: pvc, DOWNLOAD_JOB: retrying},
    )
    assert tree(second.status)["download"]["attempt"] == 2
    said = message(second, "DownloadReady")
    assert "(attempt 2 of 3); attempt 1 failed: ConnectionResetError: reset by peer" in said

    took_two = {"failed": 1, "succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    done = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        resources={PVC: pvc, DOWNLOAD_JOB: {**complete(job), "status": took_two}},
    )
    assert tree(done.status)["download"]["attempt"] == 2
    # Once Available the Job is gone, and so is the attempt count.
    later = reconcile(
        compose_model_cache, model_cache(done.status, size="1Gi"), resources={PVC: pvc}
    )
    assert "download" not in later.status


def report(**data: str) -> Any:
    """The download report's ConfigMap as the progress sidecar leaves it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "org-model-download-report", "namespace": NS},
        "data": data,
    }


def test_a_download_reports_its_progress_through_the_fixed_role_and_an_account_of_its_own() -> None:
    """The download Job gets a sidecar that writes bytes into a ConfigMap of its own, as an
    account made for the download and bound (in this namespace) to the one ClusterRole the
    platform installs: no Role is composed. Only the sidecar mounts the token, and the download
    starts only once the sidecar has hidden it (its startup probe). The bytes written come back in
    status and in the condition's message."""
    comp, pvc, job = downloading()
    objects = {k: tree(d.manifest) for k, d in comp.resources.items()}
    assert not [o for o in objects.values() if o["kind"] in {"Role", "ClusterRole"}]
    binding = objects["download-progress-binding"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "aim-crossplane:download-progress",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "org-model-download", "namespace": NS}
    ]
    assert binding["metadata"]["namespace"] == NS
    # Not the name an earlier version's binding to a Role had: a roleRef cannot be changed.
    assert binding["metadata"]["name"] == "org-model-download"
    assert "download-report-binding" not in objects, "an earlier binding's key: Crossplane drops it"
    assert "download-report-role" not in objects, "and the Role it bound"
    assert objects["download-account"]["automountServiceAccountToken"] is False
    assert objects["download-report"]["metadata"]["name"] == "org-model-download-report"
    assert "data" not in objects["download-report"], "the sidecar owns the data"
    pod_spec = job["spec"]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == "org-model-download"
    assert pod_spec["automountServiceAccountToken"] is False
    assert pod_spec["shareProcessNamespace"] is True
    sidecar, download = pod_spec["initContainers"]
    assert sidecar["restartPolicy"] == "Always", "a native sidecar: ends with the download"
    probe = " ".join(sidecar["startupProbe"]["exec"]["command"])
    guarded = {e["name"]: e.get("value") for e in sidecar["env"]}["AIM_PROGRESS_GUARDED"]
    assert guarded in probe, "the download waits for the file the sidecar writes once guarded"
    mounts = {m["name"]: m for m in sidecar["volumeMounts"]}
    assert mounts["cache"]["readOnly"] is True
    assert "report-token" in mounts
    [verify] = pod_spec["containers"]
    for c in (download, verify):
        assert "report-token" not in {m["name"] for m in c["volumeMounts"]}, c["name"]

    halfway = report(
        downloadedBytes=str(2**29), grewAt="2026-01-01T00:10:00Z", updatedAt="2026-01-01T00:10:05Z"
    )
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[halfway],
        resources={PVC: pvc, DOWNLOAD_JOB: job},
    )
    assert tree(comp.status)["download"] == {
        "protocol": "hf",
        "attempt": 1,
        "totalAttempts": 3,
        "downloadedBytes": 2**29,
        "totalBytes": 2**30,
        "percent": 50,
        "updatedAt": "2026-01-01T00:10:05Z",
        "grewAt": "2026-01-01T00:10:00Z",
    }
    assert "(attempt 1 of 3): 0.5 GiB of 1.0 GiB (50%)" in message(comp, "DownloadReady")
    # `kubectl get aimmodelcaches` shows it in the PROGRESS column.
    assert column_value(Kind.MODEL_CACHE, "Progress", {"status": tree(comp.status)}) == 50

    done = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[halfway],
        resources={PVC: pvc, DOWNLOAD_JOB: complete(job)},
    )
    assert tree(done.status)["download"]["percent"] == 100
    assert not {"download-report", "download-progress-binding", "download-account"} & set(
        done.resources
    ), "the rights to report end with the download"


def test_a_runtime_config_s_account_runs_the_size_check_but_never_the_download() -> None:
    """The runtime config's service account is for discovery and size checks: an account the
    inference pods may share must not carry the download's right to write its report (any of
    those pods could forge its progress). The download runs as its own account."""
    config = {
        "apiVersion": API,
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": "default", "namespace": NS},
        "spec": {"serviceAccountName": "team-runtime"},
    }
    measuring = reconcile(compose_model_cache, model_cache(), pool=[config])
    size_check = tree(measuring.resources[SIZE_CHECK_JOB].manifest)
    assert size_check["spec"]["template"]["spec"]["serviceAccountName"] == "team-runtime"
    comp = reconcile(compose_model_cache, model_cache(size="1Gi"), pool=[config])
    binding = tree(comp.resources["download-progress-binding"].manifest)
    assert binding["subjects"][0]["name"] == "org-model-download"
    job = tree(comp.resources[DOWNLOAD_JOB].manifest)
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == "org-model-download"
    assert tree(comp.resources["download-account"].manifest)["metadata"]["name"] == (
        "org-model-download"
    )


@dataclass(frozen=True)
class Hostile(Case):
    data: dict[str, Any]


HOSTILE_REPORTS = [
    Hostile(
        "words-for-bytes",
        "a pod may write anything: not a number is no number",
        {"downloadedBytes": "lots"},
    ),
    Hostile("negative", "a sign is not a digit", {"downloadedBytes": "-5"}),
    Hostile("huge", "more digits than an int64 holds", {"downloadedBytes": "9" * 40}),
    Hostile(
        "unicode-digits",
        "digits of other scripts are not ASCII digits",
        {"downloadedBytes": "\u0663"},
    ),
    Hostile("bad-time", "a time that is no time", {"grewAt": "yesterday", "updatedAt": "9" * 500}),
]


@table(HOSTILE_REPORTS)
def test_a_hostile_report_is_ignored_not_believed(case: Hostile) -> None:
    """Whatever the report holds, the cache composes and records no made-up progress."""
    _, pvc, job = downloading()
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[report(**case.data)],
        resources={PVC: pvc, DOWNLOAD_JOB: job},
    )
    status = tree(comp.status)["download"]
    assert "downloadedBytes" not in status
    assert "grewAt" not in status
    assert "percent" not in status
    assert comp.status["status"] == "Progressing"


def test_a_verified_download_records_its_check_and_keeps_it() -> None:
    """The Job completes only once its check passed; the cache records how the files were
    checked, says so when the download ends, and keeps it once Available."""
    _, pvc, job = downloading()
    checked = json.dumps({"method": "huggingface-sha256", "files": 7, "bytes": 2**30})
    done = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[pod(job, "Succeeded", checked, "verify")],
        resources={PVC: pvc, DOWNLOAD_JOB: complete(job)},
    )
    assert done.status["verification"] == {
        "method": "huggingface-sha256",
        "files": 7,
        "bytes": 2**30,
    }
    assert "7 file(s) match the source's huggingface-sha256 checksums" in message(
        done, "DownloadReady"
    )
    later = reconcile(
        compose_model_cache, model_cache(done.status, size="1Gi"), resources={PVC: pvc}
    )
    assert later.status["verification"] == done.status["verification"]


def test_a_running_download_job_of_an_older_shape_is_kept_as_it_is() -> None:
    """A Job's pod template is immutable: after an upgrade, a download Job made by the older
    function (one container, no sidecar or check) is kept as it was, not re-applied in the new
    shape, which the API server would refuse and so fail the reconcile."""
    _, pvc, job = downloading()
    old_pod = {
        "restartPolicy": "Never",
        "containers": [{"name": "download", "image": "kserve/storage-initializer:v0.15.0"}],
    }
    older = {**job, "spec": {**job["spec"], "template": {"spec": old_pod}}}
    comp = reconcile(
        compose_model_cache, model_cache(size="1Gi"), resources={PVC: pvc, DOWNLOAD_JOB: older}
    )
    assert tree(comp.resources[DOWNLOAD_JOB].manifest)["spec"] == older["spec"]
    assert comp.status["status"] == "Progressing"


def test_checksums_the_user_gives_reach_the_check_alone() -> None:
    """spec.checksums go to the check (verify.py), in a fixed order so the Job never changes."""
    given = {"b.bin": "b" * 64, "a.bin": "a" * 64}
    comp = reconcile(compose_model_cache, model_cache(size="1Gi", checksums=given))
    pod_spec = tree(comp.resources[DOWNLOAD_JOB].manifest)["spec"]["template"]["spec"]
    [verify] = pod_spec["containers"]
    env = {e["name"]: e.get("value") for e in verify["env"]}
    assert json.loads(env["AIM_CHECKSUMS"]) == given
    assert env["AIM_CHECKSUMS"].index("a.bin") < env["AIM_CHECKSUMS"].index("b.bin")
    _, download = pod_spec["initContainers"]
    assert "AIM_CHECKSUMS" not in {e["name"] for e in download["env"]}


def test_a_download_that_never_matches_its_source_is_failed_with_the_file() -> None:
    """Every attempt downloaded files whose hashes differ from the Hub's: ChecksumMismatch,
    naming the file, rather than an Available cache of corrupt weights."""
    _, pvc, job = downloading()
    said = json.dumps({"error": "checksum mismatch: model.safetensors is ab12, the Hub says cd34"})
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[pod(job, "Failed", said, "verify")],
        resources={PVC: pvc, DOWNLOAD_JOB: failed(job)},
    )
    assert conditions(comp)["DownloadReady"] == ("False", "ChecksumMismatch")
    assert "model.safetensors is ab12, the Hub says cd34" in message(comp, "DownloadReady")
    assert comp.status["status"] == "Failed"


def test_a_download_that_stalled_on_its_last_attempt_says_so() -> None:
    """The sidecar stopped an attempt that wrote nothing for the stall timeout; when the Job has
    no attempts left, the cache is Failed with DownloadStalled and what the sidecar saw."""
    _, pvc, job = downloading()
    stalled = report(
        downloadedBytes="1000",
        stalled="no growth for 600s at 1000 bytes; the attempt was stopped",
    )
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[stalled],
        resources={PVC: pvc, DOWNLOAD_JOB: failed(job)},
    )
    assert conditions(comp)["DownloadReady"] == ("False", "DownloadStalled")
    said = message(comp, "DownloadReady")
    assert "no growth for 600s at 1000 bytes" in said
    assert "--download-stall-timeout" in said
    assert comp.status["status"] == "Failed"


def test_a_download_pod_that_cannot_start_fails_the_cache_until_it_can() -> None:
    """A download pod the kubelet cannot start (its HF token Secret is missing) would leave the
    cache "downloading" forever: it is Failed with the kubelet's words and the Job is kept, so
    creating the Secret lets the same pod start and the cache go on."""
    _, pvc, job = downloading()
    stuck = pod(job, "Pending", "", "download")
    stuck["status"]["containerStatuses"][0]["state"] = {
        "waiting": {
            "reason": "CreateContainerConfigError",
            "message": 'secret "hf-token" not found',
        }
    }
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        pool=[stuck],
        resources={PVC: pvc, DOWNLOAD_JOB: with_status(job, active=1)},
    )
    assert comp.status["status"] == "Failed"
    said = message(comp, "DownloadReady")
    assert 'CreateContainerConfigError: secret "hf-token" not found' in said
    assert "pull secrets in use: none" in said
    assert DOWNLOAD_JOB in comp.resources  # kept: the kubelet keeps trying

    started = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        resources={PVC: pvc, DOWNLOAD_JOB: with_status(job, active=1)},
    )
    assert started.status["status"] == "Progressing"


def test_a_lost_pvc_is_downloaded_again() -> None:
    """A cache whose volume vanished downloads again instead of claiming to be Available."""
    comp = reconcile(
        compose_model_cache, model_cache({"status": "Available"}, size="1Gi"), resources={}
    )
    assert comp.status["status"] != "Available"
    assert DOWNLOAD_JOB in comp.resources


@dataclass(frozen=True)
class FailedDownloadCase(Case):
    log: str
    want: str


FAILED_DOWNLOAD_CASES = [
    FailedDownloadCase(
        "unauthorized",
        "the reason a user fixes with credentials reaches the condition",
        "requests.exceptions.HTTPError: 401 Client Error: Unauthorized",
        "DownloadUnauthorized",
    ),
    FailedDownloadCase(
        "not-found",
        "the reason a user fixes in sourceUri reaches the condition",
        "RepositoryNotFoundError: 404 Client Error",
        "SourceNotFound",
    ),
    FailedDownloadCase(
        "full",
        "the reason a user fixes with a larger size reaches the condition",
        "OSError: [Errno 28] No space left on device",
        "StorageFull",
    ),
]


@table(FAILED_DOWNLOAD_CASES)
def test_a_failed_download_says_why_and_names_the_pvc(case: FailedDownloadCase) -> None:
    """A failed download says why and which volume it was filling."""
    _, pvc, job = downloading()
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        [pod(job, "Failed", case.log, "download")],
        resources={PVC: pvc, DOWNLOAD_JOB: failed(job)},
    )
    assert comp.status["status"] == "Failed"
    assert conditions(comp)["DownloadReady"] == ("False", case.want), case.reason
    assert "org-model-cache" in message(comp, "DownloadReady")
    assert DOWNLOAD_JOB in comp.resources  # kept for kubectl logs


def test_a_pending_pvc_waits() -> None:
    """A volume not bound yet keeps the cache waiting, without a download."""
    _, pvc, job = downloading()
    comp = reconcile(
        compose_model_cache,
        model_cache(size="1Gi"),
        resources={PVC: with_status(pvc, phase="Pending"), DOWNLOAD_JOB: job},
    )
    assert conditions(comp)["VolumeReady"] == ("False", "VolumePending")
    assert comp.status["status"] == "Pending"


# --- AIMTemplateCache ----------------------------------------------------------------------------


def template(status: str | None = "Available", kind: str = "AIMServiceTemplate") -> Any:
    meta: dict[str, Any] = {"name": "tpl"}
    if kind == "AIMServiceTemplate":
        meta["namespace"] = NS
    out: dict[str, Any] = {
        "apiVersion": API,
        "kind": kind,
        "metadata": meta,
        "spec": {"modelName": "m"},
    }
    if status:
        out["status"] = {
            "status": status,
            "modelSources": [
                {"modelId": "Org/A", "sourceUri": "hf://Org/A", "size": "2Gi"},
                {"modelId": "Org/B", "sourceUri": "hf://Org/B"},
            ],
        }
    return out


def template_cache(**spec: Any) -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMTemplateCache",
        "metadata": {"name": "tc", "namespace": NS},
        "spec": {"templateName": "tpl", **spec},
    }


def standalone(uri: str, status: str = "Available", **meta: Any) -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMModelCache",
        "metadata": {"name": "team-cache", "namespace": NS, **meta},
        "spec": {"sourceUri": uri},
        "status": {"status": status, "persistentVolumeClaim": "team-cache-cache"},
    }


def test_a_template_cache_composes_one_model_cache_per_source() -> None:
    """A template cache makes one model cache per model source."""
    comp = reconcile(
        compose_template_cache, template_cache(env=[{"name": "X", "value": "1"}]), [template()]
    )
    caches = [tree(d.manifest) for d in comp.resources.values()]
    assert sorted(c["spec"]["sourceUri"] for c in caches) == ["hf://Org/A", "hf://Org/B"]
    a = next(c for c in caches if c["spec"]["sourceUri"] == "hf://Org/A")
    assert a["spec"]["size"] == "2Gi"
    assert a["spec"]["env"] == [{"name": "X", "value": "1"}]
    assert comp.status["status"] == "Progressing"


def test_a_standalone_model_cache_is_reused_not_duplicated() -> None:
    """A model cache that already holds the weights is used, not downloaded again."""
    comp = reconcile(
        compose_template_cache, template_cache(), [template(), standalone("hf://Org/A")]
    )
    assert [tree(d.manifest)["spec"]["sourceUri"] for d in comp.resources.values()] == [
        "hf://Org/B"
    ]
    entries = tree(comp.status)["modelCaches"]
    assert entries[0] == {
        "name": "team-cache",
        "sourceUri": "hf://Org/A",
        "status": "Available",
        "persistentVolumeClaim": "team-cache-cache",
    }


def test_a_cache_someone_else_composed_is_not_taken() -> None:
    """A template cache never takes over a model cache another one composed."""
    owned = standalone("hf://Org/A", ownerReferences=[{"kind": "AIMTemplateCache", "name": "x"}])
    comp = reconcile(compose_template_cache, template_cache(), [template(), owned])
    assert len(comp.resources) == 2


@dataclass(frozen=True)
class TemplateStateCase(Case):
    template_status: str
    headline: str
    condition_reason: str


TEMPLATE_STATE_CASES = [
    TemplateStateCase(
        "progressing",
        "a template still resolving is worth waiting for",
        "Progressing",
        "Pending",
        "WaitingForTemplate",
    ),
    TemplateStateCase(
        "not-available",
        "a template without a profile yet may get one",
        "NotAvailable",
        "Pending",
        "WaitingForTemplate",
    ),
    TemplateStateCase(
        "failed",
        "a failed template fails its cache, with a reason of its own",
        "Failed",
        "Failed",
        "TemplateNotReady",
    ),
]


@table(TEMPLATE_STATE_CASES)
def test_the_template_cache_waits_for_its_template(case: TemplateStateCase) -> None:
    """A template cache waits while its template is not Available."""
    comp = reconcile(compose_template_cache, template_cache(), [template(case.template_status)])
    assert comp.status["status"] == case.headline, case.reason
    assert conditions(comp)["TemplateReady"] == ("False", case.condition_reason), case.reason
    assert comp.resources == {}


def test_a_missing_template_fails_naming_the_field() -> None:
    """A template cache naming a missing template fails with the field named."""
    comp = reconcile(compose_template_cache, template_cache(templateScope="Cluster"), [template()])
    assert comp.status["status"] == "Failed"
    assert "spec.templateName" in message(comp, "TemplateReady")
    assert "templateScope: Cluster" in message(comp, "TemplateReady")


def test_the_cluster_scope_finds_cluster_templates() -> None:
    """templateScope Cluster looks up the catalog's templates."""
    comp = reconcile(
        compose_template_cache,
        template_cache(templateScope="Cluster"),
        [template(kind="AIMClusterServiceTemplate")],
    )
    assert comp.status["resolvedTemplateKind"] == "AIMClusterServiceTemplate"
    assert len(comp.resources) == 2


def test_all_caches_available_make_the_template_cache_available() -> None:
    """A template cache is Available once all its model caches are."""
    pool = [
        template(),
        standalone("hf://Org/A"),
        {**standalone("hf://Org/B"), "metadata": {"name": "b", "namespace": NS}},
    ]
    comp = reconcile(compose_template_cache, template_cache(), pool)
    assert comp.status["status"] == "Available"
    assert conditions(comp)["CacheReady"] == ("True", "AllCachesAvailable")


# --- AIMService with cacheModel ------------------------------------------------------------------

IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"


def service_world(*caches: Any) -> list[Any]:
    model = {
        "apiVersion": API,
        "kind": "AIMClusterModel",
        "metadata": {"name": "qwen3"},
        "spec": {"image": IMAGE},
        "status": {"status": "Ready"},
    }
    tpl = template(kind="AIMClusterServiceTemplate")
    tpl["spec"] = {
        "modelName": "qwen3",
        "type": "optimized",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
    }
    return [model, tpl, *caches]


def service() -> Any:
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": NS, "uid": "u1"},
        "spec": {"model": {"ref": "qwen3"}, "template": {"name": "tpl"}, "cacheModel": True},
    }


def test_a_service_waits_for_its_caches_and_composes_a_template_cache() -> None:
    """A caching service composes its template cache and waits for it before serving."""
    comp = reconcile(compose_service, service(), service_world())
    assert INFERENCE_SERVICE not in comp.resources
    cache = tree(comp.resources[TEMPLATE_CACHE].manifest)
    assert cache["spec"]["templateName"] == "tpl"
    assert cache["spec"]["templateScope"] == "Cluster"
    assert conditions(comp)["CacheReady"] == ("False", "CachesNotAvailable")


def test_a_service_mounts_every_available_cache_read_only() -> None:
    """The predictor mounts each cache read-only where the runtime looks for weights."""
    b = {**standalone("hf://Org/B"), "metadata": {"name": "b", "namespace": NS}}
    b["status"]["persistentVolumeClaim"] = "b-cache"
    comp = reconcile(compose_service, service(), service_world(standalone("hf://Org/A"), b))
    isvc = tree(comp.resources[INFERENCE_SERVICE].manifest)
    mounts = isvc["spec"]["predictor"]["containers"][0]["volumeMounts"]
    assert {"name": "team-cache", "mountPath": "/workspace/cache/Org/A", "readOnly": True} in mounts
    assert {"name": "b", "mountPath": "/workspace/cache/Org/B", "readOnly": True} in mounts
    claims = {
        v["persistentVolumeClaim"]["claimName"]
        for v in isvc["spec"]["predictor"]["volumes"]
        if "persistentVolumeClaim" in v
    }
    assert claims == {"team-cache-cache", "b-cache"}
    assert TEMPLATE_CACHE not in comp.resources  # the caches exist; nothing to fill
    assert conditions(comp)["CacheReady"] == ("True", "AllCachesAvailable")


def test_a_cache_lost_after_start_degrades_and_keeps_the_mounts() -> None:
    """A cache lost while serving degrades the service; the InferenceService keeps its mounts."""
    b = {**standalone("hf://Org/B"), "metadata": {"name": "b", "namespace": NS}}
    running = reconcile(compose_service, service(), service_world(standalone("hf://Org/A"), b))
    isvc = tree(running.resources[INFERENCE_SERVICE].manifest)

    comp = reconcile(
        compose_service,
        service(),
        service_world(standalone("hf://Org/A")),  # b is gone
        resources={INFERENCE_SERVICE: isvc},
    )
    assert comp.status["status"] == "Degraded"
    assert conditions(comp)["CacheReady"] == ("False", "CacheLost")
    kept = tree(comp.resources[INFERENCE_SERVICE].manifest)
    assert kept["spec"] == isvc["spec"]  # volumes untouched


# --- seams between kinds: credentials, namespaced templates, custom weights ----------------------


RUNTIME_CONFIG = {
    "apiVersion": API,
    "kind": "AIMRuntimeConfig",
    "metadata": {"name": "default", "namespace": NS},
    "spec": {"serviceAccountName": "aim-runtime", "imagePullSecrets": [{"name": "mirror"}]},
}


@dataclass(frozen=True)
class CacheJobCase(Case):
    spec: dict[str, Any]
    job: str
    account: str


CACHE_JOB_CASES = [
    CacheJobCase(
        "size-check",
        "a cache without a size first runs a size check, as the runtime config's account",
        {},
        SIZE_CHECK_JOB,
        "aim-runtime",
    ),
    CacheJobCase(
        "download",
        "a cache with a size downloads, as its own account (the one its report binding names)",
        {"size": "10Gi"},
        DOWNLOAD_JOB,
        "org-model-download",
    ),
]


@table(CACHE_JOB_CASES)
def test_cache_jobs_pull_with_the_runtime_configs_secrets_and_run_without_a_token(
    case: CacheJobCase,
) -> None:
    """The runtime config's pull secrets are for every workload AIM starts on the namespace's
    behalf, cache Jobs included; its account runs the size check, the download has its own; no
    token is mounted into either Job's work."""
    xr = model_cache(imagePullSecrets=[{"name": "own"}], **case.spec)
    comp = reconcile(compose_model_cache, xr, [RUNTIME_CONFIG])
    pod_spec = tree(comp.resources[case.job].manifest)["spec"]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == case.account
    assert pod_spec["imagePullSecrets"] == [{"name": "own"}, {"name": "mirror"}]
    assert pod_spec["automountServiceAccountToken"] is False  # the account, never its token


def runtime_config(kind: str, env: list[dict[str, Any]]) -> Any:
    meta = {"name": "default"} | ({"namespace": NS} if kind == "AIMRuntimeConfig" else {})
    return {"apiVersion": API, "kind": kind, "metadata": meta, "spec": {"env": env}}


PROXY = {"name": "HTTPS_PROXY", "valueFrom": {"secretKeyRef": {"name": "proxy", "key": "url"}}}
TOKEN = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}}
ENV_CONFIGS = [
    runtime_config(
        "AIMClusterRuntimeConfig",
        [{"name": "HF_ENDPOINT", "value": "https://hf-mirror.internal"}, PROXY],
    ),
    runtime_config(
        "AIMRuntimeConfig",
        [{"name": "HF_HUB_ETAG_TIMEOUT", "value": "30"}, {"name": "MIRROR", "value": "team"}],
    ),
]


@table(CACHE_JOB_CASES)
def test_cache_jobs_get_the_runtime_configs_env_under_their_own(case: CacheJobCase) -> None:
    """The operator's Jobs take the runtime config's env: a mirror or proxy set once for the
    cluster or namespace reaches every size check, download and check, the cache's own env over
    it by name, Secret references kept as references and never read."""
    own = [{"name": "MIRROR", "value": "cache"}, TOKEN]
    comp = reconcile(compose_model_cache, model_cache(env=own, **case.spec), ENV_CONFIGS)
    pod_spec = tree(comp.resources[case.job].manifest)["spec"]["template"]["spec"]
    containers = [c for c in pod_spec.get("initContainers", []) if c["name"] == "download"]
    containers += pod_spec["containers"]  # the size check, or the download's check
    for c in containers:
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in c["env"]}
        assert env["HF_ENDPOINT"] == "https://hf-mirror.internal", c["name"]
        assert env["HF_HUB_ETAG_TIMEOUT"] == "30", c["name"]
        assert env["HTTPS_PROXY"] == PROXY["valueFrom"], c["name"]
        assert env["HF_TOKEN"] == TOKEN["valueFrom"], c["name"]
        assert env["MIRROR"] == "cache", c["name"]
        assert len(env) == len(c["env"]), f"{c['name']}: one entry per name"
    assert len(containers) == (1 if case.job == SIZE_CHECK_JOB else 2)
    assert "proxy" not in json.dumps(comp.status)


def test_a_runtime_config_may_move_the_jobs_own_variables() -> None:
    """A runtime config's HF_HOME replaces the Jobs' default in place, not beside it (two
    entries of one name make the API server warn and keep the last)."""
    config = runtime_config("AIMRuntimeConfig", [{"name": "HF_HOME", "value": "/cache/hub"}])
    comp = reconcile(compose_model_cache, model_cache(), [config])
    container = tree(comp.resources[SIZE_CHECK_JOB].manifest)["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert [e for e in container["env"] if e["name"] == "HF_HOME"] == [
        {"name": "HF_HOME", "value": "/cache/hub"}
    ]


def test_a_running_size_check_is_kept_when_the_runtime_configs_env_changes() -> None:
    """A Job's pod template is immutable: a size check made before the runtime config's env
    changed is kept as it was (re-applying it would be refused and fail the reconcile); the
    next Job gets the new env."""
    before = reconcile(compose_model_cache, model_cache(), [ENV_CONFIGS[0]])
    job = tree(before.resources[SIZE_CHECK_JOB].manifest)
    changed = runtime_config(
        "AIMClusterRuntimeConfig", [{"name": "HF_ENDPOINT", "value": "https://elsewhere"}]
    )
    comp = reconcile(compose_model_cache, model_cache(), [changed], resources={SIZE_CHECK_JOB: job})
    assert tree(comp.resources[SIZE_CHECK_JOB].manifest)["spec"] == job["spec"]


def caching_template() -> Any:
    """Seed 002's namespaced template: caching on, download credentials in its env."""
    tpl = template()
    tpl["spec"].update(
        {
            "modelName": "qwen3",
            "caching": {"enabled": True, "env": [{"name": "HTTP_PROXY", "value": "tpl-proxy"}]},
            "env": [{"name": "HF_TOKEN", "value": "template-token"}],
            "imagePullSecrets": [{"name": "registry-credentials"}],
        }
    )
    return tpl


def test_a_template_cache_reads_a_namespaced_template_with_caching() -> None:
    """It used to parse every template as a cluster one and refuse `spec.caching`."""
    comp = reconcile(compose_template_cache, template_cache(), [caching_template()])
    assert conditions(comp)["TemplateReady"] == ("True", "Resolved")
    assert len(comp.resources) == 2


def test_a_caching_template_gives_its_cache_the_templates_env_under_caching_env() -> None:
    """Downloads see the template's env with caching.env over it (seed 002's HF_TOKEN)."""
    tpl = caching_template()
    tpl["spec"]["modelSources"] = [{"modelId": "Org/A", "sourceUri": "hf://Org/A"}]
    tpl["spec"]["caching"]["env"].append({"name": "HF_TOKEN", "value": "caching-token"})
    model = {
        "apiVersion": API,
        "kind": "AIMModel",
        "metadata": {"name": "qwen3", "namespace": NS},
        "spec": {"image": IMAGE},
    }
    comp = reconcile(compose_template, tpl, [model])  # inline sources, no GPU: Available
    env = tree(comp.resources[OWN_CACHE].manifest)["spec"]["env"]
    assert {e["name"]: e["value"] for e in env} == {
        "HF_TOKEN": "caching-token",  # caching.env is for the downloads, so it wins
        "HTTP_PROXY": "tpl-proxy",
    }


def test_a_services_template_cache_merges_template_then_caching_then_service_env() -> None:
    """The operator's env-propagation case: the service's value wins, the rest is kept."""
    svc = service()
    svc["spec"]["env"] = [{"name": "HF_TOKEN", "value": "service-token"}]
    tpl = caching_template()
    tpl["spec"]["caching"]["enabled"] = False  # the service asks for caches, not the template
    model = service_world()[0]
    model["kind"], model["metadata"] = "AIMModel", {"name": "qwen3", "namespace": NS}
    comp = reconcile(compose_service, svc, [model, tpl])
    env = tree(comp.resources[TEMPLATE_CACHE].manifest)["spec"]["env"]
    assert {e["name"]: e["value"] for e in env} == {
        "HF_TOKEN": "service-token",
        "HTTP_PROXY": "tpl-proxy",
    }


def custom_world(*caches: Any) -> list[Any]:
    """A custom model and its template (inline sources, as the model composer makes them)."""
    source = {"modelId": "Org/A", "sourceUri": "hf://Org/A", "size": "2Gi"}
    model = {
        "apiVersion": API,
        "kind": "AIMModel",
        "metadata": {"name": "custom", "namespace": NS},
        "spec": {
            "image": "amdenterpriseai/aim-base:latest",
            "modelSources": [source],
            "custom": {"hardware": {"gpu": {"requests": 1}}},
        },
        "status": {"status": "Ready"},
    }
    tpl = template()
    tpl["spec"] = {
        "modelName": "custom",
        "type": "unoptimized",
        "modelSources": [source],
        "hardware": {"gpu": {"requests": 1}},
    }
    tpl["status"]["modelSources"] = [source]
    return [model, tpl, *caches]


def custom_service() -> Any:
    svc = service()
    svc["spec"] = {"model": {"ref": "custom"}}  # no cacheModel, no allowUnoptimized
    return svc


def test_a_custom_models_service_caches_its_weights_without_being_asked() -> None:
    """Seed 004: custom models use a dedicated template cache; their weights are in no image."""
    comp = reconcile(compose_service, custom_service(), custom_world())
    assert INFERENCE_SERVICE not in comp.resources
    cache = tree(comp.resources[TEMPLATE_CACHE].manifest)
    assert cache["spec"]["templateName"] == "tpl"
    assert conditions(comp)["CacheReady"] == ("False", "CachesNotAvailable")


def test_a_custom_models_weights_reach_the_runtime_through_the_cache() -> None:
    """A custom model's weights are downloaded once and mounted where the runtime reads them."""
    cache = standalone("hf://Org/A")
    comp = reconcile(compose_service, custom_service(), custom_world(cache))
    container = tree(comp.resources[INFERENCE_SERVICE].manifest)["spec"]["predictor"]["containers"][
        0
    ]
    assert {"name": "AIM_MODEL_ID", "value": "Org/A"} in container["env"]
    assert {
        "name": "team-cache",
        "mountPath": "/workspace/cache/Org/A",
        "readOnly": True,
    } in container["volumeMounts"]


# --- one template cache for the services of a namespace ------------------------------------------


def other_service(name: str, uid: str, template_cache: str | None) -> Any:
    svc = service()
    svc["metadata"] = {"name": name, "namespace": NS, "uid": uid}
    if template_cache is not None:
        svc["status"] = {"templateCache": template_cache}
    return svc


def composed_template_cache(owners: list[Any], *, labelled: bool = True) -> Any:
    """The AIMTemplateCache a service composed for `tpl`, as the API server holds it."""
    first = reconcile(compose_service, service(), service_world())
    tc = tree(first.resources[TEMPLATE_CACHE].manifest)
    tc["metadata"]["uid"] = "uid-tc"
    tc["metadata"]["ownerReferences"] = owners
    if not labelled:
        tc["metadata"]["labels"] = {}
    return tc


def controller(name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "AIMService", "name": name, "uid": uid, "controller": True}


def test_a_second_service_relies_on_the_template_cache_another_composed() -> None:
    """Composing it too would fail (Crossplane refuses an object another XR controls)."""
    tc = composed_template_cache([controller("first", "uid-first")])
    comp = reconcile(compose_service, service(), [*service_world(), tc])
    assert TEMPLATE_CACHE not in comp.resources
    assert comp.status["templateCache"] == tc["metadata"]["name"]
    assert conditions(comp)["CacheReady"] == ("False", "CachesNotAvailable")


def test_the_composing_service_makes_the_services_relying_on_its_cache_owners() -> None:
    """Deleting the composing service leaves a shared cache to the others that use it."""
    tc = composed_template_cache([controller("chat", "u1")])
    name = tc["metadata"]["name"]
    pool = [*service_world(), tc, other_service("b", "uid-b", name), other_service("c", "x", None)]
    comp = reconcile(compose_service, service(), pool, resources={TEMPLATE_CACHE: tc})
    owners = tree(comp.resources[TEMPLATE_CACHE].manifest)["metadata"]["ownerReferences"]
    assert owners == [{"apiVersion": API, "kind": "AIMService", "name": "b", "uid": "uid-b"}]


def test_a_template_cache_left_without_its_composer_is_adopted() -> None:
    """The composing service was deleted; the garbage collector kept the cache for this one."""
    tc = composed_template_cache(
        [{"apiVersion": API, "kind": "AIMService", "name": "chat", "uid": "u1"}]
    )
    comp = reconcile(compose_service, service(), [*service_world(), tc])
    adopted = tree(comp.resources[TEMPLATE_CACHE].manifest)
    assert adopted["metadata"]["name"] == tc["metadata"]["name"]
    assert adopted["spec"] == tc["spec"]  # as it is: a cache is created once


def test_a_template_cache_a_person_made_is_never_adopted() -> None:
    """Only what a service composed is taken over; a platform team's cache stays theirs."""
    tc = composed_template_cache([], labelled=False)
    comp = reconcile(compose_service, service(), [*service_world(), tc])
    assert TEMPLATE_CACHE not in comp.resources


def test_a_service_arriving_after_the_download_still_names_the_cache_it_relies_on() -> None:
    """Found by the end-to-end tier: with every model cache Available the second service needed
    nothing composed, named no template cache, and so was never made an owner of it."""
    tc = composed_template_cache([controller("first", "uid-first")])
    filled = standalone("hf://Org/A")
    filled["metadata"]["ownerReferences"] = [
        {"kind": "AIMTemplateCache", "name": tc["metadata"]["name"], "controller": True}
    ]
    world = service_world(filled)
    world[1]["status"]["modelSources"] = world[1]["status"]["modelSources"][:1]  # just Org/A
    comp = reconcile(compose_service, service(), [*world, tc])
    assert INFERENCE_SERVICE in comp.resources
    assert TEMPLATE_CACHE not in comp.resources
    assert comp.status["templateCache"] == tc["metadata"]["name"]
