"""Upgrading a running installation to HEAD and rolling it back, with nothing lost.

Its own control plane and node, with the newest release's packages (devtools/gen/releases.txt)
built from that release's commit by its own scripts and installed from the registry, as a
platform team installed them. A realistic set runs on it (a namespace runtime config and a
cluster one with routing, a cluster model with discovery and its templates, a cached service on
it, a custom model with a cache of its own, services by image sharing an auto-created model, a
routed service). Then the Function and the Configuration go to HEAD's packages the way a user
does it (`spec.package`, the Function first), and back (the Configuration first).

What must hold through both moves: no InferenceService, PVC, HTTPRoute or AIM object re-created
or changed in spec (same UID and generation: KServe would roll the predictor on any change), no
Job run again (the simulated kubelet runs no new pod: no download, no discovery, no size check),
no AIM object leaving the status it had, every object composed again by the new function, and
the stored objects still accepted by the served schemas. `aim plan --against`, run before the
upgrade, predicts it: no service changes.

Simulated (tests/e2e/cluster.py): the MI300X node, the kubelet for the Jobs' pods, the storage
provisioner, KServe's readiness and the Gateway's acceptance. The function itself is real: each
version runs from its own package's image in Crossplane's Deployment on the node. The claims
flavour is not upgraded here (it installs the same Function; its Configuration is a second
plane's).
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Self

import pytest
import yaml

from devtools.cluster.controlplane import CROSSPLANE_NAMESPACE
from devtools.cluster.converge import AIM, AIM_KINDS, CLUSTER_KINDS, ISVC, ROUTE, wait_status
from devtools.cluster.kube import Kube, condition, wait_for
from devtools.cluster.platform import RUNTIME, SYSTEM_NAMESPACE, Platform, aim, start_platform
from devtools.cluster.simulate import simulate_gpu_node
from devtools.cluster.timing import TIMES
from devtools.cluster.upgrade import roll_back, upgrade
from devtools.gen.compat import has_commit
from devtools.gen.version import latest_release
from devtools.pkg.image import Image
from devtools.pkg.publish import Published
from devtools.tools import ROOT, Tools
from tests.e2e.conftest import push_journey_images, simulated_journey
from tests.e2e.journey import Journey

COMPOSED: Final = (
    (ISVC, "InferenceService"),
    ("v1", "PersistentVolumeClaim"),
    (ROUTE, "HTTPRoute"),
    ("batch/v1", "Job"),
)
"""What a service's users and data live in, besides the AIM objects themselves."""
SETTLE_S: Final = 15.0
"""Three of the tier's ready rechecks (5 s): every ready object composed again meanwhile."""


