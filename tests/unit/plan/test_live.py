"""`aim plan --against` reads the live cluster with GET and LIST only, within bounds, skipping
kinds that are not installed; the manifests are then laid over what it read."""

from __future__ import annotations

import json
import shutil
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aim_plan import live
from aim_plan.cli import cli
from aim_plan.kubeconfig import Credentials
from aim_plan.load import load
from aim_plan.registry import Answers, OfflineRegistry
from tests.cases import Case, table
from tests.e2e.images import LLAMA_31_8B
from tests.unit.plan.test_registry import CountingInspector

AIM = "aim.silogen.ai/v1alpha1"


class FakeResponse:
    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.reason, self._body = status, "x", body

    def read(self, n: int) -> bytes:
        return self._body[:n]


class FakeApiServer:
    """Answers by path (without the query); 404 for any path it does not hold."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.statuses: dict[str, int] = {}
        self.sent: list[tuple[str, str]] = []

    def connection(self, *_: object, **__: object) -> FakeApiServer.Conn:
        return FakeApiServer.Conn(self)

    class Conn:
        def __init__(self, server: FakeApiServer) -> None:
            self.server = server
            self.url = ""

        def request(self, method: str, url: str, **_: object) -> None:
            self.server.sent.append((method, url))
            self.url = url

        def getresponse(self) -> FakeResponse:
            path, _, query = self.url.partition("?")
            if path in self.server.statuses:
                return FakeResponse(self.server.statuses[path], b"{}")
            answer = self.server.answers.get(path)
            if callable(answer):
                answer = answer(query)
            if answer is None:
                return FakeResponse(404, b'{"kind":"Status"}')
            return FakeResponse(200, json.dumps(answer).encode())

        def close(self) -> None:
            pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> FakeApiServer:
    fake = FakeApiServer({})
    # The reader's seams only: other threads of the test process (the end-to-end tier's
    # followers) keep the real http.client and ssl.
    monkeypatch.setattr(live, "_connect", fake.connection)
    monkeypatch.setattr(live, "_tls", lambda **_: ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    return fake


CREDS = Credentials("https://127.0.0.1:6443", Path("/nonexistent/ca.crt"), token="t")  # noqa: S106


def items(*objs: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {}, "items": list(objs)}


def test_every_request_is_a_get_and_kinds_not_installed_are_skipped(server: FakeApiServer) -> None:
    """A plan cannot change the cluster it reads: every request is a GET. A cluster without
    KServe or the Gateway API is planned without them, and the output says so."""
    service = {"metadata": {"name": "chat", "namespace": "ml", "uid": "u1"}, "spec": {}}
    server.answers.update(
        {
            "/apis/aim.silogen.ai/v1alpha1/aimservices": items(service),
            "/api/v1/nodes": items({"metadata": {"name": "gpu"}}),
            "/api/v1/namespaces/ml/secrets": items(
                {"metadata": {"name": "pull", "namespace": "ml"}, "data": {}}
            ),
            "/api/v1/namespaces/ml/serviceaccounts": items(),
            "/api/v1/namespaces/ml": {"metadata": {"name": "ml"}},
        }
    )
    for res in live.AIM_RESOURCES:
        path = f"/apis/{AIM}/{res.plural}"
        server.answers.setdefault(path, items())
    read = live.read(CREDS, [])
    assert {m for m, _ in server.sent} == {"GET"}
    kinds = sorted((o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in read.objects)
    assert kinds == [
        (AIM, "AIMService", "chat"),
        ("v1", "Namespace", "ml"),
        ("v1", "Node", "gpu"),
        ("v1", "Secret", "pull"),
    ]
    skipped = " ".join(read.skipped)
    for kind in ("InferenceService", "HTTPRoute", "PersistentVolumeClaim", "Job"):
        assert kind in skipped


def test_a_listing_is_read_page_by_page(server: FakeApiServer) -> None:
    """The API server pages large lists; every page is read, none twice."""

    def nodes(query: str) -> dict[str, Any]:
        if "continue=next" in query:
            return items({"metadata": {"name": "b"}})
        return {"metadata": {"continue": "next"}, "items": [{"metadata": {"name": "a"}}]}

    server.answers["/api/v1/nodes"] = nodes
    reader = live.Reader(CREDS)
    names = [o["metadata"]["name"] for o in reader.list(live.COMPOSED[-1])]
    assert names == ["a", "b"]


def test_a_server_paging_nothing_forever_is_refused(
    server: FakeApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty pages that always say there is more never reach the item bound: the page bound
    stops them with the request named, instead of a plan that never ends."""
    server.answers["/api/v1/nodes"] = lambda _: {"metadata": {"continue": "more"}, "items": []}
    monkeypatch.setattr(live, "MAX_PAGES", 3)
    with pytest.raises(live.LiveError, match="/api/v1/nodes: more than 3 pages of nodes"):
        live.Reader(CREDS).list(live.COMPOSED[-1])
    assert len(server.sent) == 3


