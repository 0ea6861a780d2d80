"""Read a live cluster's objects for `aim plan --against`: GET and LIST only, bounded.

The reader can send nothing but GET (`Reader._get` is its only request, the verb fixed), so a
plan cannot change the cluster it reads, whatever the kubeconfig's user may do. Every response
is bounded (`MAX_RESPONSE_BYTES`, read no further), every listing too (`MAX_ITEMS` over its
pages, at most MAX_PAGES of them), and every read of the connection has a timeout: a huge
or stalled API server costs a clear error (one that drips its answer is held by the size cap).

Kinds read: every AIM kind of both flavours, and the objects they compose or read
(`COMPOSED`), Nodes across the cluster, Secrets and ServiceAccounts in the namespaces of the
manifests and of the live AIM objects (Secrets are read because the function checks them, and
never printed), and the manifests' Namespaces. A kind whose CRD is not installed (404) is
skipped and noted: a cluster without KServe has no InferenceServices to redeploy.
"""

from __future__ import annotations

import copy
import http.client
import json
import ssl
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from aim_plan.kubeconfig import Credentials
from aim_plan.load import Obj, is_aim, key_of
from function.api.definitions import DEFINITIONS
from function.api.meta import GROUP
from function.kube.claims import composite_names

MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
MAX_ITEMS: Final = 100_000
PAGE: Final = 500
MAX_PAGES: Final = MAX_ITEMS // PAGE + 1
TIMEOUT_S: Final = 30.0

AIM_VERSION: Final = f"{GROUP}/v1alpha1"


@dataclass(frozen=True)
class Resource:
    """A kind the reader lists: its apiVersion, kind, plural and whether it is namespaced."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool


def _aim_resources() -> list[Resource]:
    found: dict[str, Resource] = {}
    for d in DEFINITIONS:
        namespaced = d.scope == "Namespaced"
        found[d.kind.value] = Resource(AIM_VERSION, d.kind.value, d.plural, namespaced)
        kind, plural = composite_names(d)
        found.setdefault(kind, Resource(AIM_VERSION, kind, plural, namespaced=False))
    return list(found.values())


AIM_RESOURCES: Final = _aim_resources()
COMPOSED: Final = (
    Resource("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices", namespaced=True),
    Resource("gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes", namespaced=True),
    Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims", namespaced=True),
    Resource("batch/v1", "Job", "jobs", namespaced=True),
    Resource("v1", "Node", "nodes", namespaced=False),
)
PER_NAMESPACE: Final = (
    Resource("v1", "Secret", "secrets", namespaced=True),
    Resource("v1", "ServiceAccount", "serviceaccounts", namespaced=True),
)

READ_KINDS: Final = frozenset(
    (r.api_version, r.kind) for r in (*AIM_RESOURCES, *COMPOSED, *PER_NAMESPACE)
) | {("v1", "Namespace")}
"""What the reader reads; the plan's other objects (a simulated Job's Pod) are not compared."""


class LiveError(RuntimeError):
    """The cluster could not be read; the message names the request and what to do."""


@dataclass
class Live:
    """What was read: the objects, and the kinds skipped (their CRD is not installed)."""

    objects: list[Obj] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class _NotFoundError(LiveError):
    pass


# The reader's own references, so a test can stand in for the server here without replacing
# `http.client` or `ssl` for every other client in the process (the end-to-end tier's threads).
_connect = http.client.HTTPSConnection
_tls = ssl.create_default_context


class Reader:
    """An API client that can only GET."""

    def __init__(self, creds: Credentials, timeout_s: float = TIMEOUT_S) -> None:
        """A client of the kubeconfig's server: its CA, client certificate or bearer token."""
        ctx = _tls(cafile=str(creds.ca))
        if creds.cert is not None and creds.key is not None:
            ctx.load_cert_chain(str(creds.cert), str(creds.key))
        parsed = urllib.parse.urlsplit(creds.server)
        self._host = parsed.hostname or "127.0.0.1"
        self._port = parsed.port or 443
        self._base = parsed.path.rstrip("/")
        self._ssl = ctx
        self._auth = {"Authorization": f"Bearer {creds.token}"} if creds.token else {}
        self._timeout = timeout_s

    def _get(self, path: str) -> dict[str, Any]:
        """GET `path`; the decoded JSON object, bounded in size."""
        conn = _connect(self._host, self._port, context=self._ssl, timeout=self._timeout)
        try:
            conn.request(
                "GET", self._base + path, headers={"Accept": "application/json", **self._auth}
            )
            resp = conn.getresponse()
            raw = resp.read(MAX_RESPONSE_BYTES + 1)
        except (OSError, http.client.HTTPException) as e:
            msg = f"GET {path}: {e}; check the kubeconfig's server and that the cluster is up"
            raise LiveError(msg) from None
        finally:
            conn.close()
        if len(raw) > MAX_RESPONSE_BYTES:
            msg = f"GET {path}: the response is larger than {MAX_RESPONSE_BYTES >> 20} MiB; refused"
            raise LiveError(msg)
        if resp.status == 404:  # noqa: PLR2004
            raise _NotFoundError(path)
        if resp.status >= 300:  # noqa: PLR2004
            why = {401: "the credentials were refused", 403: "the user may not read this"}.get(
                resp.status, resp.reason
            )
            msg = f"GET {path}: {resp.status} {why}; plan with a user that may get and list it"
            raise LiveError(msg)
        try:
            body = json.loads(raw)
        except ValueError:
            msg = f"GET {path}: the answer is not JSON; is the kubeconfig's server an API server?"
            raise LiveError(msg) from None
        if not isinstance(body, dict):
            msg = f"GET {path}: the answer is not a JSON object"
            raise LiveError(msg)
        return body

    def list(self, res: Resource, namespace: str | None = None) -> list[Obj]:
        """Every object of `res` (in `namespace`, or all), page by page, at most MAX_ITEMS."""
        prefix = (
            f"/api/{res.api_version}" if "/" not in res.api_version else f"/apis/{res.api_version}"
        )
        path = (
            f"{prefix}/namespaces/{urllib.parse.quote(namespace, safe='')}/{res.plural}"
            if namespace
            else f"{prefix}/{res.plural}"
        )
        items: list[Obj] = []
        token = ""
        for _ in range(MAX_PAGES):
            query = {"limit": str(PAGE), **({"continue": token} if token else {})}
            body = self._get(f"{path}?{urllib.parse.urlencode(query)}")
            page = body.get("items") or []
            if len(items) + len(page) > MAX_ITEMS:
                msg = f"GET {path}: more than {MAX_ITEMS} {res.plural}; refused, too many to plan"
                raise LiveError(msg)
            for item in page:
                if isinstance(item, dict):
                    item["apiVersion"], item["kind"] = res.api_version, res.kind
                    (item.get("metadata") or {}).pop("managedFields", None)
                    items.append(item)
            token = str((body.get("metadata") or {}).get("continue") or "")
            if not token:
                return items
        # Pages of nothing that always go on would never reach MAX_ITEMS.
        msg = f"GET {path}: more than {MAX_PAGES} pages of {res.plural}; refused, too many to plan"
        raise LiveError(msg)

    def get(self, path: str) -> Obj | None:
        """One object, or None when it does not exist."""
        try:
            return self._get(path)
        except _NotFoundError:
            return None


