"""A small Kubernetes REST client for the end-to-end tier, on the standard library alone.

It speaks to a real kube-apiserver with client certificates: discovery maps kinds to resources,
and the verbs are the ones the tests need (get, list, create, server-side apply, status patches,
delete). Each response keeps the API server's `Warning` headers, because Pod Security reports
through them.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import yaml

T = TypeVar("T")
FIELD_MANAGER: Final = "aim-e2e"
RETRIES: Final = 10
_DROPPED: Final = (ConnectionError, TimeoutError, http.client.HTTPException)
"""A connection the server closed, reset or cut short, or an answer that never came."""
_IDEMPOTENT: Final = frozenset({"GET", "PATCH"})


class KubeError(RuntimeError):
    """The API server refused a request; `status` and `reason` are its own."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        """Keep the API server's status code, reason and message."""
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Credentials:
    """How to reach and authenticate to an API server (the files a kubeconfig points at).

    A client certificate (`cert` and `key`), or a bearer `token` (a service account's, say).
    """

    server: str  # https://127.0.0.1:<port>
    ca: Path
    cert: Path | None = None
    key: Path | None = None
    token: str | None = field(default=None, repr=False)

    def kubeconfig(self, user: str) -> str:
        """A kubeconfig for these credentials, for processes that take one."""
        return yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "e2e",
                        "cluster": {"server": self.server, "certificate-authority": str(self.ca)},
                    }
                ],
                "users": [{"name": user, "user": self._user()}],
                "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": user}}],
                "current-context": "e2e",
            }
        )

    def _user(self) -> dict[str, str]:
        if self.token is not None:
            return {"token": self.token}
        return {"client-certificate": str(self.cert), "client-key": str(self.key)}


@dataclass(frozen=True)
class Response:
    """A decoded response body and the API server's warnings."""

    body: dict[str, Any]
    warnings: tuple[str, ...] = ()


