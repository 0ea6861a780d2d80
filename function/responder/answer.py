"""The 503 a request held past its wake timeout gets, from the head of that request.

The interceptor adds `X-KEDA-HTTP-Cold-Start-Ref-Name` and `-Namespace` (the predictor it waited
for) to the request it fails over; they are quoted only when they are Kubernetes names, since a
client can send the same headers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

REF_NAME: Final = "x-keda-http-cold-start-ref-name"
REF_NAMESPACE: Final = "x-keda-http-cold-start-ref-namespace"
_NAME: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,251}[a-z0-9])?")
_METHOD: Final = re.compile(r"[A-Z]{1,16}")
_VERSION: Final = re.compile(r"HTTP/1\.[01]")
MAX_HEADERS: Final = 128


@dataclass(frozen=True)
class Head:
    """What is read of a request: its method and its headers, names lower-cased."""

    method: str
    headers: Mapping[str, str]


def parse_head(raw: bytes) -> Head | None:
    """The request line and headers of an HTTP/1.x request (ending in a blank line), or None.

    Anything not shaped like a request (a bad request line, a header line without a colon, more
    than `MAX_HEADERS` headers) is None, and gets a 400.
    """
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _METHOD.fullmatch(parts[0]) or not _VERSION.fullmatch(parts[2]):  # noqa: PLR2004
        return None
    fields = [line for line in lines[1:] if line]
    if len(fields) > MAX_HEADERS:
        return None
    headers: dict[str, str] = {}
    for line in fields:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            return None
        headers.setdefault(name.lower(), value.strip())
    return Head(parts[0], headers)


def _predictor(headers: Mapping[str, str]) -> str:
    name, namespace = headers.get(REF_NAME, ""), headers.get(REF_NAMESPACE, "")
    if _NAME.fullmatch(name) and _NAME.fullmatch(namespace) and len(namespace) <= 63:  # noqa: PLR2004
        return f"the predictor {namespace}/{name}"
    return "the model server"


def service_unavailable(head: Head, retry_after_s: int) -> bytes:
    """The whole response: 503, `Retry-After`, and an OpenAI-style error (no body to a HEAD)."""
    message = (
        f"{_predictor(head.headers)} was woken from zero replicas and is not ready yet (it "
        f"did not turn ready within the platform's wake timeout); retry in {retry_after_s} "
        "seconds"
    )
    body = json.dumps(
        {"error": {"message": message, "type": "service_unavailable", "code": 503}}
    ).encode()
    head_only = head.method == "HEAD"
    return _response(
        503, "Service Unavailable", body, head_only=head_only, retry_after_s=retry_after_s
    )


def bad_request() -> bytes:
    """The answer to what is not an HTTP/1.x request."""
    body = json.dumps({"error": {"message": "not an HTTP/1.1 request", "code": 400}}).encode()
    return _response(400, "Bad Request", body, head_only=False, retry_after_s=None)


def _response(
    status: int, phrase: str, body: bytes, *, head_only: bool, retry_after_s: int | None
) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {phrase}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Cache-Control: no-store",
        "Connection: close",
    ]
    if retry_after_s is not None:
        lines.append(f"Retry-After: {retry_after_s}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + body
