"""What the control plane itself says it did: API requests, etcd revisions, CPU and memory.

Each reading is a snapshot; a batch's figure is the difference of two (`since`). Requests come
from the API server's own counter (`apiserver_request_total`), so they include every client: core,
the function's registry reads excluded (no API), the controller manager, and the benchmark's
watchers (a list and a watch per kind, a few requests in all).
"""

from __future__ import annotations

import http.client
import os
import re
import urllib.parse
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from devtools.cluster.kube import Response

Requests = Counter[tuple[str, str]]
"""API requests, by verb and `resource[/subresource]`."""

WRITES: Final = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"})
_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')
NOT_OURS: Final = frozenset({"leases", "inferenceservices/status"})
"""Leases are the control plane's own heartbeats, and InferenceServices' status is written by
the KServe stand-in: neither is the platform's doing."""
_CLOCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Metrics(Protocol):
    """What a reading needs of the API client: one GET."""

    def request(self, method: str, path: str, *, accept: str = ...) -> Response:
        """Send one request."""
        ...


@dataclass(frozen=True)
class Served:
    """The API server's requests so far: writes that changed something, and every request."""

    writes: Requests
    """Successful requests of a writing verb (a 409 or a refused apply changed nothing)."""
    all: Requests
    """Every request, any verb, any outcome: what the API server had to serve."""


def served(kube: Metrics) -> Served:
    """The API server's counters now, the stand-ins' and heartbeats' left out."""
    text = str(kube.request("GET", "/metrics", accept="text/plain").body.get("message", ""))
    writes: Requests = Counter()
    every: Requests = Counter()
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m is None:
            continue
        labels = dict(_LABEL.findall(m["labels"]))
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        if resource in NOT_OURS or not resource:
            continue
        verb, n = labels.get("verb", ""), int(float(m["value"]))
        every[verb, resource] += n
        if labels.get("code", "").startswith("2") and verb in WRITES:
            writes[verb, resource] += n
    return Served(writes, every)


def write_requests(kube: Metrics) -> Requests:
    """Every write the API server has made so far, by verb and resource."""
    return served(kube).writes


def since(now: Requests, then: Requests) -> Requests:
    """The requests made between two readings."""
    return Counter({k: n - then.get(k, 0) for k, n in now.items() if n > then.get(k, 0)})


@dataclass(frozen=True)
class Etcd:
    """etcd's store: its revision (one per write that changed something) and its size."""

    revision: int
    db_bytes: int


_ETCD_REVISION = re.compile(r"^etcd_debugging_mvcc_current_revision (\S+)$", re.MULTILINE)
_ETCD_SIZE = re.compile(r"^etcd_mvcc_db_total_size_in_bytes (\S+)$", re.MULTILINE)


def etcd(client_url: str) -> Etcd:
    """The revision and database size of etcd, from its own metrics (plain HTTP on loopback)."""
    parsed = urllib.parse.urlsplit(client_url)
    conn = http.client.HTTPConnection(parsed.hostname or "127.0.0.1", parsed.port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode(errors="replace")
    finally:
        conn.close()
    return parse_etcd(text)


def parse_etcd(text: str) -> Etcd:
    """The revision and database size in etcd's metrics text (0 for what it lacks)."""
    revision, size = _ETCD_REVISION.search(text), _ETCD_SIZE.search(text)
    return Etcd(int(float(revision[1])) if revision else 0, int(float(size[1])) if size else 0)


def etcd_url(args: list[str]) -> str:
    """The client URL of etcd, read from its command line."""
    for arg in args:
        if arg.startswith("--listen-client-urls="):
            return arg.split("=", 1)[1].split(",")[0]
    msg = "etcd was started without --listen-client-urls"
    raise ValueError(msg)


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


def spent(now: Mapping[str, Usage], then: Mapping[str, Usage]) -> dict[str, Usage]:
    """CPU each component spent between two readings, with its memory at the second."""
    return {n: Usage(u.cpu_s - then[n].cpu_s, u.rss_mib) for n, u in now.items() if n in then}
