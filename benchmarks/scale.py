"""Many AIMServices on the local control plane: how fast they converge, and how quiet they stay.

    .venv/bin/python benchmarks/scale.py [--sizes 10,100,1000] [--namespaces 10] [--idle 90]
                                         [--smoke]

Starts the end-to-end tier's control plane (etcd, kube-apiserver, kube-controller-manager,
Crossplane core, function-aim as a host process with its default rechecks), installs the AIM
packages from the loopback registry, makes a catalog (a cluster model and its template, on a
simulated GPU node) and then, for each size, applies that many more AIMServices spread over the
team namespaces. It reports, per batch:

- time from the first apply to all of the batch's InferenceServices existing;
- time from the last InferenceService reported Ready to all of the batch's services Running;
- reconciles (core's log) and function calls (the function's log) per service;
- status writes per service, and those that came after the service was first Running (every
  write is an event of a watch on AIMServices, so a write that changed nothing is not one);
- then, with nothing changing, an idle window: writes, function calls per second, and CPU
  seconds and resident memory per component.

KServe cannot run here: `KServeStandIn` reports each InferenceService Ready, as its controller
would once the predictor is up. Everything else is the real thing. Figures depend on the
machine; the script prints them and asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Self

from devtools.cluster.converge import AIM, ISVC, templates_of, wait_status
from devtools.cluster.kube import Kube, KubeError, condition
from devtools.cluster.simulate import simulate_gpu_node, simulate_kserve_ready
from devtools.tools import build_tools
from tests.e2e.platform import Platform, aim, start_platform
from tests.e2e.test_scenarios import catalog_entry

MODEL: Final = "llama-8b"
APPLIERS: Final = 8
QUIET_S: Final = 15.0
"""A batch has settled when none of its services was written for this long."""
SETTLE_LIMIT_S: Final = 900.0
_CLOCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class KServeStandIn:
    """Simulated KServe, whose controller cannot run here: every InferenceService reported Ready.

    As KServe's controller would once the predictor is serving; the time of each is recorded.
    """

    def __init__(self, kube: Kube) -> None:
        """Watch `kube`'s InferenceServices once started."""
        self._kube = kube
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kserve", daemon=True)
        self.ready_at: dict[str, float] = {}

    def __enter__(self) -> Self:
        """Start reporting."""
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        """Stop reporting."""
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        # A watch, as KServe's controller has: polling a thousand InferenceServices would cost
        # the API server more than the platform does. What a (re)list finds is reported too, so
        # nothing made while the watch was down is missed.
        for isvc in watched(self._kube, ISVC, "InferenceService", self._stop, timeout_s=5):
            meta = isvc["metadata"]
            if (condition(isvc, "Ready") or {}).get("status") == "True":
                continue
            with contextlib.suppress(KubeError):  # deleted or changed meanwhile
                simulate_kserve_ready(self._kube, meta["namespace"], meta["name"])
                self.ready_at[f"{meta['namespace']}/{meta['name']}"] = time.monotonic()


def watched(
    kube: Kube, api_version: str, kind: str, stop: threading.Event, *, timeout_s: int
) -> Iterator[dict[str, Any]]:
    """Every object of a kind as listed, then as each write changes it, until `stop`.

    The API server may refuse for a moment (429 while its storage initializes), end a watch with
    an ERROR event (its resourceVersion expired, under load), or drop the connection: each time
    the kind is listed again and watched from there, as a controller's informer does, rather
    than the watching thread dying and the benchmark waiting for nothing.
    """
    while not stop.is_set():
        try:
            body = kube.request("GET", kube.path(api_version, kind, None)).body
            version = str(body["metadata"]["resourceVersion"])
            yield from body.get("items") or []
            for event in kube.watch(api_version, kind, version, timeout_s=timeout_s):
                if event.get("type") not in {"ADDED", "MODIFIED"}:
                    if event.get("type") == "ERROR":
                        break  # list again
                    continue
                yield event["object"]
                if stop.is_set():
                    return
        except (KubeError, OSError, KeyError):
            stop.wait(1)


