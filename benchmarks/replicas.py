"""Two replicas of the function, one killed while services converge: what is lost or repeated.

    .venv/bin/python benchmarks/replicas.py [--services 100] [--namespaces 4] [--smoke]
        (as root: it runs a node)

Starts the end-to-end tier's plane with a node: Crossplane's Deployment runtime runs the
function's image from the Function package on a real kubelet, with two replicas (preferring
nodes apart, `devtools.cluster.platform.replica_spread`; this plane has one node). A catalog (the
scale benchmark's) on a simulated GPU node, then two phases, each applying `--services` more
AIMServices and, once half of their InferenceServices exist, deleting one function pod with no
grace, as a lost node would:

- two replicas: Crossplane's gRPC client balances calls over the pods of the function's headless
  Service (round robin), so the other pod goes on composing;
- one replica (the Deployment scaled down between the phases): the baseline, what losing the
  only pod costs.

Per phase it prints: from the kill to the next write of one of the phase's services, the longest
pause between two such writes after the kill, the time until the Deployment had its replicas
ready again and until every service was Running; the services lost (not Running, or Failed on
the way) and duplicated (more than one InferenceService); and the events Crossplane recorded for
the phase's services (its recorder folds an event told again into the first one's `count`): in
all, per service, and how many were repeats of a (service, reason, message) already told. Each
replica remembers what it told each XR (function/server/told.py); a call that lands on the other
replica is told against the XR's copy instead, so the repeats are what two memories cost.

KServe cannot run here: `KServeStandIn` reports each InferenceService Ready. Figures depend on the
machine; the script asserts nothing, and exits 1 when a phase could not finish (a wait past its
bound), after printing what it has.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from benchmarks.args import at_least
from benchmarks.scale import MODEL, BatchIncompleteError, apply_services, wait
from benchmarks.watchers import SERVICE_LABEL, KServeStandIn, ServiceWatch
from devtools.cluster.controlplane import CROSSPLANE_NAMESPACE
from devtools.cluster.converge import ISVC, templates_of, wait_status
from devtools.cluster.kube import Kube
from devtools.cluster.platform import FUNCTION_LABEL, Platform, catalog_entry, start_platform
from devtools.cluster.simulate import simulate_gpu_node
from devtools.pkg.image import build_image
from devtools.tools import build_tools

PHASES: Final = (("two replicas", 2), ("one replica", 1))
"""Two replicas first: Crossplane dials the function once both pods are ready, and learns of a
pod gone (scaled down, or killed) when its connection breaks."""
TIMEOUT_S: Final = 600.0
"""How long a phase may wait, plus a second per service."""


@dataclass
class Phase:
    """One phase's figures."""

    label: str
    replicas: int
    size: int
    incomplete: str | None = None
    to_first_write_s: float | None = None
    """From the kill to the next write of one of the phase's services."""
    longest_pause_s: float | None = None
    """The longest time after the kill with none of the phase's services written."""
    to_replicas_s: float | None = None
    """From the kill to the Deployment's replicas all ready again (a new pod for the killed)."""
    to_running_s: float | None = None
    """From the kill to every service of the phase Running."""
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    events: int = 0
    repeats: int = 0
    reasons: Counter[str] = field(default_factory=Counter)


def function_pods(kube: Kube) -> list[dict[str, Any]]:
    """The function's pods, by the label Crossplane gives them, oldest first."""
    pods = [
        p
        for p in kube.list("v1", "Pod", CROSSPLANE_NAMESPACE)
        if FUNCTION_LABEL in (p["metadata"].get("labels") or {})
    ]
    return sorted(pods, key=lambda p: str(p["metadata"].get("creationTimestamp")))


def ready_pods(kube: Kube) -> list[str]:
    """The names of the function's pods that are ready and not being deleted."""
    return [
        p["metadata"]["name"]
        for p in function_pods(kube)
        if "deletionTimestamp" not in p["metadata"]
        and any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (p.get("status") or {}).get("conditions") or []
        )
    ]


