"""Well-formed callers' latency with and without hostile requests mixed in, in one run.

    .venv/bin/python benchmarks/isolation.py [--calls N] [--smoke]

Starts `function-aim --insecure` (worker pool, as served) and `function-aim --workers 0`
(composing on the server's own thread, as before the pool) and, against each, drives
well-formed callers (the resolved AIMService of benchmarks/run_function.py) at concurrency 8:
once alone, once beside 2 callers that loop over requests which once stalled or crashed the
function (a discovery result of 4 KiB of `[]`, one nested 4,096 levels deep, a model cache of
size 1e9999999). The well-formed callers' p50 and p99 are printed for each pair, beside the
hostile calls' own.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import grpc
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from benchmarks.run_function import resolved_request
from benchmarks.run_function import settled as settled_service
from devtools.render.harness import Server, serve_function
from devtools.render.requests import run_function_request, selects

EXAMPLES: Final = Path(__file__).resolve().parents[1] / "examples"
WELL_FORMED_CALLERS: Final = 8
HOSTILE_CALLERS: Final = 2


def _documents(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d] if path.exists() else []


def settled(
    stub: grpcv1.FunctionRunnerServiceStub,
    example: str,
    message: str | None = None,
    **spec: str,
) -> fnv1.RunFunctionRequest:
    """An example's XR with its requirements answered from its required.yaml.

    That is the last call of a reconcile; the discovery Pod's termination message, or spec
    fields, are replaced by the given ones.
    """
    folder = EXAMPLES / example
    [xr] = _documents(folder / "xr.yaml")
    xr["spec"].update(spec)
    pool = _documents(folder / "required.yaml")
    for obj in pool:
        for status in obj.get("status", {}).get("containerStatuses", []):
            if message is not None:
                status["state"]["terminated"]["message"] = message
    observed = {
        o["metadata"]["annotations"]["crossplane.io/composition-resource-name"]: o
        for o in _documents(folder / "observed.yaml")
    }
    req = run_function_request(xr, observed, {})
    for _ in range(4):
        rsp = stub.RunFunction(req)
        required = {
            name: [o for o in pool if selects(selector, o)]
            for name, selector in rsp.requirements.resources.items()
        }
        req = run_function_request(xr, observed, required)
    return req


def hostile_requests(target: str) -> list[fnv1.RunFunctionRequest]:
    """Requests that once stalled the server or ended in an internal error."""
    channel = grpc.insecure_channel(target)
    stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
    try:
        requests = [
            settled(stub, "aimclusterservicetemplate-discovered", message="[]" * 2048),
            settled(stub, "aimclusterservicetemplate-discovered", message="[" * 4096),
            settled(stub, "aimmodelcache-downloading", size="1e9999999"),
        ]
        # Each must reach the parser it once broke, and be answered with a condition.
        for req in requests:
            rsp = stub.RunFunction(req)
            failed = [
                f"{c.type}={c.reason}"
                for c in rsp.conditions
                if c.status != fnv1.STATUS_CONDITION_TRUE
            ]
            print(f"hostile {req.observed.composite.resource['kind']}: {failed}")
        return requests
    finally:
        channel.close()


async def measure(
    target: str, good: fnv1.RunFunctionRequest, bad: list[fnv1.RunFunctionRequest], calls: int
) -> tuple[list[float], list[float]]:
    """Latencies (ms) of `calls` well-formed calls, and of the hostile calls made meanwhile."""
    good_times: list[float] = []
    bad_times: list[float] = []
    done = asyncio.Event()
    async with grpc.aio.insecure_channel(target) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
        for _ in range(50):
            await stub.RunFunction(good)

        async def well_formed(n: int) -> None:
            for _ in range(n):
                start = time.perf_counter()
                await stub.RunFunction(good)
                good_times.append((time.perf_counter() - start) * 1000)

        async def hostile(offset: int) -> None:
            i = offset
            while not done.is_set():
                start = time.perf_counter()
                await stub.RunFunction(bad[i % len(bad)])
                bad_times.append((time.perf_counter() - start) * 1000)
                i += 1

        attackers = [
            asyncio.ensure_future(hostile(i)) for i in range(HOSTILE_CALLERS if bad else 0)
        ]
        await asyncio.gather(
            *(well_formed(calls // WELL_FORMED_CALLERS) for _ in range(WELL_FORMED_CALLERS))
        )
        done.set()
        await asyncio.gather(*attackers)
    return good_times, bad_times


def _percentiles(times: list[float]) -> str:
    if len(times) < 2:  # noqa: PLR2004 - quantiles need two
        return f"{'-':>9}{'-':>9}"
    q = statistics.quantiles(times, n=100)
    return f"{q[49]:>9.2f}{q[98]:>9.2f}"


@contextmanager
def servers() -> Iterator[list[tuple[str, Server]]]:
    """The function as served (worker pool) and composing in process (the old way)."""
    with serve_function() as pool, serve_function("--workers", "0") as inline:
        yield [("worker pool", pool), ("in process", inline)]


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2400, help="well-formed calls per row")
    parser.add_argument("--smoke", action="store_true", help="a few calls per row (for tests)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.calls = 2 * WELL_FORMED_CALLERS
    with servers() as targets:
        channel = grpc.insecure_channel(targets[0][1].target)
        stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
        first = resolved_request()
        good = settled_service(stub, first)
        channel.close()
        bad = hostile_requests(targets[0][1].target)
        print(
            f"{args.calls} well-formed calls per row from {WELL_FORMED_CALLERS} callers; "
            f"hostile rows add {HOSTILE_CALLERS} callers looping over {len(bad)} hostile requests"
        )
        print(
            f"{'server':<14}{'mix':<10}{'p50 ms':>9}{'p99 ms':>9}   hostile: calls  p50 ms  p99 ms"
        )
        for name, server in targets:
            for mix, hostile in (("alone", []), ("hostile", bad)):
                good_times, bad_times = asyncio.run(
                    measure(server.target, good, hostile, args.calls)
                )
                extra = f"{len(bad_times):>15}{_percentiles(bad_times)}" if hostile else ""
                print(f"{name:<14}{mix:<10}{_percentiles(good_times)}   {extra}")


if __name__ == "__main__":
    main()