@dataclass(frozen=True)
class Bound(Case):
    bound: str
    value: int
    says: str


BOUNDS = [
    Bound(
        "response-too-large",
        "a response past the byte bound is refused unread beyond it",
        "MAX_RESPONSE_BYTES",
        64,
        "the response is larger than",
    ),
    Bound(
        "too-many-items",
        "a listing past the item bound is refused, however it is paged",
        "MAX_ITEMS",
        1,
        "more than 1 nodes; refused",
    ),
]


@table(BOUNDS)
def test_a_huge_answer_is_refused_with_the_request_named(
    server: FakeApiServer, monkeypatch: pytest.MonkeyPatch, case: Bound
) -> None:
    """A huge cluster or a hostile server costs a clear error, not memory or a stall."""
    server.answers["/api/v1/nodes"] = items(
        {"metadata": {"name": "a" * 40}}, {"metadata": {"name": "b" * 40}}
    )
    monkeypatch.setattr(live, case.bound, case.value)
    with pytest.raises(live.LiveError, match=case.says) as raised:
        live.Reader(CREDS).list(live.COMPOSED[-1])
    assert "GET /api/v1/nodes" in str(raised.value)


def test_a_forbidden_read_names_the_request_and_the_fix(server: FakeApiServer) -> None:
    """A user without read access learns which request was refused."""
    server.statuses["/api/v1/nodes"] = 403
    with pytest.raises(live.LiveError, match=r"GET /api/v1/nodes.*403 the user may not read"):
        live.Reader(CREDS).list(live.COMPOSED[-1])


def test_manifests_replace_spec_and_set_labels_and_keep_status_and_uid() -> None:
    """As `kubectl apply` leaves an object: the manifest's spec, its labels set over the live
    ones (another writer's label kept, one the last apply set and the manifest drops removed),
    the live status, uid and owners; a manifest of nothing live is added; a live object no
    manifest names stays (the plan deletes nothing)."""
    running: dict[str, Any] = {
        "apiVersion": AIM,
        "kind": "AIMService",
        "metadata": {
            "name": "chat",
            "namespace": "ml",
            "uid": "u1",
            "labels": {"old": "1", "crossplane.io/composite": "chat"},
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    {"metadata": {"labels": {"old": "1"}}}
                )
            },
        },
        "spec": {"model": {"name": "a"}, "replicas": 2},
        "status": {"status": "Running"},
    }
    other = {**running, "metadata": {**running["metadata"], "name": "other", "uid": "u2"}}
    manifest = {
        "apiVersion": AIM,
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": "ml", "labels": {"new": "1"}},
        "spec": {"model": {"name": "b"}},
    }
    new = {**manifest, "metadata": {"name": "fresh", "namespace": "ml"}}
    out = {o["metadata"]["name"]: o for o in live.overlay([running, other], [manifest, new])}
    assert out["chat"]["spec"] == {"model": {"name": "b"}}
    assert out["chat"]["metadata"]["labels"] == {"crossplane.io/composite": "chat", "new": "1"}
    assert out["chat"]["metadata"]["uid"] == "u1"
    assert out["chat"]["status"] == {"status": "Running"}
    assert out["other"] == other
    assert "fresh" in out


