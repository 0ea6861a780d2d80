"""Cold start from zero: what holding and forwarding the waking request adds to a pod's own start.

    .venv/bin/python benchmarks/coldstart.py [--wakes N] [--smoke]      (as root: it runs a node)

Starts a control plane with a real node (scheduler, kubelet, containerd, kube-proxy), KEDA and
the KEDA HTTP add-on, as the end-to-end tier does, and the test AIM image's OpenAI-compatible
server on it. Each round, on fresh workloads, measures in this process:

- the baseline: a Deployment of that server at zero replicas scaled to one by hand, no request
  anywhere: from the scale to its pod seen, and from the pod seen to it Ready. This is what any
  start of the pod costs, measured in the same run on the same node;
- a wake: the same server at zero behind an HTTPScaledObject, and a chat completion sent to the
  interceptor's proxy: from the request to its pod seen (the add-on's scaler telling KEDA, KEDA
  scaling the Deployment), the pod seen to Ready, Ready to the answer (the interceptor seeing
  the endpoint and forwarding), and the request to the answer;
- warm: a second request once that pod runs, the interceptor's hop alone.

The overhead the cold start adds is the wake's request-to-answer less the baseline's
scale-to-Ready. Pods are polled every 0.1 s, the resolution of every pod figure. The Gateway's
hop in front of the interceptor (a Traefik route) is not in it: the journey on the real node
prints the whole path from a client (`scale to zero: waking request to answer`).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from benchmarks.args import at_least
from devtools.cluster.aimimage import stub_image
from devtools.cluster.controlplane import ControlPlane, start_control_plane
from devtools.cluster.keda import start_keda
from devtools.cluster.kedahttp import KedaHttp, Timeouts, start_keda_http
from devtools.cluster.kube import Kube, wait_for
from devtools.cluster.node import NODE_CONTROLLERS, start_node
from devtools.cluster.wake import (
    POLL_S,
    Workload,
    chat,
    held_request,
    is_ready,
    wait_taken_up,
)
from devtools.tools import build_tools

NS: Final = "coldstart"
IMAGE: Final = "aim.local/aim-stub:1"
HOLD_S: Final = 120.0
"""How long the interceptor holds a request for its pod (the add-on's default is 1.5 s)."""
SCALEDOWN_S: Final = 300
"""Longer than a round: no workload goes back to zero while it is measured."""


@dataclass(frozen=True)
class Baseline:
    """A Deployment scaled from zero by hand, in seconds."""

    scale_to_seen: float
    seen_to_ready: float

    @property
    def to_ready(self) -> float:
        """From the scale to the pod Ready: what any start of the pod costs."""
        return self.scale_to_seen + self.seen_to_ready


@dataclass(frozen=True)
class Wake:
    """A workload at zero woken by a request, in seconds from the request."""

    seen: float
    ready: float
    answered: float
    warm: float
    """A second request's, once the pod runs."""


@dataclass(frozen=True)
class Round:
    """One round: a baseline and a wake, each on workloads of its own."""

    base: Baseline
    wake: Wake

    @property
    def overhead(self) -> float:
        """The wake's request-to-answer less the baseline's scale-to-Ready."""
        return self.wake.answered - self.base.to_ready


@contextlib.contextmanager
def cluster(root: Path) -> Iterator[tuple[ControlPlane, KedaHttp]]:
    """A plane with a node, the test AIM image loaded on it, KEDA and the HTTP add-on."""
    tools = build_tools()
    with contextlib.ExitStack() as stack:
        plane = stack.enter_context(
            start_control_plane(tools, root / "plane", extra_controllers=NODE_CONTROLLERS)
        )
        node = stack.enter_context(start_node(tools, plane, root / "node"))
        (root / "images").mkdir()
        node.load(stub_image(tools, IMAGE, root / "images"))
        stack.enter_context(start_keda(tools, plane, root / "keda"))
        yield plane, stack.enter_context(start_keda_http(tools, plane, Timeouts(HOLD_S, 30.0)))


def scaled_by_hand(kube: Kube, workload: Workload) -> Baseline:
    """Scale a Deployment at zero to one: seconds to its pod seen, then from seen to Ready."""
    namespace, deployment = (
        o for o in workload.objects(SCALEDOWN_S) if o["kind"] in {"Namespace", "Deployment"}
    )
    kube.apply_all([namespace, deployment])
    t0 = time.monotonic()
    kube.apply({**deployment, "spec": {**deployment["spec"], "replicas": 1}})
    wait_for(f"{workload.name}'s pod", lambda: workload.pods(kube) or None, interval_s=POLL_S)
    t_seen = time.monotonic()
    wait_for(
        f"{workload.name}'s pod Ready",
        lambda: any(map(is_ready, workload.pods(kube))),
        timeout_s=HOLD_S,
        interval_s=POLL_S,
        explain=lambda: workload.explain(kube),
    )
    return Baseline(t_seen - t0, time.monotonic() - t_seen)


def woken(kube: Kube, addon: KedaHttp, workload: Workload) -> Wake:
    """Wake a workload at zero with a request through the interceptor, then send another."""
    kube.apply_all(workload.objects(SCALEDOWN_S))
    wait_taken_up(kube, workload)
    held = held_request(kube, addon.proxy_url, workload, HOLD_S + 30)
    if held.status != 200 or held.pod_seen_s is None or held.pod_ready_s is None:  # noqa: PLR2004
        msg = f"INCOMPLETE: the wake of {workload.name} was answered {held}"
        raise SystemExit(msg)
    t0 = time.monotonic()
    status, _, _ = chat(addon.proxy_url, workload.host, timeout_s=30)
    warm = time.monotonic() - t0
    if status != 200:  # noqa: PLR2004
        msg = f"INCOMPLETE: a warm request to {workload.name} was answered {status}"
        raise SystemExit(msg)
    return Wake(held.pod_seen_s, held.pod_ready_s, held.answered_s, warm)


def rounds(kube: Kube, addon: KedaHttp, count: int) -> list[Round]:
    """Baseline and wake in turn, each on workloads of its own."""
    out = []
    for i in range(count):
        base = scaled_by_hand(kube, Workload(NS, f"base-{i}", IMAGE))
        wake = woken(kube, addon, Workload(NS, f"wake-{i}", IMAGE))
        out.append(Round(base, wake))
        print(f"round {i + 1}/{count} done", file=sys.stderr)
    return out


def report(measured: list[Round]) -> None:
    """One row per figure: its median and its largest over the rounds."""
    rows: list[tuple[str, Callable[[Round], float]]] = [
        ("baseline: scaled by hand to pod seen", lambda r: r.base.scale_to_seen),
        ("baseline: pod seen to Ready", lambda r: r.base.seen_to_ready),
        ("baseline: scaled to Ready", lambda r: r.base.to_ready),
        ("wake: request to pod seen", lambda r: r.wake.seen),
        ("wake: pod seen to Ready", lambda r: r.wake.ready - r.wake.seen),
        ("wake: Ready to answered", lambda r: r.wake.answered - r.wake.ready),
        ("wake: request to answered", lambda r: r.wake.answered),
        ("warm: request to answered", lambda r: r.wake.warm),
        ("overhead: wake answered - baseline Ready", lambda r: r.overhead),
    ]
    print(f"cold start from zero, {len(measured)} rounds (seconds; pods polled every {POLL_S} s)")
    print(f"{'':<42}{'p50':>8}{'max':>8}")
    for name, figure in rows:
        values = [figure(r) for r in measured]
        print(f"{name:<42}{statistics.median(values):>8.3f}{max(values):>8.3f}")


def main() -> None:
    """Start the cluster, run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wakes", type=at_least(1, "--wakes"), default=5, help="rounds to run")
    parser.add_argument("--smoke", action="store_true", help="one round (for tests)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, cluster(Path(tmp)) as (plane, addon):
        measured = rounds(plane.admin, addon, 1 if args.smoke else args.wakes)
    report(measured)


if __name__ == "__main__":
    main()
