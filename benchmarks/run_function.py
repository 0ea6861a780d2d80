"""RunFunction latency and throughput for a fully resolved AIMService, beside a no-op function.

    .venv/bin/python benchmarks/run_function.py [--calls N] [--smoke]

Starts `function-aim --insecure` with one and with two worker processes and
`benchmarks/noop_function.py` (the same SDK and server setup, answering without composing) as
separate processes, as Crossplane would reach them, and drives each over loopback gRPC with the
same request at concurrency 1 and 64, printing each one's ratio to the no-op. The client runs
on the same cores, so on a small machine the figures at 64 include its share. The request is
what Crossplane sends once everything is fetched: a routed AIMService choosing its template
among a realistic catalog, with its InferenceService and HTTPRoute observed. The difference
between the two rows is what composing costs on top of gRPC, protobuf and the SDK. A third row
sends the same bytes for an AIMRuntimeConfig, which composes nothing: what reading the request,
the hand-off to a worker and writing a response cost before any composing.

`--smoke` runs every row with a few calls: the test command runs it, so a benchmark that breaks
fails the suite; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from benchmarks.args import at_least
from devtools.render.harness import serve_function
from function.api.meta import Manifest
from function.kube.convert import struct_to_dict

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
GPUS = ("MI300X", "MI325X", "MI355X", "MI210")
PRECISIONS = ("fp8", "fp16", "bf16")
CONCURRENCY = (1, 64)
WARMUP = 100
"""Calls before each timed run, so connections and worker caches are warm."""
SMOKE_CALLS = 8


def aim(kind: str, name: str, spec: dict[str, Any], status: str, *, namespaced: bool) -> Manifest:
    """An AIM object as the API server would return it."""
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "resourceVersion": "4711"}
    if namespaced:
        meta["namespace"] = NS
    return {
        "apiVersion": API,
        "kind": kind,
        "metadata": meta,
        "spec": spec,
        "status": {"status": status},
    }


def templates(model: str, kind: str, *, namespaced: bool) -> list[Any]:
    """A model's templates as discovery would create them: each GPU x precision x metric."""
    out = []
    for gpu in GPUS:
        for precision in PRECISIONS:
            for metric in ("latency", "throughput"):
                spec = {
                    "modelName": model,
                    "type": "optimized",
                    "metric": metric,
                    "precision": precision,
                    "hardware": {"gpu": {"requests": 1, "model": gpu}},
                }
                status = "Available" if gpu != "MI355X" else "NotAvailable"
                name = f"{model}-{gpu.lower()}-{metric}-{precision}"
                out.append(aim(kind, name, spec, status, namespaced=namespaced))
    return out


