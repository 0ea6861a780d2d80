"""The controllers that cannot run on these machines, running in the background for journeys.

A journey applies manifests and waits, the way a user does; it never writes an AIM status and
never tells a stand-in what to do. `SimulatedCluster` plays, on a thread and only in the
namespaces it serves, what a real cluster would add to the real control plane:

- the kubelet, for the Pods the real Job controller creates: it "pulls" the image (a private
  registry's image needs an image pull secret with that registry's credentials, else the Pod
  waits in ImagePullBackOff, as a real kubelet leaves it), then runs it: a discovery container
  answers with its AIM image's dry-run (`tests/e2e/images.py`), a size check with the source's
  size, a download succeeds and its check passes, and the download's progress sidecar (a pod that
  cannot run here either) writes the bytes into its report ConfigMap before the download ends;
- a storage provisioner binding every claim;
- KServe's controller, which reports an InferenceService Ready once its predictor could start:
  its image pulled the same way, and every claim it mounts Bound;
- a Gateway API implementation accepting every HTTPRoute.

Everything is written through the status subresources (`devtools/cluster/simulate.py`), in the
shapes `aim plan` writes too (`aim_plan/standins/`), which also decide what each container of our
Jobs prints; this module decides when each acts and what only the journey knows (its images'
dry-runs, its sources' sizes, its registries' credentials). What the stand-ins did is kept in
`actions`, and anything that went wrong in the thread fails the journey when the cluster is
closed.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import traceback
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Final, Self

from aim_plan.standins import gateway, jobs, kserve, provisioner
from devtools.cluster.converge import ISVC, ROUTE
from devtools.cluster.kube import Kube, KubeError
from devtools.cluster.simulate import (
    now,
    simulate_gateway_accepts,
    simulate_kserve_not_ready,
    simulate_kserve_ready,
    simulate_kubelet_pod_exited,
    simulate_kubelet_pod_waiting,
    simulate_pvc_bound,
)
from function.registry import reference
from tests.e2e.images import AimImage

JOB_LABEL: Final = "batch.kubernetes.io/job-name"
TICK_S: Final = 0.3


class SimulatedCluster:
    """The kubelet, a provisioner, KServe and a gateway, for the namespaces it serves."""

    def __init__(
        self,
        kube: Kube,
        *,
        images: Mapping[str, AimImage],
        source_sizes: Mapping[str, int],
        private_registries: Mapping[str, tuple[str, str]],
    ) -> None:
        """`private_registries` maps a registry host to the user and password it accepts."""
        self._kube = kube
        self._images = images
        self._sizes = source_sizes
        self._private = private_registries
        self._namespaces: set[str] = set()
        self._finished: set[str] = set()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="simulated-cluster", daemon=True)
        self.actions: list[str] = []
        self.pods: list[dict[str, Any]] = []
        """Every Pod the kubelet ran, as it was when it ran."""
        self.errors: list[str] = []

    def serve(self, *namespaces: str) -> None:
        """Act in these namespaces too (a journey's team namespaces, the system namespace)."""
        with self._lock:
            self._namespaces.update(namespaces)

    def __enter__(self) -> Self:
        """Start the stand-ins."""
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop them; a failure inside the thread fails the journey (unless one already did)."""
        self._stop.set()
        self._thread.join(timeout=10)
        if self.errors and exc is None:
            msg = "the simulated cluster failed:\n" + "\n".join(self.errors)
            raise AssertionError(msg)

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                namespaces = sorted(self._namespaces)
            for namespace in namespaces:
                try:
                    self._tick(namespace)
                except KubeError as e:
                    if e.status not in {404, 409}:  # an object deleted or changed meanwhile
                        self.errors.append(traceback.format_exc())
                except Exception:  # noqa: BLE001 - reported when the journey ends
                    self.errors.append(traceback.format_exc())

    def _tick(self, namespace: str) -> None:
        for pod in self._kube.list("v1", "Pod", namespace):
            self._kubelet(pod)
        for pvc in self._kube.list("v1", "PersistentVolumeClaim", namespace):
            if not provisioner.is_bound(pvc):
                simulate_pvc_bound(self._kube, namespace, pvc["metadata"]["name"])
                self._did(f"provisioner bound PVC {namespace}/{pvc['metadata']['name']}")
        for isvc in self._kube.list(ISVC, "InferenceService", namespace):
            self._kserve(isvc)
        for route in self._kube.list(ROUTE, "HTTPRoute", namespace):
            if not gateway.is_accepted(route):
                simulate_gateway_accepts(self._kube, namespace, route["metadata"]["name"])
                self._did(f"gateway accepted HTTPRoute {namespace}/{route['metadata']['name']}")

    # -- the kubelet ------------------------------------------------------------------------------

    def _kubelet(self, pod: dict[str, Any]) -> None:
        meta, spec = pod["metadata"], pod["spec"]
        if meta["uid"] in self._finished or JOB_LABEL not in (meta.get("labels") or {}):
            return
        [container] = spec["containers"]
        pulled, why = self._pull(
            container["image"], spec.get("imagePullSecrets"), meta["namespace"]
        )
        if not pulled:
            self._waiting(pod, "ImagePullBackOff", why)
            return
        code, message = self._run_container(container)
        self._report_progress(pod)
        simulate_kubelet_pod_exited(self._kube, pod, code, message)
        self._finished.add(meta["uid"])
        self.pods.append(pod)
        self._did(f"kubelet ran Pod {meta['namespace']}/{meta['name']}: exit {code}")

    def _run_container(self, container: Mapping[str, Any]) -> tuple[int, str]:
        """What the container prints, by its role in our Jobs (`aim_plan/standins/jobs.py`)."""
        return jobs.runs(container, jobs.Answers(self._dry_run, sizes=self._sizes))

    def _dry_run(self, container: Mapping[str, Any]) -> tuple[int, str]:
        """The discovery container's AIM image's dry-run, if the simulated node has the image."""
        image = self._images.get(container["image"])
        if image is None:
            return 1, f"the simulated node has no AIM image {container['image']}"
        return image.dry_run(jobs.literal_env(container))

    def _report_progress(self, pod: Mapping[str, Any]) -> None:
        """What a download's progress sidecar writes last: the bytes now in the volume."""
        sidecars = [c for c in pod["spec"].get("initContainers") or [] if c["name"] == "progress"]
        if not sidecars:
            return
        configmap = jobs.literal_env(sidecars[0])["AIM_PROGRESS_CONFIGMAP"]
        [download] = [c for c in pod["spec"]["initContainers"] if c["name"] == "download"]
        size = self._sizes.get(str(download["args"][0]), 1 << 30)
        data = jobs.progress(size, now())
        namespace = pod["metadata"]["namespace"]
        path = f"/api/v1/namespaces/{namespace}/configmaps/{configmap}"
        self._kube.request(
            "PATCH", path, {"data": data}, content_type="application/merge-patch+json"
        )
        self._did(f"progress sidecar reported {size} bytes into {namespace}/{configmap}")

    def _pull(
        self, image: str, pull_secrets: Iterable[Mapping[str, Any]] | None, namespace: str
    ) -> tuple[bool, str]:
        """Whether the image can be pulled with the Pod's pull secrets, and why not."""
        registry = reference.parse(image).registry
        wanted = self._private.get(registry)
        if wanted is None:
            return True, ""
        names = [str(s.get("name")) for s in pull_secrets or []]
        for name in names:
            secret = self._kube.get("v1", "Secret", name, namespace)
            if secret is not None and _docker_login(secret, registry) == wanted:
                return True, ""
        return False, (
            f'Back-off pulling image "{image}": unauthorized: authentication required '
            f"(pull secrets: {', '.join(names) or 'none'})"
        )

    def _waiting(self, pod: dict[str, Any], reason: str, message: str) -> None:
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        if any((s.get("state") or {}).get("waiting", {}).get("reason") == reason for s in statuses):
            return
        simulate_kubelet_pod_waiting(self._kube, pod, reason, message)
        meta = pod["metadata"]
        self._did(f"kubelet cannot start Pod {meta['namespace']}/{meta['name']}: {reason}")

    # -- KServe -----------------------------------------------------------------------------------

    def _kserve(self, isvc: dict[str, Any]) -> None:
        meta = isvc["metadata"]
        if kserve.is_ready(isvc):
            return
        predictor = isvc["spec"]["predictor"]
        image = predictor["containers"][0]["image"]
        pulled, why = self._pull(image, predictor.get("imagePullSecrets"), meta["namespace"])
        unbound = kserve.unbound_claims(isvc, lambda claim: self._bound(meta["namespace"], claim))
        if pulled and not unbound:
            simulate_kserve_ready(self._kube, meta["namespace"], meta["name"])
            self._did(f"KServe reports InferenceService {meta['namespace']}/{meta['name']} Ready")
            return
        why = why or f"claims not bound: {', '.join(unbound)}"
        if kserve.says(isvc, why):
            return
        simulate_kserve_not_ready(self._kube, meta["namespace"], meta["name"], why)
        self._did(f"KServe: InferenceService {meta['namespace']}/{meta['name']} not Ready: {why}")

    def _bound(self, namespace: str, claim: str) -> bool:
        pvc = self._kube.get("v1", "PersistentVolumeClaim", claim, namespace)
        return pvc is not None and provisioner.is_bound(pvc)

    def _did(self, action: str) -> None:
        self.actions.append(action)


def _docker_login(secret: Mapping[str, Any], registry: str) -> tuple[str, str] | None:
    """The user and password a dockerconfigjson secret holds for `registry`, as kubelets read it."""
    if secret.get("type") != "kubernetes.io/dockerconfigjson":
        return None
    try:
        config = json.loads(base64.b64decode(secret["data"][".dockerconfigjson"]))
        entry = config["auths"][registry]
    except (KeyError, TypeError, ValueError, binascii.Error):
        return None
    if "auth" in entry:
        user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
        return user, password
    return str(entry.get("username")), str(entry.get("password"))
