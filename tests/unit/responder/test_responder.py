"""aim-wake-responder: the 503 with Retry-After a request held past its wake timeout gets.

The server is started as the command a pod runs (a child process, signalled to stop) and as an
asyncio server in this process for the bounds; requests come over real sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from devtools.tools import free_port
from function.responder.answer import Head, parse_head, service_unavailable
from function.responder.main import cli
from function.responder.serve import MAX_HEAD, Limits, Responder
from tests.cases import Case, table

FAILED_OVER = {
    "X-KEDA-HTTP-Cold-Start-Ref-Name": "qwen-chat-predictor",
    "X-KEDA-HTTP-Cold-Start-Ref-Namespace": "ml-team",
}


@pytest.fixture(scope="module")
def responder() -> Iterator[int]:
    """`aim-wake-responder --listen 127.0.0.1:PORT --retry-after 7`, as a pod runs it."""
    port = free_port()
    code = "import sys; from function.responder.main import cli; sys.exit(cli())"
    args = ["--listen", f"127.0.0.1:{port}", "--retry-after", "7"]
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert proc.poll() is None, "the responder exited at start"
        assert time.monotonic() < deadline, "the responder did not listen within 30 s"
        time.sleep(0.05)
    yield port
    proc.send_signal(signal.SIGTERM)
    _, said = proc.communicate(timeout=10)
    assert proc.returncode == 0, "SIGTERM is a clean stop, as the kubelet sends it"
    assert "503 for ml-team/qwen-chat-predictor (POST)" in said


def ask(port: int, method: str, body: bytes | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, "/v1/chat/completions", body=body, headers=FAILED_OVER)
    return conn.getresponse()


def test_a_failed_over_completion_gets_503_retry_after_and_an_openai_error(
    responder: int,
) -> None:
    """What an OpenAI client needs to retry by itself: the status, when, and an error body
    naming what it waited for."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    answer = ask(responder, "POST", body)
    assert answer.status == 503
    assert answer.getheader("Retry-After") == "7"
    assert answer.getheader("Content-Type") == "application/json"
    error = json.loads(answer.read())["error"]
    assert error["type"] == "service_unavailable"
    assert error["code"] == 503
    assert "ml-team/qwen-chat-predictor" in error["message"]
    assert "retry in 7 seconds" in error["message"]


def test_a_large_body_is_read_and_dropped_so_the_answer_is_not_reset(responder: int) -> None:
    """A client still sending a long prompt when the answer comes must get the answer, not a
    connection reset from a socket closed on unread bytes."""
    answer = ask(responder, "POST", b"x" * (4 * 1024 * 1024))
    assert answer.status == 503
    assert json.loads(answer.read())["error"]["code"] == 503


def test_a_head_request_gets_the_headers_only(responder: int) -> None:
    """HTTP says a HEAD gets no body; one sent would be read as the start of the next answer."""
    answer = ask(responder, "HEAD")
    assert (answer.status, answer.getheader("Retry-After"), answer.read()) == (503, "7", b"")


@dataclass(frozen=True)
class HeadCase(Case):
    raw: bytes
    method: str | None


HEAD_CASES = [
    HeadCase("request", "a request line and headers", b"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1",
             "GET"),
    HeadCase("http10", "an HTTP/1.0 client is answered too", b"GET / HTTP/1.0", "GET"),
    HeadCase("garbage", "not a request line", b"\x16\x03\x01 hello", None),
    HeadCase("http2", "an HTTP/2 preface is not HTTP/1.x", b"PRI * HTTP/2.0", None),
    HeadCase("no-colon", "a header line without a name and colon", b"GET / HTTP/1.1\r\nbad",
             None),
    HeadCase("folded", "an obsolete folded header (leading space) is refused, as RFC 9112 allows",
             b"GET / HTTP/1.1\r\n X-A: 1", None),
    HeadCase("too-many", "more headers than any client sends",
             b"GET / HTTP/1.1\r\n" + b"\r\n".join(b"X-%d: 1" % i for i in range(200)), None),
]  # fmt: skip


@table(HEAD_CASES)
def test_what_is_read_of_a_request(case: HeadCase) -> None:
    """Only an HTTP/1.x request line and well-formed headers are read; anything else is a 400."""
    head = parse_head(case.raw)
    assert (head.method if head else None) == case.method, case.reason


@dataclass(frozen=True)
class NameCase(Case):
    name: str
    namespace: str
    quoted: bool