def resolved_request() -> fnv1.RunFunctionRequest:
    """The last call of a reconcile: every requirement answered, composed objects observed."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "bench"
    req.observed.composite.resource.update(
        {
            "apiVersion": API,
            "kind": "AIMService",
            "metadata": {"name": "qwen-chat", "namespace": NS, "uid": "7f3c2a1e-uid"},
            "spec": {
                "model": {"ref": "qwen3-32b"},
                "replicas": 2,
                "runtimeConfigName": "default",
                "env": [
                    {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}}
                ],
                "routing": {
                    "enabled": True,
                    "gatewayRef": {"name": "inference", "namespace": "gw"},
                },
            },
            "status": {
                "status": "Running",
                "resolvedTemplate": {"name": "qwen3-32b-mi325x-latency-fp8", "scope": "Cluster"},
            },
        }
    )
    cluster_config = aim(
        "AIMClusterRuntimeConfig",
        "default",
        {"env": [{"name": "A", "value": "1"}]},
        "",
        namespaced=False,
    )
    ns_config = aim(
        "AIMRuntimeConfig", "default", {"serviceAccountName": "sa"}, "", namespaced=True
    )
    model = aim(
        "AIMClusterModel",
        "qwen3-32b",
        {"image": "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"},
        "Ready",
        namespaced=False,
    )
    required = {
        "runtime-config": [ns_config],
        "runtime-config-cluster": [cluster_config],
        "model": [],
        "model-cluster": [model],
        "templates": templates("llama-8b", "AIMServiceTemplate", namespaced=True),
        "cluster-templates": [
            t
            for m in ("qwen3-32b", "llama-70b", "mistral-7b")
            for t in templates(m, "AIMClusterServiceTemplate", namespaced=False)
        ],
        # The shared Gateway, read for its listeners: the route names no hostnames.
        "gateway": [
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "inference", "namespace": "gw"},
                "spec": {
                    "gatewayClassName": "platform",
                    "listeners": [
                        {
                            "name": "http",
                            "protocol": "HTTP",
                            "port": 80,
                            "allowedRoutes": {"namespaces": {"from": "All"}},
                        }
                    ],
                },
            }
        ],
    }
    for key, items in required.items():
        req.required_resources[key].SetInParent()
        for item in items:
            req.required_resources[key].items.add().resource.update(item)
    return req


_CONDITION_STATUS = {
    fnv1.STATUS_CONDITION_TRUE: "True",
    fnv1.STATUS_CONDITION_FALSE: "False",
    fnv1.STATUS_CONDITION_UNKNOWN: "Unknown",
}


def with_observed(
    req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse
) -> fnv1.RunFunctionRequest:
    """The request again, with what the first answer composed now observed and ready.

    The service carries the conditions that answer set, as Crossplane writes them: a settled
    service's call changes none, so it emits no events, which is the call that repeats at scale.
    """
    out = fnv1.RunFunctionRequest()
    out.CopyFrom(req)
    conditions = [
        {"type": c.type, "status": _CONDITION_STATUS[c.status], "reason": c.reason}
        for c in rsp.conditions
    ]
    out.observed.composite.resource.get_or_create_struct("status").update(
        {"conditions": conditions}
    )
    for name, desired in rsp.desired.resources.items():
        manifest = struct_to_dict(desired.resource)
        meta = manifest["metadata"]
        assert isinstance(meta, dict)  # noqa: S101 - every composed object has metadata
        meta["uid"] = f"uid-{name}"
        out.observed.resources[name].resource.update(manifest)
    out.observed.resources["inference-service"].resource.update(
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    )
    out.observed.resources["http-route"].resource.update(
        {
            "status": {
                "parents": [
                    {
                        "parentRef": {"name": "inference", "namespace": "gw"},
                        "controllerName": "example.com/gw",
                        "conditions": [{"type": "Accepted", "status": "True"}],
                    }
                ]
            }
        }
    )
    return out


def settled(
    stub: grpcv1.FunctionRunnerServiceStub, first: fnv1.RunFunctionRequest
) -> fnv1.RunFunctionRequest:
    """The request once the service runs, as its every later reconcile sends it.

    Composed objects are observed Ready, and the service carries the conditions of the call
    that saw them so (the first call cannot know them yet).
    """
    seen = with_observed(first, stub.RunFunction(first))
    return with_observed(first, stub.RunFunction(seen))


def composing_nothing(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    """The same request for a kind with nothing to compose: the function's own floor."""
    out = fnv1.RunFunctionRequest()
    out.CopyFrom(req)
    out.observed.composite.resource.update(
        {"kind": "AIMRuntimeConfig", "metadata": {"name": "default", "namespace": NS}, "spec": {}}
    )
    if "status" in out.observed.composite.resource.fields:
        del out.observed.composite.resource.fields["status"]
    return out


@dataclass(frozen=True)
class Figures:
    """Latency percentiles (ms) and calls per second of one run."""

    p50: float
    p99: float
    rate: float


