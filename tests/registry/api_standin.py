"""A stand-in for Docker Hub's repository API and GitHub's packages API, on a loopback port.

It is not those services: it answers what a test tells it to, so listings can be tested without
the internet. Recorded answers (tests/registry/fixtures/*.json, shaped as the services document
their answers) are served by path and query; `{base}` in them becomes the stand-in's own URL, as
the services' `next` and `Link` URLs name themselves. A test may also give a function that makes
an answer for every query of a path (a flood of pages, a huge body). Every request is recorded,
with its headers, so a test can see what was sent where.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Reply:
    """One answer: a status, headers and a body (JSON, or bytes as they are)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    """A request as the stand-in saw it."""

    path: str
    query: str
    headers: dict[str, str]


Route = Reply | Callable[[Received], Reply]


@dataclass
class ApiStandIn:
    """Serves `routes` (by `path?query`, then by path alone) at `base`; records `received`."""

    base: str = ""
    routes: dict[str, Route] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)

    def serve(self, target: str, route: Route) -> None:
        """Answer `target` (`/path?query`, or `/path` for every query) with `route`."""
        self.routes[target] = route

    def serve_recorded(self, name: str) -> None:
        """Serve the recorded answers of fixture `name` (a list of request and answer)."""
        for entry in json.loads((FIXTURES / name).read_text()):
            self.serve(
                entry["request"],
                Reply(entry.get("status", 200), entry["body"], entry.get("headers", {})),
            )

    def reply(self, seen: Received) -> Reply:
        target = f"{seen.path}?{seen.query}" if seen.query else seen.path
        route = self.routes.get(target) or self.routes.get(seen.path)
        if route is None:
            return Reply(404, {"message": "Not Found"})
        return route(seen) if callable(route) else route

    def render(self, reply: Reply) -> tuple[bytes, dict[str, str]]:
        """The reply's bytes and headers, with `{base}` made the stand-in's URL."""
        body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        body = body.replace(b"{base}", self.base.encode())
        headers = {k: v.replace("{base}", self.base) for k, v in reply.headers.items()}
        return body, headers


def _handler(standin: ApiStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            seen = Received(
                parts.path, parts.query, {k.lower(): v for k, v in self.headers.items()}
            )
            standin.received.append(seen)
            reply = standin.reply(seen)
            body, headers = standin.render(reply)
            self.send_response(reply.status)
            self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            with contextlib.suppress(OSError):  # the client stopped reading: its choice
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            del args

    return Handler


@contextlib.contextmanager
def start_api_standin() -> Iterator[ApiStandIn]:
    """A stand-in at http://127.0.0.1:<port>, stopped on exit."""
    standin = ApiStandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin))
    server.daemon_threads = True
    standin.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