FOREIGN_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "backup-1",
        "namespace": "ops",
        "uid": "job-uid",
        "ownerReferences": [
            {"apiVersion": "batch/v1", "kind": "CronJob", "name": "backup", "uid": "cron-uid"}
        ],
    },
    "spec": {"template": {"spec": {"containers": [{"name": "backup", "image": "backup:1"}]}}},
}
"""Another team's run of a CronJob: its owner is a kind the plan does not read, and its
controller is not AIM's, so the plan neither collects it nor completes it."""


def serve(server: FakeApiServer, objects: list[dict[str, Any]]) -> None:
    """Answer every listing the reader makes from `objects` (a plan's end state), with the
    journey's Secrets as the API server stores them and a Job of another team beside them."""
    objects = [*objects, FOREIGN_JOB]
    for res in (*live.AIM_RESOURCES, *live.COMPOSED):
        prefix = "/api/v1" if res.api_version == "v1" else f"/apis/{res.api_version}"
        server.answers[f"{prefix}/{res.plural}"] = items(
            *(o for o in objects if (o["apiVersion"], o["kind"]) == (res.api_version, res.kind))
        )
    secrets = [o for o in load([JOURNEY]).objects if o["kind"] == "Secret"]
    for res in live.PER_NAMESPACE:
        listed = secrets if res.kind == "Secret" else []
        server.answers[f"/api/v1/namespaces/ml-team/{res.plural}"] = items(*listed)


JOURNEY = Path(__file__).parents[3] / "examples" / "journeys" / "custom-models"
CLUSTER_MODEL = JOURNEY.parent / "cluster-model"
KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: Q0E=}}]
users: [{name: u, user: {token: abc}}]
"""


def against(
    server: FakeApiServer,
    tmp_path: Path,
    manifests: Path,
    *flags: str,
    installed: Callable[[list[dict[str, Any]]], None] | None = None,
) -> tuple[int, dict[str, Any]]:
    """`aim plan --against` of `manifests` on a cluster holding the journey's end state, as
    this checkout's function composes it unless `installed` edits it as another one did."""
    offline = CliRunner().invoke(cli, ["plan", str(JOURNEY), "--gpu-node", "MI300X", "-o", "json"])
    objects = json.loads(offline.output)["objects"]
    if installed is not None:
        installed(objects)
    serve(server, objects)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    result = CliRunner().invoke(
        cli, ["plan", "--against", str(kubeconfig), str(manifests), *flags, "-o", "json"]
    )
    return result.exit_code, json.loads(result.output)["diff"]


def _older_function(objects: list[dict[str, Any]]) -> None:
    """The InferenceService as a function that set one variable fewer composed it."""
    [isvc] = [o for o in objects if o["kind"] == "InferenceService"]
    [container] = isvc["spec"]["predictor"]["containers"]
    container["env"] = [e for e in container["env"] if e["name"] != "AIM_MODEL_ID"]


