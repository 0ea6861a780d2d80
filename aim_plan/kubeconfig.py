"""Reading a user's kubeconfig into client credentials, for `aim plan --against` and the e2e tier.

Both clients (`aim_plan.live`, `devtools.cluster.kube`) authenticate with a client certificate,
which is what kind and kubeadm clusters put in their admin kubeconfig, or a bearer token (inline or
`tokenFile`); exec plugins and auth providers are refused. The file is the user's, so it is read
with bounds, and every refusal names the field and what to do instead. Data embedded in the file
(`*-data`, base64) is written beside the run's other files with owner-only permissions; paths
are resolved against the kubeconfig's directory, as kubectl resolves them.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

MAX_BYTES: Final = 1 << 20
"""A kubeconfig larger than this is not one (kind's is about 5 KiB)."""


_MAX_TOKEN: Final = 16 << 10
"""Bound of a bearer token (service account tokens are about 1 KiB)."""


class KubeconfigError(ValueError):
    """The kubeconfig cannot be used; the message names the file, the field and the fix."""


@dataclasses.dataclass(frozen=True)
class Credentials:
    """How to reach and authenticate to an API server (the files a kubeconfig points at).

    A client certificate (`cert` and `key`), or a bearer `token` (a service account's, say).
    """

    server: str
    ca: Path
    cert: Path | None = None
    key: Path | None = None
    token: str | None = dataclasses.field(default=None, repr=False)


def credentials(path: Path, into: Path, context: str | None = None) -> Credentials:
    """The server, CA and client credentials of a context of the kubeconfig at `path`.

    `context` defaults to the current context; embedded data is written under `into`.
    """
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise _error(path, "", f"is {size} bytes; a kubeconfig is at most {MAX_BYTES}")
        doc = yaml.safe_load(path.read_text())
    except OSError as e:
        raise _error(path, "", f"cannot be read: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise _error(path, "", f"is not YAML: {e}") from e
    if not isinstance(doc, Mapping):
        raise _error(path, "", "is not a mapping; `kubectl config view --raw` shows what one holds")
    name = context or doc.get("current-context")
    if not isinstance(name, str) or not name:
        raise _error(path, "current-context", "is empty; set it with `kubectl config use-context`")
    ctx = _named(path, doc, "contexts", "context", name)
    cluster = _named(path, doc, "clusters", "cluster", _text(path, ctx, "context.cluster"))
    user = _named(path, doc, "users", "user", _text(path, ctx, "context.user"))
    server = _text(path, cluster, "cluster.server")
    if not server.startswith("https://"):
        raise _error(path, "cluster.server", f"is {server!r}; the client speaks https only")
    if cluster["cluster"].get("insecure-skip-tls-verify"):
        raise _error(
            path, "cluster.insecure-skip-tls-verify", "is set; give the cluster's CA instead"
        )
    into.mkdir(parents=True, exist_ok=True)
    ca = _file(path, cluster["cluster"], "certificate-authority", into / "ca.crt")
    return _client(path, user["user"], Credentials(server, ca), into)


def _client(path: Path, who: Mapping[str, Any], base: Credentials, into: Path) -> Credentials:
    """`base` with the user's client certificate and key, or bearer token, or both."""
    for field in ("exec", "auth-provider", "username"):
        if field in who:
            raise _error(
                path,
                f"user.{field}",
                "is set: the client authenticates with a client certificate or a bearer token "
                "only; use kind's admin kubeconfig, or a service account's token",
            )
    token = _token(path, who)
    if token is not None and not any(
        k in who for k in ("client-certificate", "client-certificate-data")
    ):
        return dataclasses.replace(base, token=token)
    return dataclasses.replace(
        base,
        cert=_file(path, who, "client-certificate", into / "client.crt"),
        key=_file(path, who, "client-key", into / "client.key"),
        token=token,
    )


def _token(path: Path, user: Mapping[str, Any]) -> str | None:
    """The user's bearer token, given inline or in `tokenFile`; None when there is none."""
    token = user.get("token")
    named = user.get("tokenFile")
    if token is None and isinstance(named, str) and named:
        file = Path(named) if Path(named).is_absolute() else path.parent / named
        try:
            with file.open("rb") as f:
                token = f.read(_MAX_TOKEN + 1).decode("ascii", errors="replace").strip()
        except OSError as e:
            raise _error(path, "user.tokenFile", f"names {file}: {e.strerror}") from e
    if token is None:
        return None
    if not isinstance(token, str) or not token or len(token) > _MAX_TOKEN:
        raise _error(path, "user.token", f"is not a token (a string of 1 to {_MAX_TOKEN} bytes)")
    if any(c.isspace() or not c.isprintable() for c in token):
        raise _error(path, "user.token", "holds whitespace or control characters")
    return token


def _named(
    path: Path, doc: Mapping[str, Any], section: str, key: str, name: str
) -> Mapping[str, Any]:
    """The entry called `name` in the list `section`, holding a mapping under `key`."""
    entries = doc.get(section)
    if not isinstance(entries, list):
        raise _error(path, section, "is missing or not a list")
    for entry in entries:
        if isinstance(entry, Mapping) and entry.get("name") == name:
            if not isinstance(entry.get(key), Mapping):
                raise _error(path, f"{section}[{name}].{key}", "is missing or not a mapping")
            return entry
    raise _error(path, section, f"has no entry named {name!r}")


def _text(path: Path, entry: Mapping[str, Any], field: str) -> str:
    """A string field `outer.inner` of an entry."""
    outer, inner = field.split(".")
    value = entry[outer].get(inner)
    if not isinstance(value, str) or not value:
        raise _error(path, f"{entry.get('name')}: {field}", "is missing or not a string")
    return value


def _file(path: Path, entry: Mapping[str, Any], field: str, dest: Path) -> Path:
    """A PEM file named by `field`, or written to `dest` from `field-data`."""
    data = entry.get(f"{field}-data")
    if isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as e:
            raise _error(path, f"{field}-data", "is not base64") from e
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
        return dest
    named = entry.get(field)
    if isinstance(named, str) and named:
        file = Path(named) if Path(named).is_absolute() else path.parent / named
        if not file.is_file():
            raise _error(path, field, f"names {file}, which is not a file")
        return file
    raise _error(path, field, f"is missing: give {field} or {field}-data")


def _error(path: Path, field: str, problem: str) -> KubeconfigError:
    where = f" {field}" if field else ""
    return KubeconfigError(f"kubeconfig {path}:{where} {problem}")
