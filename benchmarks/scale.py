"""Many AIMServices on the local control plane: how fast they converge, and how quiet they stay.

    .venv/bin/python benchmarks/scale.py [--sizes 100,1000] [--namespaces 10] [--idle 60]
        [--busy SHARE] [--core stock,patched,oldest] [--function ours,unguarded,floor]
        [--keep] [--smoke]

Starts the end-to-end tier's control plane (etcd, kube-apiserver, kube-controller-manager,
Crossplane core, function-aim as a host process with its default rechecks), installs the AIM
packages from the loopback registry, makes a catalog (a cluster model and its template, on a
simulated GPU node) and then, for each size, applies that many more AIMServices spread over the
team namespaces. Per batch it reports:

- time from the first apply to all of the batch's InferenceServices existing, and to all of the
  batch's services Running;
- reconciles (core's log) and function calls (the function's log) per service, to Running;
- API requests per service by verb and resource, as the API server counts them (every request,
  and the writes that succeeded), and etcd revisions (writes that changed something), to Running;
- the same for the minute after Running (`--grace`), then a window at rest (`--idle`): writes and
  revisions per minute plane-wide, and how long after Running the batch's services were written
  at all. The target is none at rest within a minute of Running;
- CPU and resident memory per component.

At the end, when there were several batches, a growth table (time, per-service API server CPU,
etcd's size and each component's memory as the total grows), and when several runs were asked
for, their figures side by side.

Runs. `--core` picks Crossplane core builds: `stock` (the pinned release), `patched` (it with
`benchmarks/core/crossplane-7062.patch`: re-apply the live XR's conditions, not the cached copy's;
never shipped), `oldest` (the oldest core the packages claim). `--function` picks what serves
the XRs on each core: `ours` (function-aim), `unguarded` (`benchmarks/unguarded.py`: ours
without the status precondition that works around crossplane/crossplane#7062, as the function
answered before it), `floor` (`benchmarks/floor.py`: each AIMService answered from the first call
with what ours answered it at rest, recorded from our run's plane, so ours over the floor is our
cost over Crossplane's own; on the first core only). `--breaker` then opens one service's
circuit breaker and counts its writes once it closes (crossplane/crossplane#7692). `--busy
SHARE` runs `benchmarks/busy.py` beside the plane: a process burning that share of one CPU, as
another tenant of a shared machine would.

KServe cannot run here: `KServeStandIn` reports each InferenceService Ready, as its controller
would once the predictor is up (its status writes are left out of the platform's). Everything
else is the real thing. Figures depend on the machine; the script prints them and asserts
nothing. A batch that cannot finish (a wait past its bound, a watcher that died) says why,
prints what it has, and ends the run.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from benchmarks import floor
from benchmarks.args import at_least, size_list
from benchmarks.busy import Busy, busy_plane
from benchmarks.plane import (
    Etcd,
    Requests,
    Served,
    Usage,
    etcd,
    etcd_url,
    served,
    since,
    spent,
    usage,
)
from benchmarks.watchers import Follower, History, KServeStandIn, ServiceWatch
from devtools.cluster.converge import AIM, templates_of, wait_status
from devtools.cluster.kube import Kube, condition
from devtools.cluster.platform import Platform, aim, catalog_entry, start_platform
from devtools.cluster.simulate import simulate_gpu_node
from devtools.tools import Tools, build_tools, run_script

MODEL: Final = "llama-8b"
APPLIERS: Final = 8
GRACE_S: Final = 60.0
"""How long after the last service is Running the plane may still write (`--grace`): the target
is none at rest after this."""
BURST: Final = 150
"""Updates sent at one service to open its circuit breaker (core's bucket holds 100 tokens, an
update event takes 2, and it refills 1 a second)."""
BREAKER_COOLDOWN_S: Final = 30
"""Core's --circuit-breaker-cooldown for a run that opens a breaker (core's default is 5 min;
`--breaker-cooldown`)."""
IDLE_BASELINE_S: Final = 20.0
"""How long the plane is watched before the first batch, for its own rate of etcd revisions."""
PATCH: Final = Path(__file__).parent / "core" / "crossplane-7062.patch"
CORES: Final = ("stock", "patched", "oldest")
FUNCTIONS: Final = {
    "ours": "function.server.main",
    "unguarded": "benchmarks.unguarded",
    "floor": "benchmarks.floor",
}
"""What serves the XRs, by the name `--function` takes: the module run as function-aim."""


@dataclass(frozen=True)
class Reading:
    """Everything read from the plane at one moment."""

    wall: float
    served: Served
    etcd: Etcd
    usage: dict[str, Usage]


def read_plane(platform: Platform) -> Reading:
    """The plane's counters now."""
    cluster = platform.cluster
    args = cluster.component("etcd").popen.args
    return Reading(
        time.time(),
        served(platform.kube),
        etcd(etcd_url([str(a) for a in args] if isinstance(args, list) else [])),
        {c.name: usage(c.popen.pid) for c in cluster.supervisor.components},
    )