NAME_CASES = [
    NameCase("names", "the interceptor's headers name the predictor", "p-predictor", "ns",
             quoted=True),
    NameCase("markup", "a client can send the same headers: nothing but a name is echoed",
             "<script>", "ns", quoted=False),
    NameCase("long-namespace", "a namespace is at most 63 characters", "p", "n" * 64,
             quoted=False),
    NameCase("newline", "no header injection into the message", "p\r\nX-Evil: 1", "ns",
             quoted=False),
]  # fmt: skip


@table(NAME_CASES)
def test_only_kubernetes_names_are_quoted(case: NameCase) -> None:
    """The message names the predictor only when the headers hold Kubernetes names."""
    headers = {
        "x-keda-http-cold-start-ref-name": case.name,
        "x-keda-http-cold-start-ref-namespace": case.namespace,
    }
    raw = service_unavailable(Head("GET", headers), 30)
    _, _, body = raw.partition(b"\r\n\r\n")
    message = json.loads(body)["error"]["message"]
    assert (f"{case.namespace}/{case.name}" in message) == case.quoted, case.reason
    assert case.quoted or "the model server" in message


async def _exchange(responder: Responder, payload: bytes) -> bytes:
    server = await asyncio.start_server(responder.handle, "127.0.0.1", 0, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(payload)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        await writer.wait_closed()
    return answer


def test_an_oversized_head_is_closed_unanswered() -> None:
    """Headers past 64 KiB are no interceptor's: closed, nothing buffered without end."""
    responder = Responder(Limits(retry_after_s=30, max_connections=8))
    payload = b"GET / HTTP/1.1\r\nX-Big: " + b"a" * (MAX_HEAD + 1) + b"\r\n\r\n"
    assert asyncio.run(_exchange(responder, payload)) == b""
    assert responder.answered == 0


def test_what_is_not_http_gets_400() -> None:
    """A stray client (a probe, a TLS hello) learns it spoke the wrong protocol, not a 503."""
    responder = Responder(Limits(retry_after_s=30, max_connections=8))
    answer = asyncio.run(_exchange(responder, b"hello there\r\n\r\n"))
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert responder.answered == 0


async def unanswered(reader: asyncio.StreamReader) -> bytes:
    """What comes back on a connection the server closes: nothing, by a FIN or a reset."""
    try:
        return await asyncio.wait_for(reader.read(), 10)
    except ConnectionResetError:
        return b""


def test_past_its_connection_limit_a_connection_is_closed_unanswered() -> None:
    """One responder for a cluster: a flood of held requests cannot grow it without bound."""
    responder = Responder(Limits(retry_after_s=30, max_connections=1))

    async def second_while_first_is_open() -> tuple[bytes, bytes]:
        server = await asyncio.start_server(responder.handle, "127.0.0.1", 0, limit=MAX_HEAD)
        port = server.sockets[0].getsockname()[1]
        async with server:
            # The first sends no head yet: it holds the one slot.
            first_reader, first = await asyncio.open_connection("127.0.0.1", port)
            await asyncio.sleep(0.2)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\n\r\n")
            second = await unanswered(reader)
            writer.close()
            first.write(b"GET / HTTP/1.1\r\n\r\n")
            answered = await asyncio.wait_for(first_reader.read(), 10)
            first.close()
            with contextlib.suppress(ConnectionError):
                await asyncio.gather(writer.wait_closed(), first.wait_closed())
        return second, answered

    second, first = asyncio.run(second_while_first_is_open())
    assert second == b"", "over the limit: closed with no answer"
    assert first.startswith(b"HTTP/1.1 503 "), "the one within the limit is answered"


@dataclass(frozen=True)
class ListenCase(Case):
    listen: str
    exit_code: int
    says: str


LISTEN_CASES = [
    ListenCase("no-port", "an address needs its port", "127.0.0.1", 2, "give :PORT or HOST:PORT"),
    ListenCase("port-range", "a port is at most 65535", ":70000", 2, "give :PORT or HOST:PORT"),
    ListenCase("retry-after", "Retry-After is between 1 s and an hour", ":8080 --retry-after 0",
               2, "--retry-after"),
]  # fmt: skip


@table(LISTEN_CASES)
def test_a_bad_flag_is_refused_naming_it(case: ListenCase) -> None:
    """A platform's typo in the manifest's args stops the pod with the flag named, at start."""
    listen, *rest = case.listen.split(" ")
    result = CliRunner().invoke(cli, ["--listen", listen, *rest])
    assert result.exit_code == case.exit_code, case.reason
    assert case.says in result.output, case.reason