@dataclass
class Kube:
    """A client for one API server and identity."""

    credentials: Credentials
    timeout_s: float = 30.0
    _resources: dict[tuple[str, str], tuple[str, bool]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Build the TLS context once: CA, client certificate and key."""
        creds = self.credentials
        ctx = ssl.create_default_context(cafile=str(creds.ca))
        if creds.cert is not None and creds.key is not None:
            ctx.load_cert_chain(str(creds.cert), str(creds.key))
        self._ssl = ctx
        self._auth = {"Authorization": f"Bearer {creds.token}"} if creds.token else {}
        parsed = urllib.parse.urlsplit(self.credentials.server)
        self._host = parsed.hostname or "127.0.0.1"
        self._port = parsed.port or 443

    # -- raw requests -------------------------------------------------------------------------

    def request(  # noqa: PLR0913 - an HTTP request's parts
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | str | None = None,
        *,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
        accept: str = "application/json",
    ) -> Response:
        """Send one request; raise KubeError on a non-2xx status."""
        if params:
            path = f"{path}?{urllib.parse.urlencode(params)}"
        data = None
        if body is not None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
        for attempt in range(1, RETRIES):
            try:
                return self._send(method, path, data, content_type, accept)
            except KubeError as e:
                # 429: the API server is busy (or a new CRD's storage is still starting); it
                # asks to be called again, so the client does, like client-go.
                if e.status != 429:  # noqa: PLR2004
                    raise
            except _DROPPED:
                # A loaded API server closes connections it cannot serve. Reads, and the
                # patches this client sends (apply and merge patches, which set values rather
                # than add to them), mean the same sent twice, so they are sent again.
                if method not in _IDEMPOTENT:
                    raise
            time.sleep(0.5 * attempt)
        return self._send(method, path, data, content_type, accept)

    def _send(
        self, method: str, path: str, data: bytes | None, content_type: str, accept: str
    ) -> Response:
        conn = http.client.HTTPSConnection(
            self._host, self._port, context=self._ssl, timeout=self.timeout_s
        )
        try:
            conn.request(
                method,
                path,
                body=data,
                headers={"Content-Type": content_type, "Accept": accept, **self._auth},
            )
            resp = conn.getresponse()
            raw = resp.read()
            warnings = tuple(resp.headers.get_all("Warning") or ())
        finally:
            conn.close()
        decoded: dict[str, Any] = {}
        if raw:
            try:
                loaded = json.loads(raw)
            except json.JSONDecodeError:
                loaded = {"message": raw.decode(errors="replace")}
            decoded = loaded if isinstance(loaded, dict) else {"items": loaded}
        if resp.status >= 300:  # noqa: PLR2004 - HTTP status classes
            raise KubeError(
                resp.status, str(decoded.get("reason", "")), str(decoded.get("message", raw))
            )
        return Response(decoded, warnings)

    def ready(self) -> bool:
        """True when /readyz answers ok."""
        try:
            conn = http.client.HTTPSConnection(self._host, self._port, context=self._ssl, timeout=5)
            conn.request("GET", "/readyz", headers=self._auth)
            ok = conn.getresponse().status == 200  # noqa: PLR2004
            conn.close()
        except OSError:
            return False
        return ok

    # -- typed verbs --------------------------------------------------------------------------

    def path(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> str:
        """The REST path of a kind (and object), found by discovery."""
        plural, namespaced = self._resource(api_version, kind)
        prefix = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        ns = f"/namespaces/{namespace}" if namespaced and namespace else ""
        return f"{prefix}{ns}/{plural}" + (f"/{name}" if name else "")

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> dict[str, Any] | None:
        """The object, or None when it does not exist."""
        try:
            return self.request("GET", self.path(api_version, kind, namespace, name)).body
        except KubeError as e:
            if e.status == 404:  # noqa: PLR2004
                return None
            raise

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """Objects of a kind, in a namespace or all, optionally by labels."""
        params = {}
        if labels:
            params["labelSelector"] = ",".join(f"{k}={v}" for k, v in labels.items())
        body = self.request("GET", self.path(api_version, kind, namespace), params=params).body
        return list(body.get("items") or [])

    def watch(
        self, api_version: str, kind: str, resource_version: str, timeout_s: int = 3600
    ) -> Iterator[dict[str, Any]]:
        """Every change to objects of a kind after `resource_version`, in all namespaces.

        One event (`type`, `object`) per write that changed something, as a controller sees it.
        """
        path = self.path(api_version, kind, None)
        query = urllib.parse.urlencode(
            {"watch": "1", "resourceVersion": resource_version, "timeoutSeconds": str(timeout_s)}
        )
        conn = http.client.HTTPSConnection(
            self._host, self._port, context=self._ssl, timeout=timeout_s + 30
        )
        try:
            conn.request("GET", f"{path}?{query}", headers={"Accept": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:  # noqa: PLR2004
                raise KubeError(resp.status, resp.reason, resp.read().decode(errors="replace"))
            while line := resp.readline():
                yield json.loads(line)
        finally:
            conn.close()

    def list_version(self, api_version: str, kind: str) -> str:
        """The collection's resourceVersion now: where a watch starts to miss nothing after."""
        body = self.request("GET", self.path(api_version, kind, None), params={"limit": "1"}).body
        return str(body["metadata"]["resourceVersion"])

    def table(
        self, api_version: str, kind: str, namespace: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """What `kubectl get` shows: the server's printer columns, by object name then column.

        The API server renders the columns itself (the Table format kubectl asks for), from the
        CRD's additionalPrinterColumns, so this is exactly what a user sees.
        """
        body = self.request(
            "GET",
            self.path(api_version, kind, namespace),
            accept="application/json;as=Table;v=v1;g=meta.k8s.io",
        ).body
        columns = [str(c["name"]) for c in body.get("columnDefinitions") or []]
        rows = {}
        for row in body.get("rows") or []:
            cells = dict(zip(columns, row.get("cells") or [], strict=False))
            rows[str(cells.get("Name", ""))] = cells
        return rows

    def create(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> Response:
        """POST an object; the response carries any warnings.

        With `dry_run` the API server runs every admission step (Pod Security included) and
        stores nothing, as `kubectl create --dry-run=server` does.
        """
        meta = obj["metadata"]
        params = {"fieldManager": FIELD_MANAGER} | ({"dryRun": "All"} if dry_run else {})
        return self.request(
            "POST",
            self.path(obj["apiVersion"], obj["kind"], meta.get("namespace")),
            obj,
            params=params,
        )

    def apply(self, obj: Mapping[str, Any]) -> Response:
        """Server-side apply, as `kubectl apply --server-side --force-conflicts` does."""
        meta = obj["metadata"]
        return self.request(
            "PATCH",
            self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"]),
            json.dumps(obj),
            content_type="application/apply-patch+yaml",
            params={"fieldManager": FIELD_MANAGER, "force": "true"},
        )

    def apply_all(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Apply each object in turn."""
        for obj in objects:
            self.apply(obj)

    def patch_status(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        patch: Mapping[str, Any],
    ) -> dict[str, Any]:
        """A JSON merge patch of the status subresource (what a controller would write)."""
        path = self.path(api_version, kind, namespace, name) + "/status"
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json").body

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
    ) -> None:
        """Delete an object (a missing one is fine)."""
        try:
            self.request(
                "DELETE",
                self.path(api_version, kind, namespace, name),
                {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation},
            )
        except KubeError as e:
            if e.status != 404:  # noqa: PLR2004
                raise

    # -- discovery ----------------------------------------------------------------------------

    def _resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        key = (api_version, kind)
        if key not in self._resources:
            # CRDs arrive while the tests run, so a miss always asks again.
            path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            body = self.request("GET", path).body
            for r in body.get("resources", []):
                if "/" not in r["name"]:
                    self._resources[(api_version, r["kind"])] = (r["name"], r["namespaced"])
        if key not in self._resources:
            raise KubeError(404, "NotFound", f"the API server serves no {kind} in {api_version}")
        return self._resources[key]


def wait_for(
    what: str,
    probe: Callable[[], T | None],
    *,
    timeout_s: float = 60.0,
    interval_s: float = 0.25,
    explain: Callable[[], str] | None = None,
) -> T:
    """Poll `probe` until it returns something other than None or False; fail naming `what`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            got = probe()
        except KubeError as e:
            if e.status != 404:  # noqa: PLR2004 - a kind not served yet is worth waiting for
                raise
            got = None
        if got is not None and got is not False:
            return got
        if time.monotonic() > deadline:
            detail = f"\n{explain()}" if explain else ""
            msg = f"timed out after {timeout_s:.0f}s waiting for {what}{detail}"
            raise TimeoutError(msg)
        time.sleep(interval_s)


def condition(obj: Mapping[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The condition of a type in an object's status, if any."""
    if not obj:
        return None
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None