@dataclass(frozen=True)
class Window:
    """What the plane did between two readings."""

    seconds: float
    writes: Requests
    requests: Requests
    revisions: int
    cpu: dict[str, Usage]

    @classmethod
    def between(cls, a: Reading, b: Reading) -> Window:
        """The difference of two readings."""
        return cls(
            b.wall - a.wall,
            since(b.served.writes, a.served.writes),
            since(b.served.all, a.served.all),
            b.etcd.revision - a.etcd.revision,
            spent(b.usage, a.usage),
        )

    def per_minute(self, n: float) -> float:
        """`n` over this window, per minute."""
        return n * 60 / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Figures:
    """One batch's figures."""

    run: str
    size: int
    total: int
    incomplete: str | None = None
    """Why the batch could not finish; the figures hold what it measured before."""
    to_isvc_s: float | None = None
    to_running_s: float | None = None
    reconciles: int = 0
    """Of the batch's services, from the first apply until the last was Running."""
    calls: int = 0
    converging: Window | None = None
    grace: Window | None = None
    """The grace after the last service was Running."""
    rest: Window | None = None
    """The idle window after the grace."""
    rest_calls: int = 0
    rest_reconciles: int = 0
    written_for_s: float | None = None
    """How long after Running the batch's services were last written."""
    written_at_rest: int = 0
    """Writes to the batch's services the watch saw in the rest window."""
    at_end: Reading | None = None
    interruptions: dict[str, int] = field(default_factory=dict)
    idle_revisions_per_min: float = 0.0
    grace_s: float = GRACE_S
    """The plane's own revisions a minute, before any service (`Plane`)."""

    def rest_revisions_per_min(self) -> float | None:
        """The etcd revisions a minute at rest, beyond the plane's own heartbeats."""
        if self.rest is None:
            return None
        return max(self.rest.per_minute(self.rest.revisions) - self.idle_revisions_per_min, 0.0)

    def per_service(self, n: float) -> float:
        """`n` per service of the batch."""
        return n / self.size


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RECONCILING = re.compile(
    r"^(?P<at>\S+)\s.*Reconciling\t.*composite/aimservices\..*\"request\": "
    r"\{\"name\":\"(?P<name>[^\"]+)\",\"namespace\":\"(?P<ns>[^\"]+)\"\}"
)
_COMPOSED = re.compile(r"^(?P<at>\S+) .* composed .* kind=AIMService .*xr=(?P<key>\S+)")


def log_times(log: Path, pattern: re.Pattern[str], names: set[str]) -> dict[str, list[float]]:
    """When each line of a component's log that matches `pattern` was written, by service.

    The pattern captures the line's time as `at` (RFC 3339, UTC) and the service as `key`
    (`namespace/name`), or as `ns` and `name`.
    """
    times: dict[str, list[float]] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = pattern.search(_ANSI.sub("", line))
        if m is None:
            continue
        groups = m.groupdict()
        key = f"{groups['ns']}/{groups['name']}" if "ns" in groups else groups["key"]
        if key in names:
            times.setdefault(key, []).append(datetime.fromisoformat(groups["at"]).timestamp())
    return times


def within(times: dict[str, list[float]], start: float, end: float) -> int:
    """How many of the times fall in [start, end) (whole seconds, as core stamps)."""
    return sum(math.floor(start) <= t < math.ceil(end) for ts in times.values() for t in ts)


class BatchIncompleteError(RuntimeError):
    """A batch could not finish; the message says why."""


