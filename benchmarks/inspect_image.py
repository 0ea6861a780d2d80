"""Image inspection latency: OrasInspector against a real loopback registry, beside a baseline.

    .venv/bin/python benchmarks/inspect_image.py [--calls N] [--smoke]

Starts Debian's docker-registry on loopback (devtools/cluster/registry.py), pushes one AIM-labelled
image, and measures in this process: the baseline (spawning `oras version`, the floor any oras
call pays) and a full inspection (manifest, then config: two oras runs) sequentially and eight
at a time. An inspection happens once per image, so this bounds the extra time of the first
reconcile of a model, not of every call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from devtools.cluster.registry import start_registry
from devtools.tools import build_tools
from function.registry import reference
from function.registry.inspect import InspectionRequest, RegistryFailure
from function.registry.oras import OrasInspector

LABELS = {
    "com.amd.aim.model.canonicalName": "Qwen/Qwen3-32B",
    "com.amd.aim.model.recommendedDeployments": "[{'gpuModel': 'MI300X', 'gpuCount': 1}]",
}


async def timed(calls: int, concurrency: int, one: Callable[[], Awaitable[None]]) -> list[float]:
    """Latencies in ms of `calls` runs of `one`, `concurrency` at a time."""
    latencies: list[float] = []
    gate = asyncio.Semaphore(concurrency)

    async def run() -> None:
        async with gate:
            start = time.perf_counter()
            await one()
            latencies.append((time.perf_counter() - start) * 1000)

    await asyncio.gather(*(run() for _ in range(calls)))
    return latencies


def row(name: str, concurrency: int, latencies: list[float], wall: float) -> str:
    """One table row: p50, p99 and completions per second."""
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    rate = len(latencies) / wall
    return f"{name:<22}{concurrency:>5}{statistics.median(ordered):>10.1f}{p99:>10.1f}{rate:>10.1f}"


async def measure(oras: Path, host: str, calls: int) -> None:
    """Print the baseline's rows, then the inspection's."""
    image = f"{host}/amd/aim-qwen:0.8.5"
    ref = reference.parse(image)
    inspector = OrasInspector(oras=str(oras), insecure=frozenset({ref.registry}))

    async def spawn() -> None:
        proc = await asyncio.create_subprocess_exec(
            str(oras), "version", stdout=asyncio.subprocess.DEVNULL
        )
        await proc.wait()

    async def inspect() -> None:
        match await inspector.inspect(InspectionRequest(image, ref)):
            case RegistryFailure() as failure:
                msg = f"inspection failed: {failure}"
                raise RuntimeError(msg)

    print(f"{'':<22}{'conc':>5}{'p50 ms':>10}{'p99 ms':>10}{'per s':>10}")
    for name, one in (("baseline: oras version", spawn), ("inspection", inspect)):
        for concurrency in (1, 8):
            start = time.perf_counter()
            latencies = await timed(calls, concurrency, one)
            print(row(name, concurrency, latencies, time.perf_counter() - start))


def main() -> None:
    """Run the benchmark and print one row per (what, concurrency)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=80)
    parser.add_argument("--smoke", action="store_true", help="a few calls per row (for tests)")
    args = parser.parse_args()
    if args.smoke:
        args.calls = 8
    tools = build_tools()
    with tempfile.TemporaryDirectory() as tmp, start_registry(tools, Path(tmp), auth=False) as reg:
        reg.push("amd/aim-qwen", "0.8.5", LABELS, workdir=Path(tmp))
        asyncio.run(measure(tools.oras, reg.host, args.calls))


if __name__ == "__main__":
    main()