def set_replicas(kube: Kube, replicas: int) -> None:
    """Scale the function as a platform team would: the DeploymentRuntimeConfig's replicas."""
    path = kube.path("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig", None, "default")
    patch = {"spec": {"deploymentTemplate": {"spec": {"replicas": replicas}}}}
    kube.request("PATCH", path, patch, content_type="application/merge-patch+json")
    wait(
        f"{replicas} ready function pods and no other",
        lambda: len(ready_pods(kube)) == replicas == len(function_pods(kube)),
        120,
        (),
    )
    time.sleep(2)  # the hosts file that names the Service's pods follows every half second


def kill_one(kube: Kube) -> str:
    """Delete the oldest ready function pod at once, as its node's loss would; its name."""
    victim = ready_pods(kube)[0]
    kube.request(
        "DELETE",
        kube.path("v1", "Pod", CROSSPLANE_NAMESPACE, victim),
        {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0},
    )
    return victim


class ReplicaClock:
    """When the Deployment had all its replicas ready again after a kill, polled on a thread."""

    def __init__(self, kube: Kube, replicas: int, victim: str, since: float) -> None:
        """Start polling for `replicas` ready pods, none of them `victim`."""
        self._kube, self._replicas, self._victim, self._since = kube, replicas, victim, since
        self.after_s: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="replica-clock", daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            ready = ready_pods(self._kube)
            if len(ready) == self._replicas and self._victim not in ready:
                self.after_s = time.time() - self._since
                return

    def stop(self) -> None:
        """Stop polling (the figure stays None if they never were)."""
        self._stop.set()
        self._thread.join(timeout=5)


def run_phase(
    platform: Platform,
    watches: tuple[KServeStandIn, ServiceWatch],
    teams: Sequence[str],
    f: Phase,
    first: int,
) -> None:
    """Apply the phase's services (from `first`), kill a function pod half way, wait for all."""
    kube, (kserve, services) = platform.kube, watches
    set_replicas(kube, f.replicas)
    keys = [f"{teams[i % len(teams)]}/svc-{i}" for i in range(first, first + f.size)]
    apply_services(kube, teams, first, f.size)
    timeout = TIMEOUT_S + f.size
    half = (f.size + 1) // 2
    wait(
        "half of the phase's InferenceServices",
        lambda: len(kserve.services & set(keys)) >= half,
        timeout,
        watches,
    )
    killed_at = time.time()
    clock = ReplicaClock(kube, f.replicas, kill_one(kube), killed_at)
    try:
        wait(
            "every service of the phase Running",
            lambda: all(map(services.history.running, keys)),
            timeout,
            watches,
        )
        f.to_running_s = time.time() - killed_at
        wait("the Deployment's replicas ready again", lambda: clock.after_s is not None, 180, ())
    finally:
        clock.stop()
        f.to_replicas_s = clock.after_s
        measure(platform.kube, services, keys, killed_at, f)


