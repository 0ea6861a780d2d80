"""Latency of one RunFunction call for the AIMService slice, over loopback gRPC.

    .venv/bin/python benchmarks/run_function.py [--calls N]

Starts `function-aim --insecure` as a separate process (as Crossplane would reach it) and times
sequential calls from a gRPC client. The baseline, measured in the same run against the same
server, is the cheapest call the function answers (an unknown kind: dispatch and a FATAL result),
so the difference is what composing an AIMService costs on top of gRPC and protobuf.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import grpc
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from devtools.render import ROOT, serve_function

EXAMPLE = ROOT / "examples" / "aimservice-basic"


def slice_request() -> fnv1.RunFunctionRequest:
    """The request Crossplane sends on the second call: XR plus the resolved template lookups."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "bench"
    xr = yaml.safe_load((EXAMPLE / "xr.yaml").read_text())
    xr["metadata"]["uid"] = "00000000-0000-0000-0000-000000000001"
    req.observed.composite.resource.update(xr)
    req.required_resources["template"].SetInParent()
    tpl = yaml.safe_load((EXAMPLE / "required.yaml").read_text())
    req.required_resources["template-cluster"].items.add().resource.update(tpl)
    return req


def baseline_request() -> fnv1.RunFunctionRequest:
    """The cheapest call: a kind no composer handles."""
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update({"apiVersion": "x/v1", "kind": "Nothing"})
    return req


def measure(
    stub: grpcv1.FunctionRunnerServiceStub, req: fnv1.RunFunctionRequest, calls: int
) -> list[float]:
    """Milliseconds per call, after a warm-up."""
    for _ in range(min(100, calls)):
        stub.RunFunction(req)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        stub.RunFunction(req)
        times.append((time.perf_counter() - start) * 1000)
    return times


def rss_mib(pid: int) -> float:
    """Resident memory of the server process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def report(name: str, times: list[float]) -> None:
    """One line of percentiles and throughput."""
    q = statistics.quantiles(times, n=100)
    total_s = sum(times) / 1000
    print(
        f"{name:<10} calls={len(times):5d}  p50={q[49]:.3f} ms  p95={q[94]:.3f} ms  "
        f"p99={q[98]:.3f} ms  throughput={len(times) / total_s:,.0f}/s"
    )


def main() -> None:
    """Measure baseline and slice, print both and the difference."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()

    with serve_function() as server, grpc.insecure_channel(server.target) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
        rsp = stub.RunFunction(slice_request())
        assert not rsp.results, rsp.results  # noqa: S101 - the benchmark must time the real path
        assert "inference-service" in rsp.desired.resources  # noqa: S101
        baseline = measure(stub, baseline_request(), args.calls)
        composed = measure(stub, slice_request(), args.calls)
        rss = rss_mib(server.pid)
    report("baseline", baseline)
    report("aimservice", composed)
    print(
        f"difference p50={statistics.median(composed) - statistics.median(baseline):.3f} ms "
        f"(request {slice_request().ByteSize()} B, response {rsp.ByteSize()} B); "
        f"server RSS after {2 * args.calls} calls: {rss:.1f} MiB"
    )


if __name__ == "__main__":
    main()
