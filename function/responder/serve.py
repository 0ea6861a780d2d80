"""The responder's server: one answer per connection, every wait and size bounded.

A request's head is read up to `MAX_HEAD` bytes within `HEAD_TIMEOUT_S`; the answer is written
and the sending side closed; then whatever body the client still sends is read and dropped (up
to `MAX_DRAIN` bytes within `DRAIN_TIMEOUT_S`), so that closing the socket on unread bytes does
not reset the connection before the client has read the answer. Past `max_connections` open at
once, a new connection is closed unanswered: the interceptor turns that into its own 502.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Final

from function.responder.answer import bad_request, parse_head, service_unavailable

MAX_HEAD: Final = 64 * 1024
HEAD_TIMEOUT_S: Final = 10.0
MAX_DRAIN: Final = 16 * 1024 * 1024
DRAIN_TIMEOUT_S: Final = 10.0
_CHUNK: Final = 64 * 1024

log = logging.getLogger("aim-wake-responder")


@dataclass(frozen=True)
class Limits:
    """What one responder answers with, and how much it takes on at once."""

    retry_after_s: int
    max_connections: int


class Responder:
    """Answers every connection's request with a 503, within `Limits`."""

    def __init__(self, limits: Limits) -> None:
        """Answer within `limits`."""
        self._limits = limits
        self._open = 0
        self.answered = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read one request's head, answer it, drop the body, close."""
        if self._open >= self._limits.max_connections:
            writer.close()
            return
        self._open += 1
        try:
            await self._answer(reader, writer)
        except (ConnectionError, OSError):  # the client went away: nothing to answer
            pass
        finally:
            self._open -= 1
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            return
        head = parse_head(raw[:-4])
        if head is None:
            writer.write(bad_request())
        else:
            writer.write(service_unavailable(head, self._limits.retry_after_s))
            self.answered += 1
            log.info(
                "503 for %s/%s (%s)",
                head.headers.get("x-keda-http-cold-start-ref-namespace", "-")[:63],
                head.headers.get("x-keda-http-cold-start-ref-name", "-")[:253],
                head.method,
            )
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_drop(reader), DRAIN_TIMEOUT_S)


async def _drop(reader: asyncio.StreamReader) -> None:
    """Read and forget what the client still sends, up to `MAX_DRAIN` bytes or its end."""
    left = MAX_DRAIN
    while left > 0:
        chunk = await reader.read(min(_CHUNK, left))
        if not chunk:
            return
        left -= len(chunk)


async def serve(host: str, port: int, limits: Limits, stop: asyncio.Event) -> None:
    """Serve on `host:port` until `stop` is set."""
    responder = Responder(limits)
    server = await asyncio.start_server(responder.handle, host, port, limit=MAX_HEAD)
    log.info("answering on %s:%d with 503, Retry-After %d s", host, port, limits.retry_after_s)
    async with server:
        await stop.wait()