@pytest.fixture(scope="module")
def installed(
    tools: Tools, crds: Path, runtime_image: Image, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """A plane with a node, running the newest release's packages; HEAD's in its registry."""
    release = latest_release()
    if not has_commit(release.commit):
        pytest.skip(f"release {release.version}'s commit {release.commit[:12]} is not in history")
    root = tmp_path_factory.mktemp("upgrade")
    with start_platform(tools, crds, runtime_image, root, node=True, release=release) as platform:
        (root / "images").mkdir()
        push_journey_images(platform, root / "images")
        simulate_gpu_node(platform.kube, "gpu-node-1")
        yield platform


@dataclass(frozen=True)
class Snapshot:
    """What an upgrade must keep: each object's UID and generation, each AIM object's status,
    and how many pods the kubelet has run."""

    objects: dict[str, tuple[str, int]]
    statuses: dict[str, str]
    pods_run: int
    unsynced: dict[str, str]


def snapshot(journey: Journey) -> Snapshot:
    """The objects of the journey's namespaces, the system namespace's and the cluster's."""
    kube = journey.platform.kube
    namespaces = [*journey.namespaces.values(), SYSTEM_NAMESPACE]
    found = [
        (kind, obj)
        for api_version, kind in COMPOSED
        for ns in namespaces
        for obj in kube.list(api_version, kind, ns)
    ]
    found += _aim_objects(kube, namespaces)
    return Snapshot(
        {
            _key(kind, o): (o["metadata"]["uid"], o["metadata"].get("generation", 0))
            for kind, o in found
        },
        _statuses(kube, namespaces),
        len(journey.cluster.pods),
        _unsynced(kube, namespaces),
    )


def _aim_objects(kube: Kube, namespaces: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every AIM object there is (list items carry no kind: each comes with its own)."""
    kinds: list[tuple[str, str | None]] = [
        (k, None) for k in (*CLUSTER_KINDS, "AIMClusterRuntimeConfig")
    ]
    kinds += [(k, ns) for ns in namespaces for k in (*AIM_KINDS, "AIMRuntimeConfig")]
    return [(kind, obj) for kind, ns in kinds for obj in kube.list(AIM, kind, ns)]


def _statuses(kube: Kube, namespaces: list[str]) -> dict[str, str]:
    """What a user reads of each AIM object: its headline status (runtime configs have none),
    and Crossplane's `Ready`."""
    found = {}
    for kind, obj in _aim_objects(kube, namespaces):
        headline = (
            "" if kind.endswith("RuntimeConfig") else f"{(obj.get('status') or {}).get('status')} "
        )
        found[_key(kind, obj)] = f"{headline}Ready={(condition(obj, 'Ready') or {}).get('status')}"
    return found


def _unsynced(kube: Kube, namespaces: list[str]) -> dict[str, str]:
    """The AIM objects whose `Synced` is not True, with its message."""
    found = {}
    for kind, obj in _aim_objects(kube, namespaces):
        synced = condition(obj, "Synced") or {}
        if synced.get("status") != "True":
            found[_key(kind, obj)] = str(synced.get("message", ""))
    return found


def _key(kind: str, obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{kind} {where}{meta['name']}"


class StatusWatch:
    """Every AIM status seen while a package changes, polled twice a second in the background
    (a service that went Failed or Pending for a moment would be missed by a before/after), and
    when each object was not `Synced` (Crossplane could not run its pipeline)."""

    def __init__(self, kube: Kube, namespaces: list[str]) -> None:
        self._kube, self._namespaces = kube, namespaces
        self.seen: dict[str, set[str]] = {}
        self.unsynced: dict[str, list[float]] = {}
        self.messages: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def longest_unsynced_s(self) -> float:
        """From the first to the last poll that saw an object not `Synced`, the longest."""
        return max((seen[-1] - seen[0] for seen in self.unsynced.values()), default=0.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, status in _statuses(self._kube, self._namespaces).items():
                self.seen.setdefault(key, set()).add(status)
            now = time.monotonic()
            for key, message in _unsynced(self._kube, self._namespaces).items():
                self.unsynced.setdefault(key, []).append(now)
                self.messages.add(message[:300])
            self._stop.wait(0.5)


def build_the_set(journey: Journey) -> None:
    """The objects a platform and its teams run, from the user journeys' manifests, all
    converged: Running services, Ready models, Available templates."""
    platform, kube = journey.platform, journey.platform.kube
    kube.apply(
        aim(
            "AIMClusterRuntimeConfig",
            "default",
            None,
            {"routing": {"policy": {"allowedHostnames": ["*.inference.example.com"]}}},
        )
    )
    journey.cluster_scoped.append((AIM, "AIMClusterRuntimeConfig", "default"))
    model = journey.step("cluster-model", "01-model.yaml")[0]["metadata"]["name"]
    wait_status(platform, "AIMClusterModel", model, None, "Ready")
    [service] = journey.step("cluster-model", "02-service.yaml")
    ns = service["metadata"]["namespace"]
    custom = journey.step("custom-models", "01-llama-custom.yaml")
    by_image = [*journey.step("service-by-image", "01-runtime-config.yaml")]
    by_image += journey.step("service-by-image", "02-my-service.yaml")
    by_image += journey.step("service-by-image", "03-another-service.yaml")
    routing = {"enabled": True, "gatewayRef": {"name": "inference", "namespace": "gateways"}}
    routed = aim("AIMService", "routed", ns, {"model": {"ref": model}, "routing": routing})
    journey.apply([routed])
    for doc in [service, *custom, *by_image, routed]:
        if doc["kind"] == "AIMService":
            meta = doc["metadata"]
            wait_status(platform, "AIMService", meta["name"], meta["namespace"], "Running")


def function_pods(kube: Kube) -> list[dict[str, Any]]:
    """The Function's runtime pods."""
    return kube.list("v1", "Pod", CROSSPLANE_NAMESPACE)


def wait_function_runs(platform: Platform, to: Published) -> dict[str, Any]:
    """Wait until one ready pod runs `to`'s Function image and no other pod is left."""
    kube = platform.kube

    def one_ready() -> dict[str, Any] | None:
        pods = function_pods(kube)
        if len(pods) != 1:
            return None
        [pod] = pods
        [container] = pod["spec"]["containers"]
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        ready = bool(statuses) and all(s.get("ready") for s in statuses)
        return pod if ready and container["image"] == to.function else None

    return wait_for(
        f"the Function's pod to run {to.function}",
        one_ready,
        timeout_s=300,
        explain=lambda: yaml.safe_dump(function_pods(kube)),
    )


def wait_recomposed(platform: Platform, pod: dict[str, Any], keys: list[str]) -> None:
    """Wait until the function in `pod` has composed every AIM object of `keys`."""
    assert platform.node is not None
    node, name = platform.node, pod["metadata"]["name"]

    def missing() -> list[str]:
        log = node.pod_log(CROSSPLANE_NAMESPACE, name, RUNTIME)
        return [k for k in keys if k.split(" ", 1)[1] not in log]

    wait_for(
        "the new function to compose every AIM object",
        lambda: not missing(),
        timeout_s=120,
        explain=lambda: f"not composed yet: {missing()}",
    )


def move(journey: Journey, to: Published, *, up: bool) -> tuple[Snapshot, StatusWatch]:
    """Upgrade (or roll back) to `to`; the snapshot once every object was composed again, and
    what was seen on the way."""
    platform, kube = journey.platform, journey.platform.kube
    namespaces = [*journey.namespaces.values(), SYSTEM_NAMESPACE]
    with StatusWatch(kube, namespaces) as watch:
        (upgrade if up else roll_back)(kube, to)
        pod = wait_function_runs(platform, to)
        wait_recomposed(platform, pod, sorted(_statuses(kube, namespaces)))
        time.sleep(SETTLE_S)
    way = "upgrade" if up else "rollback"
    TIMES[f"{way}: longest an object was not Synced ({len(watch.unsynced)} objects were)"] = (
        watch.longest_unsynced_s
    )
    print(f"{way}: not Synced on the way: {sorted(watch.messages)}")  # noqa: T201 - with -rP
    return snapshot(journey), watch


def assert_nothing_lost(before: Snapshot, after: Snapshot, watch: StatusWatch) -> None:
    """The same objects, unchanged in spec, no pod run again, no status left on the way, and
    every object Synced again."""
    assert after.objects == before.objects, _diff(before.objects, after.objects)
    assert after.pods_run == before.pods_run, "the kubelet ran pods again (a download, a dry-run)"
    changed = {k: sorted(v) for k, v in watch.seen.items() if v != {before.statuses.get(k)}}
    assert not changed, f"statuses seen on the way: {changed}"
    assert after.statuses == before.statuses
    assert not after.unsynced, after.unsynced


def _diff(before: dict[str, tuple[str, int]], after: dict[str, tuple[str, int]]) -> str:
    lines = [f"gone: {k}" for k in before if k not in after]
    lines += [f"new: {k}" for k in after if k not in before]
    lines += [
        f"{k}: {before[k]} -> {after[k]}" for k in before if k in after and before[k] != after[k]
    ]
    return "\n".join(lines)


def plan_against(
    platform: Platform, journey: Journey, work: Path
) -> subprocess.CompletedProcess[str]:
    """`scripts/plan --against KUBECONFIG --upgrade` of the applied manifests, as a user runs
    it before upgrading: HEAD's function against what the installed one composed."""
    work.mkdir()
    (work / "applied.yaml").write_text(yaml.safe_dump_all(journey.applied, sort_keys=False))
    return subprocess.run(
        [str(ROOT / "scripts" / "plan"), "--against", str(platform.cluster.kubeconfig), str(work)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.timeout(1200)
def test_an_upgrade_to_head_and_a_rollback_lose_nothing(
    installed: Platform, tmp_path: Path
) -> None:
    """The release's installation runs the set; HEAD's Function and Configuration replace its
    packages, then the release's come back; each move keeps every object, runs nothing again and
    leaves every status as it was. The plan made before the upgrade said so."""
    platform = installed
    assert platform.release is not None
    with simulated_journey(platform, "upgrade") as journey:
        build_the_set(journey)
        time.sleep(SETTLE_S)
        before = snapshot(journey)
        # A set worth upgrading: serving, cached, routed, discovered, and Jobs that ran.
        kinds = {key.split(" ", 1)[0] for key in before.objects}
        assert kinds >= {
            "InferenceService",
            "PersistentVolumeClaim",
            "HTTPRoute",
            "AIMClusterServiceTemplate",
            "AIMTemplateCache",
            "AIMModelCache",
        }, kinds
        assert before.pods_run > 0
        assert wait_function_runs(platform, platform.release)

        plan = plan_against(platform, journey, tmp_path / "plan")
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert "diff against the live cluster" in plan.stdout
        assert "  no change" in plan.stdout, plan.stdout

        assert not before.unsynced, before.unsynced
        upgraded, watch = move(journey, platform.published, up=True)
        assert_nothing_lost(before, upgraded, watch)
        # The stored objects still pass the served schemas: applying them again changes nothing.
        platform.kube.apply_all(journey.applied)
        time.sleep(SETTLE_S)
        assert snapshot(journey).objects == before.objects

        rolled_back, watch = move(journey, platform.release, up=False)
        assert_nothing_lost(before, rolled_back, watch)