def wait(
    what: str, done: Callable[[], bool], timeout_s: float, watchers: Sequence[Follower]
) -> float:
    """Check `done()` each second until it holds; the time it took.

    Raises:
        BatchIncompleteError: past `timeout_s`, or a watcher the wait relies on died.
    """
    t0 = time.monotonic()
    while not done():
        for w in watchers:
            w.check()
        if time.monotonic() - t0 > timeout_s:
            msg = f"timed out after {timeout_s:.0f} s waiting for {what}"
            raise BatchIncompleteError(msg)
        time.sleep(1)
    return time.monotonic() - t0


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


@dataclass
class Plane:
    """A started plane with its stand-ins: what a batch runs against."""

    run: str
    platform: Platform
    kserve: KServeStandIn
    services: ServiceWatch
    namespaces: list[str]
    timeout_s: float
    idle_revisions_per_min: float
    """etcd revisions a minute with nothing of ours changing: the plane's own heartbeats
    (the API server's lease, its endpoint reconciler), measured before the first batch."""

    @property
    def history(self) -> History:
        """Every write the watch saw."""
        return self.services.history


def batch(plane: Plane, *, first: int, size: int, grace_s: float, idle_s: float) -> Figures:
    """Apply `size` services, wait for them to converge, then watch the plane at rest."""
    ns = plane.namespaces
    keys = {f"{ns[i % len(ns)]}/svc-{i}" for i in range(first, first + size)}
    f = Figures(
        plane.run,
        size,
        first + size,
        grace_s=grace_s,
        idle_revisions_per_min=plane.idle_revisions_per_min,
    )
    try:
        _converge(plane, keys, f, idle_s)
    except BatchIncompleteError as e:
        f.incomplete = str(e)
        ready = len(keys & plane.kserve.services)
        running = sum(plane.history.running(k) for k in keys)
        f.incomplete += f" ({ready} of {size} InferenceServices, {running} Running)"
    # Copies: the watch threads may add a key while this reads.
    f.interruptions = {
        **{f"kserve {k}": n for k, n in dict(plane.kserve.interruptions).items()},
        **{f"watch {k}": n for k, n in dict(plane.services.interruptions).items()},
    }
    return f


def _converge(plane: Plane, keys: set[str], f: Figures, idle_s: float) -> None:
    platform, history, watchers = plane.platform, plane.history, (plane.kserve, plane.services)
    timeout = plane.timeout_s + f.size
    start = read_plane(platform)
    t0 = time.monotonic()
    try:
        apply_services(platform.kube, plane.namespaces, f.total - f.size, f.size)
    except Exception as e:  # whatever the client met, the batch says it
        msg = f"applying the services failed: {type(e).__name__}: {e}"
        raise BatchIncompleteError(msg) from e
    wait("every InferenceService", lambda: keys <= plane.kserve.services, timeout, watchers)
    f.to_isvc_s = time.monotonic() - t0
    wait("every service Running", lambda: all(map(history.running, keys)), timeout, watchers)
    f.to_running_s = time.monotonic() - t0
    running = read_plane(platform)
    f.converging = Window.between(start, running)
    core_log = platform.cluster.component("crossplane").log
    fn_log = platform.cluster.component("function-aim").log
    # The same window as the requests: from the first apply until the last service was Running
    # (a service Running early is still reconciled while the others converge).
    f.reconciles = within(log_times(core_log, _RECONCILING, keys), start.wall, running.wall)
    f.calls = within(log_times(fn_log, _COMPOSED, keys), start.wall, running.wall)

    time.sleep(max(running.wall + f.grace_s - time.time(), 0))
    graced = read_plane(platform)
    f.grace = Window.between(running, graced)
    time.sleep(idle_s)
    f.at_end = read_plane(platform)
    f.rest = Window.between(graced, f.at_end)
    everyone = set(history.writes)
    f.rest_calls = within(log_times(fn_log, _COMPOSED, everyone), graced.wall, f.at_end.wall)
    f.rest_reconciles = within(
        log_times(core_log, _RECONCILING, everyone), graced.wall, f.at_end.wall
    )
    f.written_at_rest = history.writes_between(keys, graced.wall, f.at_end.wall)
    f.written_for_s = max(history.last_write(keys) - running.wall, 0.0)


def responsive(kube: Kube, key: str) -> dict[str, Any]:
    """Core's Responsive condition of the service `key` (empty before core sets it)."""
    ns, name = key.split("/")
    return condition(kube.get(AIM, "AIMService", name, ns), "Responsive") or {}


