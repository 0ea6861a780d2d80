"""The scale benchmark's watchers survive what a loaded API server does to its clients.

The 1,000-service batch once never finished: the API server dropped the KServe stand-in's
connection, its thread died, and the benchmark waited for InferenceServices nobody reported
Ready. These drive the watchers with a stand-in API client that fails the way a loaded server
does, and check that nothing is missed and that a watcher that dies says so.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from benchmarks.watchers import Follower, History, KServeStandIn
from devtools.cluster.kube import KubeError, Response


def isvc(name: str, *, ready: bool = False) -> dict[str, Any]:
    status = {"conditions": [{"type": "Ready", "status": "True"}]} if ready else {}
    return {
        "metadata": {
            "name": name,
            "namespace": "team-0",
            "resourceVersion": "1",
            "labels": {"aim.silogen.ai/service": name.removesuffix("-isvc")},
        },
        "status": status,
    }


@dataclass
class FlakyServer:
    """Lists `items`; its first status patch is dropped, its first watch cut mid-line."""

    items: list[dict[str, Any]]
    lists: int = 0
    watches: int = 0
    patched: list[str] = field(default_factory=list)
    refuse_patch: bool = True
    busy_patches: int = 0
    """Patches answered 503 (past the client's own retries) before any is served."""

    def path(self, *_: Any) -> str:
        return "/apis/serving.kserve.io/v1beta1/inferenceservices"

    def request(self, method: str, path: str, _body: Any = None, **_: Any) -> Response:
        if method == "GET":
            self.lists += 1
            return Response({"metadata": {"resourceVersion": "5"}, "items": self.items})
        assert method == "PATCH", method
        if self.busy_patches:
            self.busy_patches -= 1
            raise KubeError(503, "ServiceUnavailable", "etcdserver: request timed out")
        if self.refuse_patch:
            self.refuse_patch = False
            msg = "Remote end closed connection without response"
            raise http.client.RemoteDisconnected(msg)
        self.patched.append(path.split("/")[-2])
        return Response({})

    def patch_status(self, _v: str, _k: str, name: str, _ns: str, _p: Any) -> dict[str, Any]:
        self.request("PATCH", f"/x/{name}/status")
        return {}

    def watch(self, *_: Any, **__: Any) -> Iterator[dict[str, Any]]:
        self.watches += 1
        if self.watches == 1:
            yield {"type": "ADDED", "object": isvc("late-isvc")}
            msg = "Unterminated string starting at: line 1 column 30"  # a line cut short
            raise ValueError(msg)
        yield {"type": "ERROR", "object": {"code": 410}}


def wait_until(check: Any, timeout_s: float = 10) -> None:
    t0 = time.monotonic()
    while not check():
        assert time.monotonic() - t0 < timeout_s, "timed out"
        time.sleep(0.05)


def test_kserve_stand_in_rides_out_drops_and_reports_every_inference_service() -> None:
    """A refused patch and a watch cut mid-line each relist; every InferenceService, including
    the one whose first report was dropped and the one only the watch saw, is reported Ready."""
    server = FlakyServer([isvc("a-isvc"), isvc("b-isvc"), isvc("done-isvc", ready=True)])
    server.items.append(isvc("late-isvc"))  # as the relist after the cut shows it
    kube: Any = server
    with KServeStandIn(kube) as stand_in:
        wait_until(lambda: {"a-isvc", "b-isvc", "late-isvc"} <= set(server.patched))
        stand_in.check()
    assert "done-isvc" not in server.patched  # already Ready: KServe writes nothing
    assert stand_in.services >= {"team-0/a", "team-0/b", "team-0/done", "team-0/late"}
    assert stand_in.interruptions["RemoteDisconnected"] >= 1
    assert stand_in.interruptions["ValueError"] >= 1


def test_a_watcher_that_dies_says_why_to_whoever_waits_on_it() -> None:
    """An error that is no API server's doing kills the thread: `check` raises it, so the batch
    fails at once naming it instead of waiting for its bound."""
    server = FlakyServer([isvc("a-isvc")])
    kube: Any = server

    def broken(_: dict[str, Any]) -> None:
        msg = "a bug in the handler"
        raise ZeroDivisionError(msg)

    with Follower(kube, "v1", "Thing", broken) as follower:
        wait_until(lambda: follower.died is not None)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            follower.check()


def test_a_relist_showing_an_object_as_it_was_is_no_write() -> None:
    """Writes are new resourceVersions: the relists after every interruption must not count the
    services again, or a flaky plane would look like one that never settles."""
    history = History()
    obj = {"metadata": {"name": "svc-0", "namespace": "team-0", "resourceVersion": "7"}}
    history.record(obj)
    history.record(obj)
    history.record({**obj, "metadata": {**obj["metadata"], "resourceVersion": "8"}})
    assert len(history.writes["team-0/svc-0"]) == 2  # versions 7 and 8


def test_a_refusal_that_is_no_404_is_ridden_out_too() -> None:
    """A 429 or a 5xx that survives the client's own retries relists rather than killing KServe's
    stand-in (a deleted InferenceService, 404, is simply skipped)."""
    server = FlakyServer([isvc("a-isvc")], refuse_patch=False, busy_patches=1)
    kube: Any = server
    with KServeStandIn(kube) as stand_in:
        wait_until(lambda: "a-isvc" in server.patched)
    assert stand_in.interruptions["KubeError"] == 1
