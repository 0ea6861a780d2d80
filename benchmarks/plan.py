"""`aim plan` of a cluster model and many AIMServices: time, rounds, calls and memory per size.

    .venv/bin/python benchmarks/plan.py [--sizes 10,100,1000] [--namespaces 10] [--smoke]

Writes, per size, into a temporary directory what a platform team would plan: a cluster model
with its image's labels given as `spec.imageMetadata` (two recommended MI300X deployments, so no
registry is read) and that many AIMServices naming it, spread over the team namespaces, then
plans them in this process as `aim plan DIR --gpu-node MI300X` does (the same calls:
`aim_plan.load`, `aim_plan.rounds.plan`, then the report, `aim_plan.report`, with each
service's choice explained). It prints per size the wall time (reading the files and writing
the report included), the rounds to the fixed point, the function calls, the time per service, the
resident memory after the plan, and whether it converged with every service Running.

The baseline is the same catalog with a single service, planned first in the same run (twice,
the first warming the process up): its time, times the size, is what a plan would take if each
service cost what the first one does, the catalog included. Each row prints its ratio to that
(`/linear`): under 1 as the catalog's share is spread over more services, and flat across the
sizes when a service's cost does not grow with the others; a ratio climbing with the size is a
quadratic cost (a world scanned per question made 1,000 services 0.99x where 100 were 0.24x).
Issue 34 bounds 1,000 services at under a minute on the project's 2-core machine. Resident
memory is the process's after each plan, so it includes what the smaller plans before it left.

`--smoke` plans 3 and 10 services: the test command runs it, so a benchmark that breaks fails
the suite; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from crossplane.function import logging

from aim_plan.load import load
from aim_plan.report import data, text
from aim_plan.rounds import plan
from aim_plan.simulate import gpu_node
from aim_plan.world import World
from benchmarks.args import at_least, size_list

MODEL = "meta-llama-3-8b-instruct"
IMAGE = "ghcr.io/silogen/aim-meta-llama-llama-3-1-8b-instruct:0.7.0"
GPU = "MI300X"


def catalog() -> dict[str, Any]:
    """The cluster model of the cluster-model journey, its image's labels given."""
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMClusterModel",
        "metadata": {"name": MODEL},
        "spec": {
            "image": IMAGE,
            "discovery": {"enabled": True, "autoCreateTemplates": True},
            "resources": {
                "limits": {"cpu": "8", "memory": "64Gi"},
                "requests": {"cpu": "4", "memory": "32Gi"},
            },
            "imageMetadata": {
                "model": {
                    "canonicalName": "meta-llama/Llama-3.1-8B-Instruct",
                    "recommendedDeployments": [
                        {"gpuModel": GPU, "gpuCount": 1, "metric": m, "precision": "fp8"}
                        for m in ("latency", "throughput")
                    ],
                }
            },
        },
    }


def service(index: int, namespaces: int) -> dict[str, Any]:
    """The `index`th service, in team namespace `index % namespaces`, naming only the model."""
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": f"chat-{index:04d}", "namespace": f"team-{index % namespaces}"},
        "spec": {"model": {"ref": MODEL}},
    }


def write(directory: Path, services: int, namespaces: int) -> None:
    """The catalog, then the services one file per namespace, as a team would keep them."""
    (directory / "00-catalog.yaml").write_text(yaml.safe_dump(catalog()))
    by_namespace: dict[int, list[dict[str, Any]]] = {}
    for i in range(services):
        by_namespace.setdefault(i % namespaces, []).append(service(i, namespaces))
    for ns, docs in by_namespace.items():
        (directory / f"10-services-team-{ns}.yaml").write_text(yaml.safe_dump_all(docs))


def rss_mib() -> float:
    """This process's resident memory now (VmRSS), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass(frozen=True)
class Measured:
    """One size's plan."""

    services: int
    seconds: float
    rounds: int
    calls: int
    rss_mib: float
    converged: bool
    running: int

    @property
    def ms_per_service(self) -> float:
        """Wall time per service."""
        return self.seconds * 1000 / self.services


def measure(services: int, namespaces: int) -> Measured:
    """Write the manifests of `services` services and plan them, timed."""
    with tempfile.TemporaryDirectory(prefix="aim-plan-bench-") as tmp:
        write(Path(tmp), services, namespaces)
        start = time.perf_counter()
        loaded = load([Path(tmp)])
        result = plan(World([*loaded.objects, gpu_node(GPU, 8)]))
        text(data(result, loaded.ignored, loaded.notes))
        seconds = time.perf_counter() - start
    running = sum(
        1
        for o in result.world
        if o.get("kind") == "AIMService" and (o.get("status") or {}).get("status") == "Running"
    )
    return Measured(
        services,
        seconds,
        result.rounds,
        result.calls,
        rss_mib(),
        result.converged,
        running,
    )


def row(label: str, m: Measured, baseline: Measured) -> str:
    """One printed row: the figures and the ratio to the linear extrapolation of the baseline."""
    linear = baseline.ms_per_service * m.services / 1000
    verdict = "yes" if m.converged and m.running == m.services else "NO"
    return (
        f"{label:<22} {m.seconds:>8.2f} {m.rounds:>6} {m.calls:>7} {m.ms_per_service:>8.1f} "
        f"{m.seconds / linear:>7.2f}x {m.rss_mib:>7.0f}   {verdict} ({m.running}/{m.services})"
    )


def main() -> None:
    """Plan the baseline, then each size, and print a row for each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=size_list, default=[10, 100, 1000], help="services per plan (10,100,1000)"
    )
    parser.add_argument(
        "--namespaces", type=at_least(1, "--namespaces"), default=10, help="team namespaces (10)"
    )
    parser.add_argument("--smoke", action="store_true", help="sizes 3 and 10")
    args = parser.parse_args()
    if args.smoke:
        args.sizes = [3, 10]
    logging.configure(logging.Level.DISABLED)  # the function's own log is not the benchmark's
    measure(1, 1)  # imports and first-call caches: not the baseline's to pay
    baseline = measure(1, 1)
    print(
        f"aim plan DIR --gpu-node {GPU}: a cluster model and N AIMServices over "
        f"{args.namespaces} namespaces, in process; wall time includes reading the files "
        "and the report"
    )
    print(
        f"{'':<22} {'wall s':>8} {'rounds':>6} {'calls':>7} {'ms/svc':>8} "
        f"{'/linear':>8} {'RSS MiB':>7}   converged, all Running"
    )
    print(row("baseline: 1 service", baseline, baseline))
    for size in args.sizes:
        print(row(f"{size} services", measure(size, args.namespaces), baseline), flush=True)


if __name__ == "__main__":
    main()