def read(creds: Credentials, manifests: Iterable[Obj], timeout_s: float = TIMEOUT_S) -> Live:
    """The live objects of the kinds a plan involves, read with GET and LIST only."""
    reader = Reader(creds, timeout_s)
    live = Live()
    for res in (*AIM_RESOURCES, *COMPOSED):
        try:
            live.objects += reader.list(res)
        except _NotFoundError:
            live.skipped.append(f"{res.kind} ({res.plural}.{res.api_version}): not installed")
    given = list(manifests)
    # Secrets and accounts only where AIM objects are or will be: not every namespace that holds
    # a Job or a claim of some other team.
    namespaces = sorted(
        {key_of(o)[2] for o in [*given, *filter(is_aim, live.objects)] if key_of(o)[2]}
    )
    for namespace in namespaces:
        for res in PER_NAMESPACE:
            live.objects += reader.list(res, namespace)
        found = reader.get(f"/api/v1/namespaces/{urllib.parse.quote(namespace)}")
        if found is not None:
            found["apiVersion"], found["kind"] = "v1", "Namespace"
            (found.get("metadata") or {}).pop("managedFields", None)
            live.objects.append(found)
    return live


def overlay(live: Iterable[Obj], manifests: Iterable[Obj]) -> list[Obj]:
    """The live objects with the manifests laid over them, as `kubectl apply` would leave them.

    A manifest replaces a live object's spec (its top-level fields but metadata and status),
    sets its labels and annotations over the live ones (removing those the last `kubectl apply`
    set and the manifest drops), and keeps its status, uid and owners; a manifest of no live
    object is added. A live object no manifest names stays as it is: the plan deletes nothing.
    """
    out = {key_of(o): copy.deepcopy(o) for o in live}
    for manifest in manifests:
        key = key_of(manifest)
        old = out.get(key)
        if old is None:
            out[key] = copy.deepcopy(manifest)
            continue
        new = {k: v for k, v in old.items() if k in {"apiVersion", "kind", "metadata", "status"}}
        new.update(
            copy.deepcopy({k: v for k, v in manifest.items() if k not in {"metadata", "status"}})
        )
        meta = dict(old.get("metadata") or {})
        given = manifest.get("metadata") or {}
        applied = _last_applied(meta)
        for name in ("labels", "annotations"):
            mine = given.get(name) or {}
            # Core and other controllers label the live object too (an XR carries
            # crossplane.io/composite): an apply keeps their keys, and removes only the ones
            # its last apply set that the manifest no longer gives.
            dropped = set(applied.get(name) or {}) - set(mine)
            kept = {k: v for k, v in (meta.get(name) or {}).items() if k not in dropped}
            meta[name] = {**kept, **copy.deepcopy(mine)}
        new["metadata"] = meta
        out[key] = new
    return list(out.values())


LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"


def _last_applied(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata of the manifest `kubectl apply` last applied, or {} when none is recorded."""
    raw = (meta.get("annotations") or {}).get(LAST_APPLIED)
    try:
        applied = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return {}
    found = applied.get("metadata") if isinstance(applied, dict) else None
    return found if isinstance(found, dict) else {}
