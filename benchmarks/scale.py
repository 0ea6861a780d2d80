"""Many AIMServices on the local control plane: how fast they converge, and how quiet they stay.

    .venv/bin/python benchmarks/scale.py [--sizes 100,1000] [--namespaces 10] [--idle 60]
                                         [--core stock|patched|both] [--smoke]

Starts the end-to-end tier's control plane (etcd, kube-apiserver, kube-controller-manager,
Crossplane core, function-aim as a host process with its default rechecks), installs the AIM
packages from the loopback registry, makes a catalog (a cluster model and its template, on a
simulated GPU node) and then, for each size, applies that many more AIMServices spread over the
team namespaces. It reports, per batch:

- time from the first apply to all of the batch's InferenceServices existing, and to all of the
  batch's services Running;
- reconciles (core's log) and function calls (the function's log) per service, up to Running
  and after it;
- API requests that write, per service, by verb and resource, as the API server counts them
  (`apiserver_request_total`; leases, the control plane's own heartbeats, left out), up to
  Running and after it, with the CPU the components spent after Running;
- then, with nothing changing, an idle window: writes and function calls per minute, and CPU
  and resident memory per component.

Crossplane core 2.4 puts back conditions it read from its informer cache, so services are
written again for a while after Running (crossplane/crossplane#7062). `--core patched` runs a
build of the pinned core with `benchmarks/core/crossplane-7062.patch` (re-apply the live
object's conditions, not the cached copy's; a benchmark-only build, never shipped) to show what
remains of ours once core's part is gone; `--core both` (the default) runs the stock core first,
as the baseline of the same run, then the patched one, and prints them side by side.

KServe cannot run here: `KServeStandIn` reports each InferenceService Ready, as its controller
would once the predictor is up (its status writes are left out of the platform's). Everything
else is the real thing. Figures depend on the machine; the script prints them and asserts
nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
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
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Self

from benchmarks.args import at_least, size_list
from devtools.cluster.converge import AIM, ISVC, templates_of, wait_status
from devtools.cluster.kube import Kube, KubeError, condition
from devtools.cluster.simulate import simulate_gpu_node, simulate_kserve_ready
from devtools.tools import Tools, build_tools, run_script
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
                self.ready_at[f"{meta['namespace']}/{meta['name']}"] = time.time()


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
    """`namespace/name` → (wall time, status.status, InferenceServiceReady's status) per write."""

    def running_since(self, key: str) -> float | None:
        """When the service was first seen Running (wall time, as logs are stamped)."""
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
        history.writes[key].append((time.time(), headline, str(isvc.get("status", ""))))


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


def log_times(log: Path, pattern: re.Pattern[str], names: set[str]) -> dict[str, list[float]]:
    """When each line of a component's log that matches `pattern` was written, by service.

    The pattern captures the line's time as `at` (RFC 3339, UTC) and the service as `key`
    (`namespace/name`), or as `ns` and `name`.
    """
    times: dict[str, list[float]] = defaultdict(list)
    for line in log.read_text(errors="replace").splitlines():
        m = pattern.search(_ANSI.sub("", line))
        if m is None:
            continue
        groups = m.groupdict()
        key = f"{groups['ns']}/{groups['name']}" if "ns" in groups else groups["key"]
        if key in names:
            stamp = datetime.fromisoformat(groups["at"])
            times[key].append(stamp.timestamp())
    return times


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RECONCILING = re.compile(
    r"^(?P<at>\S+)\s.*Reconciling\t.*composite/aimservices\..*\"request\": "
    r"\{\"name\":\"(?P<name>[^\"]+)\",\"namespace\":\"(?P<ns>[^\"]+)\"\}"
)
_COMPOSED = re.compile(r"^(?P<at>\S+) .* composed .* kind=AIMService .*xr=(?P<key>\S+)")


def split(times: dict[str, list[float]], until: Callable[[str], float | None]) -> tuple[int, int]:
    """How many of the times came before each service's `until`, and how many after.

    Core stamps whole seconds, so a line in Running's own second counts before it.
    """
    before = after = 0
    for key, stamps in times.items():
        limit = until(key)
        for t in stamps:
            if limit is None or t <= math.ceil(limit):
                before += 1
            else:
                after += 1
    return before, after


Requests = Counter[tuple[str, str]]
"""API requests that write, by verb and `resource[/subresource]`."""

_WRITES: Final = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"})
_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')
_NOT_OURS: Final = frozenset({"leases", "inferenceservices/status"})
"""Leases are the control plane's own heartbeats, and InferenceServices' status is written by
the KServe stand-in: neither is the platform's doing."""


def write_requests(kube: Kube) -> Requests:
    """Every write the API server has made so far, by verb and resource."""
    text = str(kube.request("GET", "/metrics", accept="text/plain").body.get("message", ""))
    counts: Requests = Counter()
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m is None:
            continue
        labels = dict(_LABEL.findall(m["labels"]))
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        # A refused request (409 AlreadyExists, a conflict) changed nothing: not a write.
        done = labels.get("code", "").startswith("2")
        if done and labels.get("verb") in _WRITES and resource not in _NOT_OURS:
            counts[labels["verb"], resource] += int(float(m["value"]))
    return counts


def since(now: Requests, then: Requests) -> Requests:
    """The writes made between two readings."""
    return Counter({k: n - then.get(k, 0) for k, n in now.items() if n > then.get(k, 0)})


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


@dataclass
class Figures:
    """One batch's figures (per service where the name says so)."""

    size: int
    total: int
    to_isvc_s: float
    to_running_s: float
    reconciles: tuple[int, int]
    """Up to Running, after it."""
    calls: tuple[int, int]
    writes_to_running: Requests
    writes_after: Requests
    settle_s: float | None
    """How long services were written after all were Running; None: still at the limit."""
    cpu_after: dict[str, float]
    idle_s: float
    idle_writes: Requests
    idle_calls: int
    converging: dict[str, Usage]
    idle: dict[str, Usage]

    def per_service(self, n: float) -> str:
        """`n` per service of the batch."""
        return f"{n / self.size:.1f}"


def apply_services(kube: Kube, namespaces: Sequence[str], first: int, size: int) -> None:
    """`size` AIMServices over the namespaces, applied by a few clients as a GitOps tool would."""
    with ThreadPoolExecutor(APPLIERS) as pool:
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


def batch(  # noqa: PLR0913 - one batch's inputs
    platform: Platform,
    history: History,
    namespaces: Sequence[str],
    *,
    first: int,
    size: int,
    idle_s: float,
) -> Figures:
    """Apply `size` services, wait for them to converge, then watch them idle."""
    kube = platform.kube
    keys = {f"{namespaces[i % len(namespaces)]}/svc-{i}" for i in range(first, first + size)}
    before, requests_before = usages(platform), write_requests(kube)
    t0 = time.monotonic()
    apply_services(kube, namespaces, first, size)

    def isvcs_exist() -> bool:
        found = {
            f"{o['metadata']['namespace']}/{o['metadata']['labels'].get('aim.silogen.ai/service')}"
            for o in kube.list(ISVC, "InferenceService")
        }
        return keys <= found

    wait("every InferenceService", isvcs_exist, 900)
    to_isvc = time.monotonic() - t0

    def all_running() -> bool:
        current = services(kube, sorted({k.split("/")[0] for k in keys}))
        return all(
            (current.get(k, {}).get("status") or {}).get("status") == "Running" for k in keys
        )

    wait("every service Running", all_running, 900)
    to_running = time.monotonic() - t0
    converged, requests_running = usages(platform), write_requests(kube)

    # Settle: until no service of the batch was written for QUIET_S (the flapping after Running).
    def settled() -> bool:
        last = max((w[-1][0] for k in keys if (w := history.writes[k])), default=0.0)
        return time.time() - last > QUIET_S

    try:
        settle_s: float | None = wait("the batch's writes to stop", settled, SETTLE_LIMIT_S)
    except TimeoutError:
        settle_s = None
    settled_usage, requests_settled = usages(platform), write_requests(kube)
    fn_log = platform.cluster.component("function-aim").log
    everyone = set(history.writes)
    calls_before = sum(map(len, log_times(fn_log, _COMPOSED, everyone).values()))
    time.sleep(idle_s)
    idle, requests_idle = usages(platform), write_requests(kube)
    calls_idle = sum(map(len, log_times(fn_log, _COMPOSED, everyone).values())) - calls_before

    crossplane_log = platform.cluster.component("crossplane").log
    return Figures(
        size=size,
        total=len(everyone),
        to_isvc_s=to_isvc,
        to_running_s=to_running,
        reconciles=split(log_times(crossplane_log, _RECONCILING, keys), history.running_since),
        calls=split(log_times(fn_log, _COMPOSED, keys), history.running_since),
        writes_to_running=since(requests_running, requests_before),
        writes_after=since(requests_settled, requests_running),
        settle_s=None if settle_s is None else max(settle_s - QUIET_S, 0.0),
        cpu_after={n: settled_usage[n].cpu_s - converged[n].cpu_s for n in converged},
        idle_s=idle_s,
        idle_writes=since(requests_idle, requests_settled),
        idle_calls=calls_idle,
        converging={
            n: Usage(converged[n].cpu_s - before[n].cpu_s, converged[n].rss_mib) for n in converged
        },
        idle={
            n: Usage((idle[n].cpu_s - settled_usage[n].cpu_s) / idle_s * 100, idle[n].rss_mib)
            for n in idle
        },
    )


def show_requests(title: str, requests: Requests, size: int) -> str:
    """`title: N per service (VERB resource n, ...)`, the largest first."""
    total = sum(requests.values())
    parts = ", ".join(f"{verb} {res} {n / size:.1f}" for (verb, res), n in requests.most_common(8))
    return f"{title}: {total / size:.1f} per service" + (f" ({parts})" if parts else "")


def report(core: str, namespaces: int, f: Figures) -> None:
    """Print one batch's figures."""
    print(f"\n== {f.size} services (total {f.total}) in {namespaces} namespaces, {core} core")
    print(
        f"all InferenceServices after {f.to_isvc_s:.1f} s; all Running after {f.to_running_s:.1f} s"
    )
    print(
        f"per service: {f.per_service(f.reconciles[0])} reconciles and "
        f"{f.per_service(f.calls[0])} function calls to Running, "
        f"{f.per_service(f.reconciles[1])} and {f.per_service(f.calls[1])} after"
    )
    print(show_requests("API writes to Running", f.writes_to_running, f.size))
    after = (
        f"for {f.settle_s:.0f} s" if f.settle_s is not None else f"still at {SETTLE_LIMIT_S:.0f} s"
    )
    cpu = ", ".join(f"{n} {s:.1f}" for n, s in f.cpu_after.items() if s >= 0.05) or "none"  # noqa: PLR2004
    print(
        show_requests(f"API writes after Running ({after}; CPU s: {cpu})", f.writes_after, f.size)
    )
    per_min = 60 / f.idle_s
    idle_writes = ", ".join(f"{v} {r} {n}" for (v, r), n in f.idle_writes.most_common(4))
    print(
        f"idle {f.idle_s:.0f} s: {sum(f.idle_writes.values()) * per_min:.1f} writes/min"
        + (f" ({idle_writes})" if idle_writes else "")
        + f", {f.idle_calls * per_min:.1f} function calls/min"
    )
    print(f"{'component':<26}{'CPU s converging':>18}{'CPU % idle':>12}{'RSS MiB':>10}")
    for name, u in f.converging.items():
        print(f"{name:<26}{u.cpu_s:>18.1f}{f.idle[name].cpu_s:>12.1f}{f.idle[name].rss_mib:>10.0f}")
    calls = sum(f.calls)
    if calls:
        print(f"function CPU per call: {f.converging['function-aim'].cpu_s / calls * 1000:.1f} ms")
    sys.stdout.flush()  # a batch can take minutes: show each as it ends


def compare(namespaces: int, runs: dict[str, list[Figures]]) -> None:
    """Both cores' figures side by side, per batch."""
    rows: list[tuple[str, Callable[[Figures], str]]] = [
        ("to all InferenceServices (s)", lambda f: f"{f.to_isvc_s:.1f}"),
        ("to all Running (s)", lambda f: f"{f.to_running_s:.1f}"),
        ("reconciles / service to Running", lambda f: f.per_service(f.reconciles[0])),
        (
            "API writes / service to Running",
            lambda f: f.per_service(sum(f.writes_to_running.values())),
        ),
        (
            "API writes / service after Running",
            lambda f: f.per_service(sum(f.writes_after.values())),
        ),
        (
            "event writes / service after Running",
            lambda f: f.per_service(
                sum(n for (_, r), n in f.writes_after.items() if r == "events")
            ),
        ),
        (
            "written after Running for (s)",
            lambda f: "limit" if f.settle_s is None else f"{f.settle_s:.0f}",
        ),
        ("writes / min at rest", lambda f: f"{sum(f.idle_writes.values()) * 60 / f.idle_s:.1f}"),
        ("function RSS (MiB)", lambda f: f"{f.idle['function-aim'].rss_mib:.0f}"),
    ]
    cores = list(runs)
    for i, first in enumerate(runs[cores[0]]):
        print(f"\n== {first.size} services in {namespaces} namespaces: " + " vs ".join(cores))
        for title, cell in rows:
            cells = "".join(f"{cell(runs[c][i]):>12}" for c in cores if i < len(runs[c]))
            print(f"{title:<40}{cells}")


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


PATCH: Final = Path(__file__).parent / "core" / "crossplane-7062.patch"


def run(tools: Tools, core: str, sizes: Sequence[int], args: argparse.Namespace) -> list[Figures]:
    """Start a platform with `core`, then run each batch; its figures."""
    if core == "patched":
        tools = dataclasses.replace(
            tools, core=Path(run_script("build-tools.sh", "patched-core", str(PATCH)))
        )
    figures = []
    with contextlib.ExitStack() as stack:
        if args.keep:
            work = Path(tempfile.mkdtemp(prefix=f"aim-scale-{core}-"))
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
        teams = [platform.team_namespace(f"team-{i}") for i in range(args.namespaces)]
        with KServeStandIn(kube), watching(kube) as history:
            first = 0
            for size in sizes:
                f = batch(platform, history, teams, first=first, size=size, idle_s=args.idle)
                report(core, args.namespaces, f)
                figures.append(f)
                first += size
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    """Run each core's batches, then compare them."""
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sizes", type=size_list, default=[100, 1000], help="services per batch, in order"
    )
    parser.add_argument(
        "--namespaces", type=at_least(1, "--namespaces"), default=10, help="team namespaces"
    )
    parser.add_argument("--idle", type=float, default=60, help="seconds of each idle window")
    parser.add_argument(
        "--core",
        choices=("stock", "patched", "both"),
        default="both",
        help="Crossplane core: the pinned release, it with benchmarks/core's patch, or both",
    )
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
        args.sizes, args.namespaces, args.idle = [3], 1, 2.0
    cores = ["stock", "patched"] if args.core == "both" else [args.core]
    tools = build_tools("all")
    runs = {core: run(tools, core, args.sizes, args) for core in cores}
    if len(runs) > 1:
        compare(args.namespaces, runs)


if __name__ == "__main__":
    main()