async def drive(target: str, req: fnv1.RunFunctionRequest, calls: int, concurrency: int) -> Figures:
    """`calls` RunFunction calls from `concurrency` concurrent callers on one channel."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
        for _ in range(min(WARMUP, calls)):
            await stub.RunFunction(req)
        times: list[float] = []

        async def caller(n: int) -> None:
            for _ in range(n):
                start = time.perf_counter()
                await stub.RunFunction(req)
                times.append((time.perf_counter() - start) * 1000)

        # Calls rounded up to a whole number per caller: each makes at least one.
        share = -(-calls // concurrency)
        began = time.perf_counter()
        await asyncio.gather(*(caller(share) for _ in range(concurrency)))
        elapsed = time.perf_counter() - began
    q = statistics.quantiles(times, n=100)
    return Figures(p50=q[49], p99=q[98], rate=len(times) / elapsed)


def rss_mib(pid: int) -> float:
    """Resident memory of a server process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: Sequence[str] | None = None) -> None:
    """Measure the no-op and function-aim with 1 and 2 workers at each concurrency."""
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--calls",
        type=at_least(2, "--calls"),  # the least statistics.quantiles takes
        default=1600,
        help="calls per run (per row), at least 2; a caller makes at least one (default 1600)",
    )
    parser.add_argument("--smoke", action="store_true", help="a few calls per row (for tests)")
    args = parser.parse_args(argv)
    if args.smoke:
        # Fewer calls than callers at 64: the smoke run covers the rounding up too.
        args.calls = SMOKE_CALLS
    noop_program = (str(Path(__file__).with_name("noop_function.py")),)

    with (
        serve_function(program=noop_program) as noop_server,
        serve_function("--workers", "1") as one_worker,
        serve_function("--workers", "2") as two_workers,
    ):
        first = resolved_request()
        channel = grpc.insecure_channel(one_worker.target)
        stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
        req = settled(stub, first)
        rsp = stub.RunFunction(req)
        floor = composing_nothing(req)
        floor_rsp = stub.RunFunction(floor)
        channel.close()
        status = struct_to_dict(rsp.desired.composite.resource)["status"]
        # The benchmark must time the real path: a Running service with both objects composed.
        assert isinstance(status, dict)  # noqa: S101
        assert status["status"] == "Running", status  # noqa: S101
        assert set(rsp.desired.resources) == {"inference-service", "http-route"}  # noqa: S101
        assert not rsp.results, rsp.results  # noqa: S101
        # ...and the floor a valid runtime config, accepted with nothing composed.
        assert not floor_rsp.results, floor_rsp.results  # noqa: S101
        assert not floor_rsp.desired.resources  # noqa: S101

        rows = (
            ("no-op", noop_server, req),
            ("aim, no compose", one_worker, floor),
            ("aim, 1 worker", one_worker, req),
            ("aim, 2 workers", two_workers, req),
        )
        objects = sum(len(r.items) for r in req.required_resources.values())
        print(
            f"request {req.ByteSize():,} B ({objects} required objects), "
            f"response {rsp.ByteSize():,} B, {args.calls} calls per row"
        )
        print(f"{'function':<16}{'concurrency':>12}{'p50 ms':>10}{'p99 ms':>10}{'calls/s':>10}")
        ratios = []
        for concurrency in CONCURRENCY:
            figures = {}
            for name, server, request in rows:
                f = asyncio.run(drive(server.target, request, args.calls, concurrency))
                figures[name] = f
                print(f"{name:<16}{concurrency:>12}{f.p50:>10.2f}{f.p99:>10.2f}{f.rate:>10,.0f}")
            base = figures["no-op"]
            for name, f in figures.items():
                if name != "no-op":
                    ratios.append(
                        f"{name} at {concurrency}: p50 {f.p50 / base.p50:.1f}x, "
                        f"p99 {f.p99 / base.p99:.1f}x the no-op"
                    )
        print("\n".join(ratios))
        print(
            "RSS after the runs: "
            + ", ".join(
                f"{name} {rss_mib(server.pid):.0f} MiB"
                for name, server, _ in rows
                if name != "aim, no compose"
            )
            + " (server process; workers are separate processes)"
        )


if __name__ == "__main__":
    main()
