"""Registry credentials from Kubernetes image pull secrets (`kubernetes.io/dockerconfigjson`).

A password read here goes to the registry client on its standard input and nowhere else: the
`Credential` type keeps it out of `repr` (and so out of logs), and messages about a secret name
the secret and the key, never a value.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from function.api.meta import Manifest
from function.registry.reference import registry_host
from function.registry.urls import without_userinfo
from function.rules import jsontext

DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
_DATA_KEY = ".dockerconfigjson"
_MAX_BYTES = 1 << 20  # what the API server lets a Secret hold
_MAX_KEY = 100  # of an `auths` key quoted in a message


@dataclass(frozen=True)
class Credential:
    """A user name and password for one registry."""

    registry: str
    username: str
    password: str = field(repr=False)


class SecretFormatError(ValueError):
    """A pull secret cannot be read as Docker credentials; the message says why (no values)."""


def credential_for(registry: str, secrets: Sequence[Manifest]) -> Credential | None:
    """The first credential for `registry` among `secrets`, in the order they are listed.

    Raises:
        SecretFormatError: a secret is not a readable `kubernetes.io/dockerconfigjson` secret.
    """
    for secret in secrets:
        for key, entry in _auths(secret).items():
            if registry_host(key) == registry and isinstance(entry, dict):
                credential = _credential(registry, entry, _name(secret), key)
                if credential is not None:
                    return credential
    return None


def _auths(secret: Manifest) -> Mapping[str, JsonValue]:
    name = _name(secret)
    kind = secret.get("type")
    if kind != DOCKER_CONFIG_JSON:
        msg = (
            f"secret {name!r} has type {kind!r}; image pull secrets must have type "
            f"{DOCKER_CONFIG_JSON} (kubectl create secret docker-registry ...)"
        )
        raise SecretFormatError(msg)
    data = secret.get("data")
    encoded = data.get(_DATA_KEY) if isinstance(data, dict) else None
    if not isinstance(encoded, str):
        msg = f"secret {name!r} has no data[{_DATA_KEY!r}]"
        raise SecretFormatError(msg)
    try:
        config = jsontext.loads(base64.b64decode(encoded, validate=True), max_bytes=_MAX_BYTES)
    except ValueError:  # not base64 (binascii.Error), not ASCII, not JSON within bounds
        msg = f"secret {name!r}: data[{_DATA_KEY!r}] is not base64-encoded JSON"
        raise SecretFormatError(msg) from None
    auths = config.get("auths") if isinstance(config, dict) else None
    if not isinstance(auths, dict):
        msg = f"secret {name!r}: data[{_DATA_KEY!r}] has no 'auths' object"
        raise SecretFormatError(msg)
    return auths


def _credential(
    registry: str, entry: Mapping[str, JsonValue], secret: str, key: str
) -> Credential | None:
    username, password = entry.get("username"), entry.get("password")
    if isinstance(username, str) and isinstance(password, str) and username:
        return Credential(registry, username, password)
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            user, sep, secret_value = base64.b64decode(auth, validate=True).decode().partition(":")
        except ValueError:  # not base64 (binascii.Error), not ASCII, not UTF-8
            user, sep, secret_value = "", "", ""
        if not sep or not user:
            # The key is a registry's URL as `docker login` wrote it: quoted without userinfo.
            where = without_userinfo(key)[:_MAX_KEY]
            msg = f"secret {secret!r}: auths[{where!r}].auth is not base64 of 'user:password'"
            raise SecretFormatError(msg)
        return Credential(registry, user, secret_value)
    return None


def _name(secret: Manifest) -> str:
    meta = secret.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else "?"
