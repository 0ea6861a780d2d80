"""The `aim-wake-responder` command."""

from __future__ import annotations

import asyncio
import logging
import signal

import click

from function.responder.serve import Limits, serve

DEFAULT_RETRY_AFTER_S = 30


def _address(listen: str) -> tuple[str, int]:
    """`:PORT` or `HOST:PORT` (Kubernetes' way) as a host and a port."""
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or not 1 <= int(port) <= 65535:  # noqa: PLR2004
        msg = f"--listen {listen!r}: give :PORT or HOST:PORT, e.g. :8080"
        raise click.BadParameter(msg)
    return host or "0.0.0.0", int(port)  # noqa: S104 - every interface, as `:PORT` says


async def _run(host: str, port: int, limits: Limits) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await serve(host, port, limits, stop)


@click.command()
@click.option(
    "--listen",
    envvar="AIM_WAKE_RESPONDER_LISTEN",
    default=":8080",
    show_default=True,
    help="Where to answer: :PORT or HOST:PORT.",
)
@click.option(
    "--retry-after",
    "retry_after_s",
    envvar="AIM_WAKE_RESPONDER_RETRY_AFTER",
    type=click.IntRange(1, 3600),
    default=DEFAULT_RETRY_AFTER_S,
    show_default=True,
    help="Seconds a client should wait before it retries (the Retry-After header).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1, 100_000),
    default=1024,
    show_default=True,
    help="Connections answered at once; more are closed unanswered.",
)
def cli(listen: str, retry_after_s: int, max_connections: int) -> None:
    """Answer every request 503 with Retry-After: where a waking request goes past its bound."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    host, port = _address(listen)
    asyncio.run(_run(host, port, Limits(retry_after_s, max_connections)))