def open_breaker(plane: Plane, key: str, args: argparse.Namespace) -> str:
    """Open one service's circuit breaker with a burst of updates, let it close, count its writes.

    What crossplane/crossplane#7692 describes: once the breaker closes, core's Responsive
    condition keeps the message the open breaker wrote, every reconcile stamps a new transition
    time on it, and each such write wakes the next reconcile.
    """
    kube, history = plane.platform.kube, plane.history
    grace_s, idle_s, cooldown_s = args.grace, args.idle, args.breaker_cooldown
    ns, name = key.split("/")
    path = kube.path(AIM, "AIMService", ns, name)

    def poke(i: int) -> None:  # a tenant's script updating its object in a loop
        patch = {"metadata": {"annotations": {"bench.aim.silogen.ai/burst": str(i)}}}
        kube.request("PATCH", path, patch, content_type="application/merge-patch+json")

    with ThreadPoolExecutor(APPLIERS) as pool:
        list(pool.map(poke, range(BURST)))
    # An open breaker drops events, so core writes Responsive only when one it lets through (one
    # now and then) starts a reconcile, and once the cooldown has passed only the next event
    # does: the tenant keeps poking, once a second, until each is seen.
    pokes = iter(range(BURST, BURST + 10_000))
    watchers = (plane.kserve, plane.services)

    said: dict[str, str] = {}

    def seen(status: str) -> bool:
        now = responsive(kube, key)
        if now.get("status") == status:
            said[status] = str(now.get("message", ""))
            return True
        poke(next(pokes))
        return False

    wait("its breaker to open", lambda: seen("False"), 120, watchers)
    time.sleep(cooldown_s + 1)
    wait("its breaker to close", lambda: seen("True"), 120, watchers)
    time.sleep(grace_s)
    start = time.time()
    time.sleep(idle_s)
    writes = history.writes_between({key}, start, time.time())
    left = responsive(kube, key).get("message", "")
    return (
        f"{key} after its breaker opened ({BURST} updates; Responsive said {said['False']!r}) "
        f"and closed: written {writes} times in {idle_s:.0f} s at rest from {grace_s:.0f} s "
        f"after it closed; Responsive message left: {left!r}"
    )


def show(requests: Requests, size: int, top: int = 8) -> str:
    """`N per service (VERB resource n, ...)`, the largest first."""
    total = sum(requests.values())
    parts = ", ".join(f"{v} {r} {n / size:.1f}" for (v, r), n in requests.most_common(top))
    return f"{total / size:.1f} per service" + (f" ({parts})" if parts else "")


def report(f: Figures, namespaces: int) -> None:
    """Print one batch's figures."""
    print(f"\n== {f.size} services (total {f.total}) in {namespaces} namespaces, {f.run}")
    if f.incomplete:
        print(f"INCOMPLETE: {f.incomplete}")
    if f.to_isvc_s is not None:
        running = f"{f.to_running_s:.1f} s" if f.to_running_s is not None else "never"
        print(f"all InferenceServices after {f.to_isvc_s:.1f} s; all Running after {running}")
    if f.converging is not None:
        c = f.converging
        print(
            f"to Running, per service: {f.per_service(f.reconciles):.1f} reconciles, "
            f"{f.per_service(f.calls):.1f} function calls, "
            f"{f.per_service(c.revisions):.1f} etcd revisions"
        )
        print(f"API writes to Running: {show(c.writes, f.size)}")
        print(f"API requests to Running: {show(c.requests, f.size, 6)}")
    if f.grace is not None:
        g = f.grace
        print(
            f"in the {f.grace_s:.0f} s after Running: {show(g.writes, f.size, 4)}; "
            f"{g.revisions} etcd revisions"
        )
    if f.rest is not None:
        r = f.rest
        top = ", ".join(f"{v} {res} {n}" for (v, res), n in r.writes.most_common(4))
        print(
            f"at rest ({r.seconds:.0f} s from {f.grace_s:.0f} s after Running): "
            f"{r.per_minute(sum(r.writes.values())):.1f} writes/min"
            + (f" ({top})" if top else "")
            + f", {f.rest_revisions_per_min():.1f} etcd revisions/min beyond the plane's own "
            f"{f.idle_revisions_per_min:.1f}, "
            f"{r.per_minute(f.rest_reconciles):.1f} reconciles/min, "
            f"{r.per_minute(f.rest_calls):.1f} function calls/min"
        )
        quiet = (
            f"still written at rest ({f.written_at_rest} writes in the window)"
            if f.written_at_rest
            else f"last written {f.written_for_s:.0f} s after Running"
        )
        print(f"the batch's services: {quiet}")
        print(f"{'component':<26}{'CPU s converging':>18}{'CPU % at rest':>15}{'RSS MiB':>10}")
        for name, u in r.cpu.items():
            conv = f.converging.cpu[name].cpu_s if f.converging else 0.0
            print(f"{name:<26}{conv:>18.1f}{u.cpu_s / r.seconds * 100:>15.1f}{u.rss_mib:>10.0f}")
    if f.interruptions:
        print("watchers rode out: " + ", ".join(f"{k} {n}" for k, n in f.interruptions.items()))
    sys.stdout.flush()  # a batch can take minutes: show each as it ends


