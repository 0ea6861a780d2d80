"""The `function-aim` command: serve the composition function over gRPC."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Final

import click
from crossplane.function import cli as sdkcli
from crossplane.function import logging
from crossplane.function.runtime import load_credentials

from function.compose import COMPOSERS
from function.registry.oras import OrasInspector
from function.registry.oras_listing import OrasLister
from function.server import flags
from function.server.call import Composers
from function.server.fn import DEFAULT_MAX_REQUEST_MIB, FunctionRunner
from function.server.serve import Listen, serve
from function.server.workers import DEFAULT_BUDGET_S, InProcess, WorkerPool
from function.settings import (
    DEFAULT_DOWNLOAD_STALL_S,
    DEFAULT_ENTRYPOINT,
    DEFAULT_EVENT_MEMORY,
    DEFAULT_EVENTS_PER_MINUTE,
    DEFAULT_READY_RECHECK_S,
    DEFAULT_SYSTEM_NAMESPACE,
    DEFAULT_WAITING_RECHECK_S,
    DEFAULT_WARNING_REPEAT_S,
    Settings,
)

_TRANSPORT_FACTOR: Final = 2


_MAX_DEFAULT_WORKERS: Final = 8
_CPU_MAX: Final = Path("/sys/fs/cgroup/cpu.max")


def _cores() -> int:
    """The cores this process may use: its CPU affinity, within its cgroup's CPU limit.

    A pod's CPU limit does not narrow the affinity (it is a quota), so on a large node the
    affinity alone would start a worker per host core.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    try:
        quota, period = _CPU_MAX.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):  # no cgroup v2 here, or an unexpected format: no limit known
        pass
    return min(cores, _MAX_DEFAULT_WORKERS)


def _listen(address: str) -> str:
    """`:PORT` (Go's and Kubernetes' way to say every interface) as gRPC Python needs it."""
    return f"0.0.0.0{address}" if address.startswith(":") else address  # noqa: S104 - asked for