def test_an_upgrade_plan_of_what_this_function_composes_changes_nothing(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """--upgrade on a cluster this checkout's function composed: the live objects are what it
    would compose, so no change and exit 0 (the upgrade journey's prediction)."""
    code, changes = against(server, tmp_path, JOURNEY, "--upgrade")
    assert code == 0
    assert (changes["changed"], changes["created"], changes["deleted"]) == ([], [], [])


def test_an_upgrade_plan_names_what_the_new_function_would_change(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """An InferenceService the installed function composed otherwise: --upgrade compares with
    the live objects, so it names the field and the redeploy and exits 2; the plan of the
    manifests alone does not see it (both its sides are this function's), exit 0."""
    code, changes = against(server, tmp_path, JOURNEY, "--upgrade", installed=_older_function)
    assert code == 2
    assert changes["changed"] == [
        {
            "object": "InferenceService ml-team/llama-custom-a04542d9",
            "paths": ["spec.predictor.containers[0].env"],
        }
    ]
    [service] = changes["runningServices"]
    assert service["redeployed"] == (
        "InferenceService ml-team/llama-custom-a04542d9 changes (spec.predictor.containers[0].env)"
    )
    code, changes = against(server, tmp_path, JOURNEY, installed=_older_function)
    assert (code, changes["changed"]) == (0, [])


def test_upgrade_without_a_cluster_is_refused() -> None:
    """--upgrade compares with a live cluster: alone it is a usage error naming --against."""
    result = CliRunner().invoke(cli, ["plan", "--upgrade", str(JOURNEY)])
    assert result.exit_code == 2
    assert "give --against KUBECONFIG too" in result.output


def test_planning_the_applied_manifests_again_changes_nothing_running(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """The journey's manifests against the cluster they produced: nothing changes, is created
    or deleted (its Secret, written as stringData, reads as the data the cluster stores; the
    other team's Job is neither collected nor completed), the running service is unaffected,
    exit 0."""
    code, changes = against(server, tmp_path, JOURNEY)
    assert code == 0
    assert changes["changed"] == []
    assert changes["created"] == []
    assert changes["deleted"] == []
    [service] = changes["runningServices"]
    assert service["service"] == "AIMService ml-team/llama-custom"
    assert not service["switchesTemplate"]
    assert service["redeployed"] is None


def test_a_change_that_redeploys_a_running_service_exits_2_naming_it(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """A CI gate: an environment variable reaches the running service's pods, so the plan
    exits 2 and names that service and the field."""
    changed = tmp_path / "manifests"
    shutil.copytree(JOURNEY, changed)
    first = changed / "01-llama-custom.yaml"
    env = "  replicas: 1\n  env:\n    - {name: VLLM_LOGGING_LEVEL, value: DEBUG}\n"
    first.write_text(first.read_text().replace("  replicas: 1\n", env))
    code, changes = against(server, tmp_path, changed)
    assert code == 2
    [service] = changes["runningServices"]
    assert service["redeployed"] == (
        "InferenceService ml-team/llama-custom-a04542d9 changes (spec.predictor.containers[0].env)"
    )
    # The chain the variable travels: the custom model the service made, and its template.
    assert {c["object"]: c["paths"] for c in changes["changed"]} == {
        "AIMService ml-team/llama-custom": ["spec.env"],
        "AIMModel ml-team/meta-llama-llama-3-1-8b-instruct-0501f79b": ["spec.env"],
        "AIMServiceTemplate ml-team/meta-llama-llama-3-1-8b-instruct-0501f79b-custom-6ac8a0de": [
            "spec.env"
        ],
        "InferenceService ml-team/llama-custom-a04542d9": ["spec.predictor.containers[0].env"],
    }


def test_a_replica_change_rescales_a_running_service_without_redeploying_it(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """KServe's raw deployment turns the replica bounds into the Deployment's replicas or its
    autoscaler: pods are added, none restarted. The plan says the service is rescaled and exits 0,
    so a CI gate does not stop a scale-up."""
    changed = tmp_path / "manifests"
    shutil.copytree(JOURNEY, changed)
    first = changed / "01-llama-custom.yaml"
    first.write_text(first.read_text().replace("  replicas: 1", "  replicas: 2"))
    code, changes = against(server, tmp_path, changed)
    assert code == 0
    [service] = changes["runningServices"]
    assert service["redeployed"] is None
    assert service["rescaled"] == (
        "InferenceService ml-team/llama-custom-a04542d9 "
        "(spec.predictor.maxReplicas, spec.predictor.minReplicas)"
    )


def test_the_plan_and_its_baseline_share_the_registry_s_answers(
    server: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--against plans twice (the cluster as it is, and with the manifests); a model that asks
    its registry in both, every round, is asked of the registry once in the whole run."""
    offline = CliRunner().invoke(
        cli, ["plan", str(CLUSTER_MODEL), "--offline", "--gpu-node", "MI300X", "-o", "json"]
    )
    serve(server, json.loads(offline.output)["objects"])
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    fake = CountingInspector()
    monkeypatch.setattr(
        "aim_plan.cli.oras_answers", lambda *_, **__: Answers(fake, OfflineRegistry())
    )
    result = CliRunner().invoke(
        cli,
        ["plan", "--against", str(kubeconfig), str(CLUSTER_MODEL), "--oras", sys.executable],
    )
    assert result.exit_code == 0, result.output
    assert [r.image for r in fake.asked] == [LLAMA_31_8B.image]