@dataclass
class History:
    """What a watch on AIMServices saw: every write, by service, with its headline."""

    writes: dict[str, list[tuple[float, str, str]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    """`namespace/name` → (time, status.status, InferenceServiceReady's status) per write."""

    def running_since(self, key: str) -> float | None:
        """When the service was first seen Running."""
        return next((t for t, headline, _ in self.writes[key] if headline == "Running"), None)


def watch_services(kube: Kube, history: History, stop: threading.Event) -> None:
    """Record every write to every AIMService until `stop` (a thread's body).

    A write is a new resourceVersion: an object a relist shows again as it was is not one.
    """
    seen: dict[str, str] = {}
    for obj in watched(kube, AIM, "AIMService", stop, timeout_s=30):
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        if seen.get(key) == meta.get("resourceVersion"):
            continue
        seen[key] = str(meta.get("resourceVersion"))
        isvc = condition(obj, "InferenceServiceReady") or {}
        headline = str((obj.get("status") or {}).get("status", ""))
        history.writes[key].append((time.monotonic(), headline, str(isvc.get("status", ""))))


@dataclass(frozen=True)
class Usage:
    """CPU seconds and resident memory of one component's processes (workers included)."""

    cpu_s: float
    rss_mib: float


def usage(root_pid: int) -> Usage:
    """A component's usage: its process group's, as the supervisor starts each in its own."""
    cpu = rss = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == root_pid:  # pgrp
            cpu += int(fields[11]) + int(fields[12])
            rss += int(fields[21])
    return Usage(cpu / _CLOCK, rss * _PAGE / (1 << 20))


def usages(platform: Platform) -> dict[str, Usage]:
    """Every component's usage now."""
    return {c.name: usage(c.popen.pid) for c in platform.cluster.supervisor.components}


def count_lines(log: Path, pattern: re.Pattern[str], names: set[str]) -> Counter[str]:
    """Lines of a component's log that match `pattern`, by the service they name.

    The pattern captures the service as `key` (`namespace/name`), or as `ns` and `name`.
    """
    counts: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        m = pattern.search(_ANSI.sub("", line))
        if m is None:
            continue
        groups = m.groupdict()
        key = f"{groups['ns']}/{groups['name']}" if "ns" in groups else groups["key"]
        if key in names:
            counts[key] += 1
    return counts


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RECONCILING = re.compile(
    r"Reconciling\t.*composite/aimservices\..*\"request\": "
    r"\{\"name\":\"(?P<name>[^\"]+)\",\"namespace\":\"(?P<ns>[^\"]+)\"\}"
)
_COMPOSED = re.compile(r" composed .* kind=AIMService .*xr=(?P<key>\S+)")


def wait(what: str, done: Callable[[], bool], timeout_s: float) -> float:
    """Poll `done()` each second; the time it took."""
    t0 = time.monotonic()
    while not done():
        if time.monotonic() - t0 > timeout_s:
            msg = f"timed out after {timeout_s:.0f} s waiting for {what}"
            raise TimeoutError(msg)
        time.sleep(1)
    return time.monotonic() - t0


def services(kube: Kube, namespaces: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Every AIMService in the namespaces, by `namespace/name`."""
    out = {}
    for ns in namespaces:
        for obj in kube.list(AIM, "AIMService", ns):
            out[f"{ns}/{obj['metadata']['name']}"] = obj
    return out


def batch(  # noqa: PLR0913 - one batch's inputs
    platform: Platform,
    kserve: KServeStandIn,
    history: History,
    namespaces: Sequence[str],
    *,
    first: int,
    size: int,
    idle_s: float,
) -> None:
    """Apply `size` services, wait for them to converge, then watch them idle; print figures."""
    kube = platform.kube
    keys = {f"{namespaces[i % len(namespaces)]}/svc-{i}" for i in range(first, first + size)}
    before = usages(platform)
    t0 = time.monotonic()
    with ThreadPoolExecutor(APPLIERS) as pool:  # a few clients, as a GitOps tool would apply
        list(
            pool.map(
                lambda i: kube.apply(
                    aim(
                        "AIMService",
                        f"svc-{i}",
                        namespaces[i % len(namespaces)],
                        {"model": {"ref": MODEL}},
                    )
                ),
                range(first, first + size),
            )
        )
    applied = time.monotonic() - t0

    def isvcs_exist() -> bool:
        found = {
            f"{o['metadata']['namespace']}/{o['metadata']['labels'].get('aim.silogen.ai/service')}"
            for o in kube.list(ISVC, "InferenceService")
        }
        return keys <= found

    to_isvc = wait("every InferenceService", isvcs_exist, 900) + applied

    def all_running() -> bool:
        current = services(kube, sorted({k.split("/")[0] for k in keys}))
        return all(
            (current.get(k, {}).get("status") or {}).get("status") == "Running" for k in keys
        )

    wait("every service Running", all_running, 900)
    running_at = time.monotonic()
    last_ready = max(kserve.ready_at.values())
    converged = usages(platform)

    # Settle: until no service of the batch was written for QUIET_S (the flapping after Running).
    def settled() -> bool:
        last = max((w[-1][0] for k in keys if (w := history.writes[k])), default=0.0)
        return time.monotonic() - last > QUIET_S

    try:
        settle_s = wait("the batch's writes to stop", settled, SETTLE_LIMIT_S)
    except TimeoutError:
        settle_s = SETTLE_LIMIT_S  # still writing: reported as such below
    idle_from = time.monotonic()
    fn_log = platform.cluster.component("function-aim").log
    everyone = set(history.writes)
    calls_before = sum(count_lines(fn_log, _COMPOSED, everyone).values())
    idle_before = usages(platform)
    time.sleep(idle_s)
    idle_after = usages(platform)
    calls_idle = sum(count_lines(fn_log, _COMPOSED, everyone).values()) - calls_before
    idle_writes = sum(1 for k in everyone for t, _, _ in history.writes[k] if t >= idle_from)

    writes = {k: history.writes[k] for k in keys}
    after_running = {
        k: [w for w in ws if (since := history.running_since(k)) is not None and w[0] > since]
        for k, ws in writes.items()
    }
    flips = sum(
        1 for ws in after_running.values() for _, _, isvc_ready in ws if isvc_ready != "True"
    )
    reconciles = count_lines(platform.cluster.component("crossplane").log, _RECONCILING, keys)
    calls = count_lines(fn_log, _COMPOSED, keys)
    print(f"\n== {size} services (total {len(everyone)}) in {len(namespaces)} namespaces")
    print(f"applied in {applied:.1f} s; all InferenceServices after {to_isvc:.1f} s")
    print(f"last InferenceService Ready -> all Running: {running_at - last_ready:.1f} s")
    print(
        f"per service: {sum(reconciles.values()) / size:.1f} reconciles, "
        f"{sum(calls.values()) / size:.1f} function calls, "
        f"{sum(map(len, writes.values())) / size:.1f} status writes "
        f"({sum(map(len, after_running.values())) / size:.2f} after Running, "
        f"{flips} of them not InferenceServiceReady=True); "
        + (
            f"writes stopped {settle_s - QUIET_S:.0f} s after all were Running"
            if settle_s < SETTLE_LIMIT_S
            else f"still writing {SETTLE_LIMIT_S:.0f} s after all were Running"
        )
    )
    print(
        f"idle {idle_s:.0f} s: {idle_writes} status writes, "
        f"{calls_idle / idle_s:.1f} function calls/s"
    )
    print(f"{'component':<26}{'CPU s converging':>18}{'CPU % idle':>12}{'RSS MiB':>10}")
    for name, now in idle_after.items():
        busy = converged[name].cpu_s - before[name].cpu_s
        idle = (now.cpu_s - idle_before[name].cpu_s) / idle_s * 100
        print(f"{name:<26}{busy:>18.1f}{idle:>12.1f}{now.rss_mib:>10.0f}")
    sys.stdout.flush()  # a batch can take minutes: show each as it ends


@contextlib.contextmanager
def watching(kube: Kube) -> Iterator[History]:
    """A thread recording every AIMService write while the block runs."""
    history, stop = History(), threading.Event()
    thread = threading.Thread(target=watch_services, args=(kube, history, stop), daemon=True)
    thread.start()
    try:
        yield history
    finally:
        stop.set()


def main(argv: Sequence[str] | None = None) -> None:
    """Start the platform, then run each batch."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10,100,1000", help="services per batch, in order")
    parser.add_argument("--namespaces", type=int, default=10, help="team namespaces")
    parser.add_argument("--idle", type=float, default=90, help="seconds of each idle window")
    parser.add_argument("--keep", action="store_true", help="keep the components' logs")
    parser.add_argument(
        "--function-arg",
        action="append",
        default=[],
        help="a flag for function-aim (repeatable), e.g. --function-arg=--ready-recheck=60",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="one batch of 3 in 1 namespace, 2 s idle (for tests)"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.namespaces, args.idle = "3", 1, 2.0
    sizes = [int(s) for s in args.sizes.split(",")]

    tools = build_tools("all")
    with contextlib.ExitStack() as stack:
        if args.keep:
            work = Path(tempfile.mkdtemp(prefix="aim-scale-"))
            print(f"logs under {work}/cluster/logs (kept)")
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aim-scale-")))
        platform = stack.enter_context(
            start_platform(tools, tools.crds, None, work, rechecks=args.function_arg)
        )
        kube = platform.kube
        simulate_gpu_node(kube, "gpu-node-0")
        kube.apply_all(catalog_entry("AIMClusterModel", MODEL, None))
        wait_status(platform, "AIMClusterModel", MODEL, None, "Ready")
        [template] = templates_of(kube, "AIMClusterServiceTemplate", MODEL)
        wait_status(
            platform, "AIMClusterServiceTemplate", template["metadata"]["name"], None, "Available"
        )
        namespaces = [platform.team_namespace(f"team-{i}") for i in range(args.namespaces)]
        with KServeStandIn(kube) as kserve, watching(kube) as history:
            first = 0
            for size in sizes:
                batch(
                    platform, kserve, history, namespaces, first=first, size=size, idle_s=args.idle
                )
                first += size


if __name__ == "__main__":
    main()
