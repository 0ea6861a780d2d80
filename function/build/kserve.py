"""KServe InferenceService (serving.kserve.io/v1beta1) for an AIM model on AMD GPUs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from function.api.meta import Manifest
from function.build.pod import restricted_container_security, restricted_pod_security
from function.rules.gpu import DEVICE_ID_LABEL, GPU_TAINT_KEY

INFERENCE_PORT = 8000
SHM_SIZE = "8Gi"
SHM_MOUNT_PATH = "/dev/shm"  # noqa: S108 - the shared-memory mount, not a temporary file


@dataclass(frozen=True)
class Scaling:
    """Replica bounds: fixed when `autoscaled` is False (min == max).

    Autoscaled with `metrics` (KServe's AutoScalingSpec metrics), KEDA scales on them; without,
    KServe's HPA on CPU.
    """

    min_replicas: int
    max_replicas: int
    autoscaled: bool = False
    metrics: tuple[Manifest, ...] = ()

    @property
    def to_zero(self) -> bool:
        """Autoscaled down to no pod: KEDA, woken by the HTTP add-on, owns the replica count."""
        return self.autoscaled and self.min_replicas == 0

    @property
    def autoscaler_class(self) -> str:
        """KServe's autoscaler class for these bounds.

        `external` for scale to zero: KServe makes no autoscaler and leaves the Deployment's
        replicas to KEDA (its `keda` class cannot carry the add-on's trigger), and accepts a
        minimum of 0 in raw deployment.
        """
        if self.to_zero:
            return "external"
        if self.metrics:
            return "keda"
        return "hpa" if self.autoscaled else "none"


@dataclass(frozen=True)
class RunAs:
    """The non-root identity of the inference container."""

    user: int
    group: int | None = None
    supplemental_groups: tuple[int, ...] = ()


@dataclass(frozen=True)
class CacheMount:
    """A model cache PVC mounted into the inference container."""

    volume: str
    claim_name: str
    mount_path: str
    read_only: bool = True
    sub_path: str | None = None
    """A directory of the volume to mount instead of its root."""


def build_inference_service(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    image: str,
    scaling: Scaling,
    resources: Mapping[str, Mapping[str, str]],
    env: Sequence[Mapping[str, JsonValue]],
    gpu_device_ids: Sequence[str],
    image_pull_secrets: Sequence[str] = (),
    service_account_name: str | None = None,
    caches: Sequence[CacheMount] = (),
    run_as: RunAs,
) -> Manifest:
    """An InferenceService running `image` as a custom predictor container.

    Pods land on AMD GPU nodes through the GPU resource request plus a required node affinity on
    the device ids of the wanted GPU model (when there is one), and tolerate the GPU node taint.
    They pass the `restricted` Pod Security level as every pod this function creates does.
    """
    mounts: list[JsonValue] = [{"name": "dshm", "mountPath": SHM_MOUNT_PATH}]
    volumes: list[JsonValue] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}}
    ]
    for c in caches:
        mount: Manifest = {"name": c.volume, "mountPath": c.mount_path, "readOnly": c.read_only}
        if c.sub_path:
            mount["subPath"] = c.sub_path
        mounts.append(mount)
        claim: Manifest = {"claimName": c.claim_name, "readOnly": c.read_only}
        volumes.append({"name": c.volume, "persistentVolumeClaim": claim})
    predictor: Manifest = {
        "minReplicas": scaling.min_replicas,
        "maxReplicas": scaling.max_replicas,
        "tolerations": [{"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
        "securityContext": restricted_pod_security(
            run_as.user, group=run_as.group, supplemental_groups=run_as.supplemental_groups
        ),
        "containers": [
            {
                "name": "kserve-container",
                "image": image,
                "ports": [{"name": "http", "containerPort": INFERENCE_PORT, "protocol": "TCP"}],
                "env": [dict(e) for e in env],
                "resources": {k: dict(v) for k, v in resources.items()},
                "volumeMounts": mounts,
                "securityContext": restricted_container_security(),
                # A crashing server's last log lines become its termination message, the one
                # account of the crash the function can read (InferenceServicePodsReady).
                "terminationMessagePolicy": "FallbackToLogsOnError",
                **_wake_probe(scaling),
            },
        ],
        "volumes": volumes,
    }
    if gpu_device_ids:
        predictor["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": DEVICE_ID_LABEL,
                                    "operator": "In",
                                    "values": list(gpu_device_ids),
                                },
                            ],
                        },
                    ],
                },
            },
        }
    annotations: dict[str, JsonValue] = {
        # KServe's own HPA or KEDA between min and max replicas, KEDA through the HTTP add-on
        # for scale to zero, or none for a fixed count; never Knative (its activator drops the
        # cache mounts' guarantees and raw deployment is what AIM runs).
        "serving.kserve.io/autoscalerClass": scaling.autoscaler_class,
        "serving.kserve.io/deploymentMode": "RawDeployment",
    }
    if scaling.metrics:
        predictor["autoScaling"] = {"metrics": [dict(m) for m in scaling.metrics]}
        # The OpenTelemetry operator's collector sidecar scrapes the server's metrics for KEDA,
        # as KServe's KEDA class expects (the AIM operator sets the same).
        annotations["sidecar.opentelemetry.io/inject"] = f"{name}-predictor"
        annotations["prometheus.kserve.io/port"] = str(INFERENCE_PORT)
    if image_pull_secrets:
        predictor["imagePullSecrets"] = [{"name": s} for s in image_pull_secrets]
    if service_account_name:
        predictor["serviceAccountName"] = service_account_name
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "annotations": annotations,
        },
        "spec": {"predictor": predictor},
    }


def _wake_probe(scaling: Scaling) -> Manifest:
    """A readiness probe every second for a predictor that wakes on a held request.

    KServe's default probe checks the port every 10 s, which a waking request would wait out;
    the server opens its port once the model is loaded, so a TCP check is enough.
    """
    if not scaling.to_zero:
        return {}
    return {"readinessProbe": {"tcpSocket": {"port": INFERENCE_PORT}, "periodSeconds": 1}}
