"""What the tests of AMD's images share: finding AMD's source, running a template's discovery
Job's container in an image as the Pod would, and asking a predictor on loopback."""

from __future__ import annotations

import contextlib
import http.client
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from devtools.cluster import amdimage
from devtools.pkg.image import Bundle, Container, Pod, alive, run_once, running
from devtools.tools import port_open
from function.compose.template import DISCOVERY_JOB, compose_template
from function.kube.contract import Composition, Observed
from function.registry.labels import image_metadata
from tests import simulated
from tests.unit import loop

T0 = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def model_object(name: str, image: str, labels: dict[str, str], namespace: str) -> dict[str, Any]:
    """An AIMModel of `image` as the catalog leaves it: the image's entrypoint and labels read."""
    metadata = image_metadata(labels).model_dump(mode="json", by_alias=True, exclude_none=True)
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"image": image},
        "status": {
            "status": "Ready",
            "imageEntrypoint": list(amdimage.ENTRYPOINT),
            "imageMetadata": metadata,
        },
    }


def source(release: str) -> amdimage.Source:
    """aim-build's tree of `release`; the test skips, naming the variable, where it is absent."""
    found = amdimage.source(release)
    if isinstance(found, str):
        pytest.skip(found)
    return found


@dataclass(frozen=True)
class Discovered:
    """The template after AMD's dry-run answered its Job, and what that Job's container did."""

    composition: Composition
    exit_code: int
    log: str
    termination_message: str

    def condition(self, kind: str) -> tuple[str, str, str]:
        found = next(c for c in self.composition.conditions if c.type == kind)
        return found.status.value, found.reason, found.message


def discover(
    bundle: Bundle, pool: list[dict[str, Any]], xr: dict[str, Any], work: Path
) -> Discovered:
    """Compose the template `xr` among `pool` (its model, the nodes), run its discovery Job's
    container in the image, and compose again with what the kubelet would report of it."""
    first = loop.reconcile(compose_template, Observed(xr, now=T0), pool)
    job: Any = first.resources[DISCOVERY_JOB].manifest
    pod_spec = job["spec"]["template"]["spec"]
    [container] = pod_spec["containers"]
    user = pod_spec["securityContext"]["runAsUser"]
    group = pod_spec["securityContext"].get("runAsGroup", user)
    scratch, termination = work / "aim-discovery", work / "termination-log"
    scratch.mkdir(parents=True)
    termination.touch()
    for path in (scratch, termination):
        path.chmod(0o777)  # an emptyDir and the kubelet's termination file are the Pod's to write
    done = run_once(
        bundle,
        [*container["command"], *container["args"]],
        env={e["name"]: e["value"] for e in container["env"]},
        pod=Pod(
            user=(user, group),
            volumes=((scratch, "/aim-discovery"), (termination, "/dev/termination-log")),
            own_network=True,
        ),
        timeout_s=300,
    )
    message = termination.read_text()
    # What the kubelet and the Job controller report for that container's exit.
    phase, count, kind = (
        ("Succeeded", "succeeded", "Complete")
        if done.returncode == 0
        else ("Failed", "failed", "Failed")
    )
    # FallbackToLogsOnError: a failed container's empty message is the end of its log.
    if not message and done.returncode != 0:
        message = (done.stdout + done.stderr)[-2048:]
    pod = simulated.discovery_pod(job, phase, message=message)
    complete = {**job, "status": {count: 1, "conditions": [{"type": kind, "status": "True"}]}}
    xr = {**xr, "status": first.status}
    then = loop.reconcile(
        compose_template, Observed(xr, now=T0, resources={DISCOVERY_JOB: complete}), [*pool, pod]
    )
    return Discovered(then, done.returncode, done.stdout + done.stderr, message)


def get(port: int, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    """A request to the predictor on loopback: status and JSON body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        if body is None:
            connection.request("GET", path)
        else:
            headers = {"Content-Type": "application/json"}
            connection.request("POST", path, json.dumps(body), headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def kubelet_hosts(work: Path) -> tuple[Path, str]:
    """The /etc/hosts the kubelet mounts into every container (an image has none of its own),
    as a read-only mount: servers that bind `localhost` need it."""
    hosts = work / "hosts"
    hosts.write_text("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
    return hosts, "/etc/hosts"


@contextlib.contextmanager
def predictor_running(
    bundle: Bundle,
    isvc: Any,
    work: Path,
    *,
    env: Mapping[str, str] | None = None,
    mounts: Sequence[tuple[Path, str]] = (),
) -> Iterator[tuple[int, Container]]:
    """The InferenceService's container run as composed (its env unless `env` replaces it, its
    user, the image's own entrypoint, the kubelet's /etc/hosts and `mounts`), once its port is
    open: the port and the container."""
    spec = isvc["spec"]["predictor"]
    [container] = spec["containers"]
    [port] = [p["containerPort"] for p in container["ports"]]
    if port_open(port):
        pytest.fail(f"port {port}, the predictor's, is taken on this host: free it to run this")
    user = spec["securityContext"]["runAsUser"]
    with running(
        bundle,
        container.get("args", []),
        entrypoint=container.get("command"),
        env=composed_env(isvc) if env is None else env,
        mounts=[kubelet_hosts(work), *mounts],
        pod=Pod(user=(user, spec["securityContext"].get("runAsGroup", user))),
    ) as served:
        deadline = time.monotonic() + 120
        while not port_open(port):
            assert alive(bundle, served), f"the predictor exited:\n{served.log_tail()}"
            assert time.monotonic() < deadline, served.log_tail()
            time.sleep(0.2)
        yield port, served


def composed_env(isvc: Any) -> dict[str, str]:
    """The literal env of the InferenceService's container."""
    [container] = isvc["spec"]["predictor"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}