@click.command()
@sdkcli.standard_options
@click.option(
    "--system-namespace",
    envvar="AIM_SYSTEM_NAMESPACE",
    default=DEFAULT_SYSTEM_NAMESPACE,
    show_default=True,
    help="Namespace of cluster-scoped work: cluster templates' discovery Jobs, cluster models' "
    "pull secrets and runtime config.",
)
@click.option(
    "--oras",
    "oras_path",
    envvar="AIM_ORAS",
    default="oras",
    show_default=True,
    help="The oras binary that reads model images' labels from their registries.",
)
@flags.registry_timeout
@flags.registry_listing_timeout
@flags.registry_listing_max_tags
@flags.insecure_registry
@flags.registry_mirror
@click.option(
    "--waiting-recheck",
    type=click.IntRange(min=1),
    default=DEFAULT_WAITING_RECHECK_S,
    show_default=True,
    help="Seconds after which an object that waits for another (a service for its model, a "
    "template for its model) is first composed again; a long wait backs off from it to six "
    "times it at the most.",
)
@click.option(
    "--ready-recheck",
    type=click.IntRange(min=1),
    default=DEFAULT_READY_RECHECK_S,
    show_default=True,
    help="Seconds after which a ready object is composed again, to notice changes in the "
    "objects it reads that Crossplane does not watch (before 2.4: its model, its template).",
)
@click.option(
    "--download-stall-timeout",
    type=click.IntRange(min=60),
    default=DEFAULT_DOWNLOAD_STALL_S,
    show_default=True,
    help="Seconds a model cache's download may write nothing before its attempt is stopped "
    "(the download Job tries again, up to its attempts).",
)
@click.option(
    "--warning-repeat",
    type=click.IntRange(min=0),
    default=DEFAULT_WARNING_REPEAT_S,
    show_default=True,
    help="Seconds before the same warning is sent to the same object again while its cause "
    "lasts (Kubernetes keeps events an hour); 0 sends it on every call.",
)
@click.option(
    "--events-per-minute",
    type=click.IntRange(min=1),
    default=DEFAULT_EVENTS_PER_MINUTE,
    show_default=True,
    help="Events one object may be sent in a minute (a burst of as many, then as many a "
    "minute); those past it are dropped and counted in function_aim_events_suppressed_total.",
)
@click.option(
    "--event-memory",
    type=click.IntRange(min=0),
    default=DEFAULT_EVENT_MEMORY,
    show_default=True,
    help="Objects whose last events the function remembers (well under a kilobyte each), so "
    "that it tells only news; past them the least recently composed is forgotten. 0 remembers "
    "none and holds nothing back: each call tells every change against the object's copy and "
    "every warning (for `crossplane render` against a long-running function).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=_cores(),
    show_default="the cores this process may use (its CPU limit), at most 8",
    help="Worker processes that compose (one call each at a time); 0 composes on the server's "
    "own thread, without a budget (for debugging).",
)
@click.option(
    "--compose-budget",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_BUDGET_S,
    show_default=True,
    help="Seconds one call may compose before its worker is stopped and replaced and the XR "
    "gets an error result naming it.",
)
@click.option(
    "--health-address",
    default="",
    metavar="HOST:PORT",
    help="Also serve the gRPC health service alone, in plaintext, here (e.g. :8081), for a "
    "Kubernetes gRPC probe: probes speak no TLS, and Crossplane's port requires it. Off by "
    "default; health is always served beside RunFunction.",
)
@click.option(
    "--metrics-address",
    default="",
    metavar="HOST:PORT",
    help="Serve Prometheus metrics at http://HOST:PORT/metrics (e.g. :8080). Off by default.",
)
@click.option(
    "--discovery-entrypoint",
    default=" ".join(DEFAULT_ENTRYPOINT),
    show_default=True,
    help="Entrypoint of AIM images whose own was never read from their registry (discovery "
    "Jobs run '<entrypoint> dry-run --format=json').",
)
def cli(  # noqa: PLR0913 - the SDK's standard options and ours, passed through one by one
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
    system_namespace: str,
    oras_path: str,
    registry_timeout: float,
    registry_listing_timeout: float,
    registry_listing_max_tags: int,
    insecure_registries: tuple[str, ...],
    registry_mirrors: dict[str, str],
    waiting_recheck: int,
    ready_recheck: int,
    download_stall_timeout: int,
    warning_repeat: int,
    events_per_minute: int,
    event_memory: int,
    workers: int,
    compose_budget: float,
    health_address: str,
    metrics_address: str,
    discovery_entrypoint: str,
) -> None:
    """Serve the AIM composition function (Crossplane's FunctionRunnerService)."""
    settings = Settings(
        system_namespace=system_namespace,
        discovery_entrypoint=tuple(discovery_entrypoint.split()),
        waiting_recheck_s=waiting_recheck,
        ready_recheck_s=ready_recheck,
        download_stall_s=download_stall_timeout,
        warning_repeat_s=warning_repeat,
        events_per_minute=events_per_minute,
        event_memory=event_memory,
    )
    composers = Composers(dict(COMPOSERS), settings)
    level = logging.Level.DEBUG if debug else logging.Level.INFO
    inspector = OrasInspector(
        oras=oras_path,
        timeout_s=registry_timeout,
        insecure=frozenset(insecure_registries),
        mirrors=registry_mirrors,
    )
    runner = FunctionRunner(
        executor=WorkerPool(composers, size=workers, budget_s=compose_budget, log_level=level)
        if workers
        else InProcess(composers),
        settings=settings,
        max_request_bytes=max_recv_message_size << 20,
        inspector=inspector,
        lister=OrasLister(
            inspector, timeout_s=registry_listing_timeout, max_tags=registry_listing_max_tags
        ),
    )
    logging.configure(level=level)
    try:
        if metrics_address:
            host, _, port = _listen(metrics_address).rpartition(":")
            runner.metrics.serve(host.strip("[]"), int(port))
        listen = Listen(
            _listen(address),
            credentials=load_credentials(tls_certs_dir) if tls_certs_dir and not insecure else None,
            insecure=insecure,
            health_address=_listen(health_address) if health_address else None,
            options=(
                # gRPC itself refuses only what is far too large; up to this, a request over the
                # limit reaches RunFunction, which says in a result and the log how to raise it.
                (
                    "grpc.max_receive_message_length",
                    _TRANSPORT_FACTOR * max_recv_message_size << 20,
                ),
                (
                    "grpc.max_send_message_length",
                    (max_send_message_size or max_recv_message_size) << 20,
                ),
            ),
        )
        serve(runner, listen)
    except (OSError, ValueError, RuntimeError) as e:
        # Missing certificates, an address already in use, neither --insecure nor certificates:
        # exit non-zero with the cause, so a supervisor (or a person) sees why it did not start.
        msg = f"cannot serve on {address}: {e}"
        raise click.ClickException(msg) from e
    finally:
        runner.close()


# The SDK's default (4 MiB) is too small for a catalog of a few hundred templates, which a
# service's call carries as required resources.
next(p for p in cli.params if p.name == "max_recv_message_size").default = DEFAULT_MAX_REQUEST_MIB


if __name__ == "__main__":
    cli()