def _cell(f: Figures, pick: Callable[[Figures], float | None], fmt: str = "{:.1f}") -> str:
    value = pick(f)
    return "-" if value is None else fmt.format(value)


ROWS: Final[list[tuple[str, Callable[[Figures], float | None]]]] = [
    ("to all InferenceServices (s)", lambda f: f.to_isvc_s),
    ("to all Running (s)", lambda f: f.to_running_s),
    ("reconciles / service to Running", lambda f: f.per_service(f.reconciles)),
    ("function calls / service to Running", lambda f: f.per_service(f.calls)),
    (
        "API requests / service to Running",
        lambda f: f.per_service(sum(f.converging.requests.values())) if f.converging else None,
    ),
    (
        "API writes / service to Running",
        lambda f: f.per_service(sum(f.converging.writes.values())) if f.converging else None,
    ),
    (
        "etcd revisions / service to Running",
        lambda f: f.per_service(f.converging.revisions) if f.converging else None,
    ),
    (
        "API server CPU ms / service to Running",
        lambda f: (
            f.per_service(f.converging.cpu["kube-apiserver"].cpu_s * 1000) if f.converging else None
        ),
    ),
    (
        "API writes / service, minute after Running",
        lambda f: f.per_service(sum(f.grace.writes.values())) if f.grace else None,
    ),
    (
        "writes / min at rest (plane)",
        lambda f: f.rest.per_minute(sum(f.rest.writes.values())) if f.rest else None,
    ),
    ("etcd revisions / min at rest, beyond idle", Figures.rest_revisions_per_min),
    ("services last written after (s)", lambda f: f.written_for_s),
    (
        "function RSS (MiB)",
        lambda f: f.at_end.usage["function-aim"].rss_mib if f.at_end else None,
    ),
]


def compare(namespaces: int, runs: dict[str, list[Figures]]) -> None:
    """Every run's figures side by side, per batch, with ours over the floor where both ran."""
    names = list(runs)
    ratio = [(n, n.replace("ours", "floor")) for n in names if "ours" in n]
    ratio = [(a, b) for a, b in ratio if b in runs]
    for i, first in enumerate(runs[names[0]]):
        heads = "".join(f"{n:>19}" for n in names)
        heads += "".join(f"{a.split('/')[0] + ' ours/floor':>22}" for a, _ in ratio)
        print(f"\n== {first.size} services in {namespaces} namespaces: {' vs '.join(names)}")
        print(f"{'':<44}{heads}")
        for title, pick in ROWS:
            cells = "".join(
                f"{_cell(runs[n][i], pick) if i < len(runs[n]) else '-':>19}" for n in names
            )
            for a, b in ratio:
                if i < len(runs[a]) and i < len(runs[b]):
                    x, y = pick(runs[a][i]), pick(runs[b][i])
                    cells += f"{(x / y if x is not None and y else math.nan):>22.2f}"
            print(f"{title:<44}{cells}")