def measure(
    kube: Kube, services: ServiceWatch, keys: Sequence[str], killed_at: float, f: Phase
) -> None:
    """What the phase left: writes after the kill, lost and duplicated services, events."""
    writes = services.history.writes
    after = sorted(t for k in keys for t, _ in writes.get(k, ()) if t >= killed_at)
    if after:
        f.to_first_write_s = after[0] - killed_at
        f.longest_pause_s = max(b - a for a, b in zip([killed_at, *after], after, strict=False))
    f.lost = [
        k
        for k in keys
        if not services.history.running(k) or any(h == "Failed" for _, h in writes.get(k, ()))
    ]
    owned: Counter[str] = Counter()
    for namespace in sorted({k.split("/")[0] for k in keys}):
        for isvc in kube.list(ISVC, "InferenceService", namespace):
            service = (isvc["metadata"].get("labels") or {}).get(SERVICE_LABEL)
            owned[f"{namespace}/{service}"] += 1
    f.duplicated = [k for k in keys if owned[k] > 1]
    f.lost += [k for k in keys if owned[k] == 0 and k not in f.lost]
    told: Counter[tuple[str, str, str]] = Counter()
    for namespace in sorted({k.split("/")[0] for k in keys}):
        for event in kube.list("v1", "Event", namespace):
            about = event.get("involvedObject") or {}
            key = f"{namespace}/{about.get('name')}"
            if about.get("kind") != "AIMService" or key not in keys:
                continue
            times = int(event.get("count") or 1)
            told[(key, str(event.get("reason")), str(event.get("message")))] += times
            f.reasons[str(event.get("reason"))] += times
    f.events = sum(told.values())
    f.repeats = sum(n - 1 for n in told.values())


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def report(phases: Sequence[Phase]) -> None:
    """The phases side by side."""
    rows: list[tuple[str, Callable[[Phase], str]]] = [
        ("replicas", lambda f: str(f.replicas)),
        ("services", lambda f: str(f.size)),
        ("kill to next service written (s)", lambda f: _s(f.to_first_write_s)),
        ("longest pause in writes after the kill (s)", lambda f: _s(f.longest_pause_s)),
        ("kill to replicas ready again (s)", lambda f: _s(f.to_replicas_s)),
        ("kill to every service Running (s)", lambda f: _s(f.to_running_s)),
        ("services lost", lambda f: str(len(f.lost))),
        ("services duplicated", lambda f: str(len(f.duplicated))),
        ("events", lambda f: str(f.events)),
        ("events per service", lambda f: f"{f.events / f.size:.2f}"),
        ("events repeated", lambda f: str(f.repeats)),
    ]
    width = max(len(r[0]) for r in rows)
    print("\n" + " " * width + "".join(f"  {f.label:>14}" for f in phases))
    for name, cell in rows:
        print(name.ljust(width) + "".join(f"  {cell(f):>14}" for f in phases))
    for f in phases:
        if f.incomplete:
            print(f"INCOMPLETE {f.label}: {f.incomplete}")
        for what, keys in (("lost", f.lost), ("duplicated", f.duplicated)):
            if keys:
                print(f"{f.label}: {what}: {', '.join(keys[:10])}")
        print(f"{f.label}: events by reason: {dict(f.reasons.most_common())}")


@contextlib.contextmanager
def plane(work: Path, namespaces: int) -> Iterator[tuple[Platform, list[str]]]:
    """The plane with two function replicas on its node, a catalog and the team namespaces."""
    tools = build_tools()
    image = build_image(work / "image")
    with start_platform(
        tools, tools.crds, image, work / "plane", node=True, replicas=2
    ) as platform:
        kube = platform.kube
        # Both pods ready before the first call, so that Crossplane's client knows both.
        set_replicas(kube, 2)
        simulate_gpu_node(kube, "gpu-node-0")
        kube.apply_all(catalog_entry("AIMClusterModel", MODEL, None))
        wait_status(platform, "AIMClusterModel", MODEL, None, "Ready")
        [template] = templates_of(kube, "AIMClusterServiceTemplate", MODEL)
        name = template["metadata"]["name"]
        wait_status(platform, "AIMClusterServiceTemplate", name, None, "Available")
        yield platform, [platform.team_namespace(f"team-{i}") for i in range(namespaces)]


def main(argv: Sequence[str] | None = None) -> None:
    """Run both phases on one plane and print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--services", type=at_least(2, "--services"), default=100, help="services per phase"
    )
    parser.add_argument(
        "--namespaces", type=at_least(1, "--namespaces"), default=4, help="team namespaces"
    )
    parser.add_argument("--smoke", action="store_true", help="4 services a phase (for tests)")
    args = parser.parse_args(argv)
    size = 4 if args.smoke else args.services
    phases = [Phase(label, replicas, size) for label, replicas in PHASES]
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aim-replicas-")))
        platform, teams = stack.enter_context(plane(work, args.namespaces))
        kserve = stack.enter_context(KServeStandIn(platform.kube))
        services = stack.enter_context(ServiceWatch(platform.kube))
        for i, f in enumerate(phases):
            try:
                run_phase(platform, (kserve, services), teams, f, i * size)
            except BatchIncompleteError as e:
                f.incomplete = str(e)
                break
    report(phases)
    if any(f.incomplete for f in phases):
        sys.exit(1)


if __name__ == "__main__":
    main()
