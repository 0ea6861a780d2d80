"""The scale benchmark's threads: KServe's stand-in, and the record of every AIMService write.

Both follow their kind as a controller's informer does (list, then watch from the list's
version) and survive what a loaded API server does to its clients: a 429, an expired watch (an
ERROR event), a dropped connection, a truncated line. Each of those relists and goes on; what a
relist shows again is handled again, so nothing made while the watch was down is missed. Each
thread counts the interruptions it rode out, and one that dies of anything else keeps the
error, so a batch waiting on it fails at once saying why instead of waiting for nothing.
"""

from __future__ import annotations

import http.client
import threading
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Self

from aim_plan.standins import kserve
from devtools.cluster.converge import AIM, ISVC
from devtools.cluster.kube import Kube, KubeError
from devtools.cluster.simulate import simulate_kserve_ready

SERVICE_LABEL: Final = "aim.silogen.ai/service"
TRANSIENT: Final = (KubeError, OSError, http.client.HTTPException, ValueError, KeyError)
"""What a loaded API server does to a client: refuses (429, 5xx), ends a watch, drops or
truncates a connection (OSError, HTTPException, a JSON line cut short: ValueError), or answers
a list without the fields a healthy one has (KeyError)."""


class Follower:
    """A thread that handles every object of a kind, as listed and then as each write changes it.

    `handle` may raise one of `TRANSIENT` (its own request dropped): the kind is listed again,
    so the object comes round again.
    """

    def __init__(
        self,
        kube: Kube,
        api_version: str,
        kind: str,
        handle: Callable[[dict[str, Any]], None],
        *,
        timeout_s: int = 30,
    ) -> None:
        """Follow `kind` once started, calling `handle` on each object seen."""
        self._kube, self._api_version, self._kind = kube, api_version, kind
        self._handle, self._timeout_s = handle, timeout_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"follow-{kind}", daemon=True)
        self.interruptions: Counter[str] = Counter()
        """What made it relist, by the error's type (ERROR events as `expired`)."""
        self.died: str | None = None
        """The traceback of what killed the thread, if anything did."""

    def __enter__(self) -> Self:
        """Start following."""
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        """Stop following."""
        self._stop.set()
        self._thread.join(timeout=self._timeout_s + 5)

    def check(self) -> None:
        """Raise if the thread died: whatever waits on it would wait for nothing."""
        if self.died is not None:
            msg = f"the {self._kind} watcher died:\n{self.died}"
            raise RuntimeError(msg)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                try:
                    self._list_and_watch()
                except TRANSIENT as e:
                    self.interruptions[type(e).__name__] += 1
                    self._stop.wait(1)
        except Exception:  # noqa: BLE001 - kept for check(), which the waiting batch calls
            self.died = traceback.format_exc()

    def _list_and_watch(self) -> None:
        kube = self._kube
        body = kube.request("GET", kube.path(self._api_version, self._kind, None)).body
        version = str(body["metadata"]["resourceVersion"])
        for item in body.get("items") or []:
            self._handle(item)
        for event in kube.watch(self._api_version, self._kind, version, timeout_s=self._timeout_s):
            if self._stop.is_set():
                return
            kind = event.get("type")
            if kind == "ERROR":
                self.interruptions["expired"] += 1
                return  # list again
            if kind in {"ADDED", "MODIFIED"}:
                self._handle(event["object"])


class KServeStandIn(Follower):
    """Simulated KServe, whose controller cannot run here: every InferenceService reported Ready.

    As KServe's controller would once the predictor is serving (what it writes:
    `aim_plan/standins/kserve.py`, through `devtools.cluster.simulate`). It also tells which
    services have their InferenceService, so the batch waits on what it already watches instead
    of listing a thousand objects every second.
    """

    def __init__(self, kube: Kube) -> None:
        """Report `kube`'s InferenceServices Ready once started."""
        super().__init__(kube, ISVC, "InferenceService", self._ready, timeout_s=5)
        self.services: set[str] = set()
        """`namespace/name` of every AIMService whose InferenceService exists."""

    def _ready(self, isvc: dict[str, Any]) -> None:
        meta = isvc["metadata"]
        service = (meta.get("labels") or {}).get(SERVICE_LABEL)
        if service:
            self.services.add(f"{meta['namespace']}/{service}")
        if kserve.is_ready(isvc):
            return
        try:
            simulate_kserve_ready(self._kube, meta["namespace"], meta["name"])
        except KubeError as e:
            if e.status != 404:  # noqa: PLR2004 - deleted meanwhile: nothing to report
                raise


@dataclass
class History:
    """Every write to every AIMService, as a watch saw it."""

    writes: dict[str, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))
    """`namespace/name` → (wall time, status.status) per write (a new resourceVersion)."""
    _seen: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    """The watch thread records while the batch reads."""

    def record(self, obj: dict[str, Any]) -> None:
        """One object as listed or watched: a write if its resourceVersion is new."""
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        version = str(meta.get("resourceVersion"))
        if self._seen.get(key) == version:
            return  # a relist shows it as it was: no write
        self._seen[key] = version
        headline = str((obj.get("status") or {}).get("status", ""))
        with self._lock:
            self.writes[key].append((time.time(), headline))

    def running(self, key: str) -> bool:
        """Whether the service's last write says Running."""
        with self._lock:
            writes = self.writes.get(key) or []
            return bool(writes) and writes[-1][1] == "Running"

    def last_write(self, keys: set[str]) -> float:
        """When any of `keys` was last written (0 if never)."""
        with self._lock:
            return max((w[-1][0] for k in keys if (w := self.writes.get(k))), default=0.0)

    def writes_between(self, keys: set[str], start: float, end: float) -> int:
        """How many writes to `keys` the watch saw between two wall times."""
        with self._lock:
            return sum(start <= t < end for k in keys for t, _ in self.writes.get(k, ()))


class ServiceWatch(Follower):
    """Records every AIMService write in a `History`."""

    def __init__(self, kube: Kube) -> None:
        """Record `kube`'s AIMServices once started."""
        self.history = History()
        super().__init__(kube, AIM, "AIMService", self.history.record)