def growth(run: str, figures: Sequence[Figures]) -> None:
    """How time, API server CPU, etcd and memory grow with the total, one row per batch."""
    print(f"\n== growth, {run}")
    print(
        f"{'total':>7}{'to ISVCs s':>12}{'to Running s':>14}{'apiserver CPU ms/svc':>22}"
        f"{'etcd MiB':>10}{'core MiB':>10}{'function MiB':>14}{'apiserver MiB':>15}"
    )
    for f in figures:
        end = f.at_end
        mem = end.usage if end else {}
        cpu = f.converging.cpu["kube-apiserver"].cpu_s * 1000 / f.size if f.converging else None
        print(
            f"{f.total:>7}{_cell(f, lambda g: g.to_isvc_s):>12}"
            f"{_cell(f, lambda g: g.to_running_s):>14}"
            f"{'-' if cpu is None else f'{cpu:.1f}':>22}"
            f"{(end.etcd.db_bytes / (1 << 20)) if end else 0:>10.0f}"
            f"{mem.get('crossplane', Usage(0, 0)).rss_mib:>10.0f}"
            f"{mem.get('function-aim', Usage(0, 0)).rss_mib:>14.0f}"
            f"{mem.get('kube-apiserver', Usage(0, 0)).rss_mib:>15.0f}"
        )


def core_tools(tools: Tools, core: str) -> Tools:
    """The tools with the core build `core` names."""
    if core == "patched":
        return dataclasses.replace(
            tools, core=Path(run_script("build-tools.sh", "patched-core", str(PATCH)))
        )
    if core == "oldest":
        return tools.with_oldest_core()
    return tools


@contextlib.contextmanager
def started(
    tools: Tools, run: str, work: Path, args: argparse.Namespace, recording: Path | None
) -> Iterator[Plane]:
    """A plane for `run` with its catalog, team namespaces and stand-ins."""
    module = FUNCTIONS[run.split("/")[1]]
    extra = [f"--recorded={recording}"] if recording else []
    with start_platform(
        tools,
        tools.crds,
        None,
        work,
        rechecks=[*args.function_arg, *extra],
        function_module=module,
        core_args=[
            *args.core_arg,
            *([f"--circuit-breaker-cooldown={args.breaker_cooldown:g}s"] if args.breaker else []),
        ],
    ) as platform:
        kube = platform.kube
        simulate_gpu_node(kube, "gpu-node-0")
        kube.apply_all(catalog_entry("AIMClusterModel", MODEL, None))
        wait_status(platform, "AIMClusterModel", MODEL, None, "Ready")
        [template] = templates_of(kube, "AIMClusterServiceTemplate", MODEL)
        name = template["metadata"]["name"]
        wait_status(platform, "AIMClusterServiceTemplate", name, None, "Available")
        teams = [platform.team_namespace(f"team-{i}") for i in range(args.namespaces)]
        with KServeStandIn(kube) as kserve, ServiceWatch(kube) as services:
            before = read_plane(platform)
            time.sleep(min(IDLE_BASELINE_S, args.idle * 5))
            idle = Window.between(before, read_plane(platform))
            yield Plane(
                run,
                platform,
                kserve,
                services,
                teams,
                args.timeout,
                idle.per_minute(idle.revisions),
            )


def run(  # noqa: PLR0913 - one run's inputs
    tools: Tools,
    core: str,
    function: str,
    args: argparse.Namespace,
    recording: Path | None,
    *,
    record: bool,
) -> tuple[list[Figures], Path | None]:
    """One run's batches, and with `record` the recording of its plane at rest, for a floor.

    A floor run replays `recording`.
    """
    label = f"{core}/{function}"
    figures = []
    recorded = None
    with contextlib.ExitStack() as stack:
        if args.keep:
            work = Path(tempfile.mkdtemp(prefix=f"aim-scale-{core}-{function}-"))
            print(f"logs under {work}/cluster/logs (kept)")
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aim-scale-")))
        plane = stack.enter_context(started(core_tools(tools, core), label, work, args, recording))
        first = 0
        for size in args.sizes:
            f = batch(plane, first=first, size=size, grace_s=args.grace, idle_s=args.idle)
            report(f, args.namespaces)
            figures.append(f)
            first += size
            if f.incomplete:
                break
        if (
            args.breaker
            and not figures[-1].incomplete
            and (function, core) == ("ours", args.first_core)
        ):
            print("\n== #7692: " + open_breaker(plane, f"{plane.namespaces[0]}/svc-0", args))
        if record and not figures[-1].incomplete:
            recorded = work.parent / f"aim-scale-floor-{core}-{time.time_ns()}.json"
            floor.save(floor.record(plane.platform.cluster.kubeconfig, work / "record"), recorded)
    return figures, recorded


def main(argv: Sequence[str] | None = None) -> None:
    """Run each core's batches, then compare them."""
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sizes", type=size_list, default=[100, 1000], help="services per batch, in order"
    )
    parser.add_argument(
        "--namespaces", type=at_least(1, "--namespaces"), default=10, help="team namespaces"
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=GRACE_S,
        help="seconds after the last service is Running before the rest window starts",
    )
    parser.add_argument("--idle", type=float, default=60, help="seconds of each rest window")
    parser.add_argument(
        "--core",
        default="stock,patched",
        help="Crossplane core builds, comma-separated: stock (the pinned release), patched (it "
        "with benchmarks/core's patch), oldest (the oldest the packages claim); both = "
        "stock,patched",
    )
    parser.add_argument(
        "--function",
        default="ours",
        help="what serves the XRs, comma-separated: ours (function-aim), unguarded (ours "
        "without its status precondition), floor (ours recorded and replayed: runs ours "
        "first)",
    )
    parser.add_argument(
        "--busy",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="burn this share (0-1) of CPU 0 beside the plane (benchmarks/busy.py)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600,
        help="seconds a batch may wait for InferenceServices or Running, plus one per service",
    )
    parser.add_argument(
        "--breaker",
        action="store_true",
        help=f"after ours' batches on the first core, open one service's circuit breaker with "
        f"{BURST} updates and "
        f"count its writes once it closes (crossplane#7692; core's cooldown set to "
        "--breaker-cooldown)",
    )
    parser.add_argument(
        "--breaker-cooldown",
        type=float,
        default=BREAKER_COOLDOWN_S,
        help="core's --circuit-breaker-cooldown (s) in a run with --breaker",
    )
    parser.add_argument(
        "--core-arg",
        action="append",
        default=[],
        help="a flag for Crossplane core (repeatable), e.g. "
        "--core-arg=--enable-function-response-cache",
    )
    parser.add_argument("--keep", action="store_true", help="keep the components' logs")
    parser.add_argument(
        "--function-arg",
        action="append",
        default=[],
        help="a flag for function-aim (repeatable), e.g. --function-arg=--ready-recheck=60",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one batch of 3 in 1 namespace, 5 s of grace and 2 s at rest, ours and the floor on "
        "the stock core, ours on the patched one, and a breaker opened (for tests)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.namespaces, args.grace, args.idle = [3], 1, 5.0, 2.0
        args.function, args.breaker, args.breaker_cooldown = "ours,floor", True, 5.0
    cores, functions = runs_asked(parser, args)
    args.first_core = cores[0]
    tools = build_tools("all")
    runs: dict[str, list[Figures]] = {}
    with busy_plane(args.busy) as busy:
        say_busy(busy)
        for i, core in enumerate(cores):
            recording = None
            for function in functions if i == 0 else [f for f in functions if f != "floor"]:
                if function == "floor" and recording is None:
                    print("\nno floor run: our run did not finish, so nothing was recorded")
                    continue
                record = i == 0 and function == "ours" and "floor" in functions
                floor_from: Path | None = recording if function == "floor" else None
                figures, made = run(tools, core, function, args, floor_from, record=record)
                runs[f"{core}/{function}"] = figures
                recording = made or recording
                say_busy(busy)
            if recording is not None:
                recording.unlink(missing_ok=True)
    for name, figures in runs.items():
        if len(figures) > 1:
            growth(name, figures)
    if len(runs) > 1:
        compare(args.namespaces, runs)


def runs_asked(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[list[str], list[str]]:
    """The cores and functions to run, in order (ours before the floor recorded from it)."""
    cores = names(args.core.replace("both", "stock,patched"))
    functions = names(args.function)
    if "floor" in functions:
        functions = ["ours", *(f for f in functions if f not in {"ours", "floor"}), "floor"]
    unknown = sorted((set(cores) - set(CORES)) | (set(functions) - set(FUNCTIONS)))
    if unknown:
        parser.error(f"unknown core or function {unknown}: cores {CORES}, functions {FUNCTIONS}")
    if not 0 <= args.busy < 1:
        parser.error("--busy is a share of one CPU, from 0 to 1")
    return cores, functions


def names(csv: str) -> list[str]:
    """The names of a comma-separated list, in order, each once."""
    return list(dict.fromkeys(n.strip() for n in csv.split(",") if n.strip()))


def say_busy(busy: Busy | None) -> None:
    """State the load beside the plane, if any."""
    print(busy.describe() if busy else "quiet plane: nothing else was asked to run beside it")


if __name__ == "__main__":
    main()
