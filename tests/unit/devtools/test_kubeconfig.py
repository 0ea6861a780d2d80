"""devtools.cluster.kubeconfig: a user's kubeconfig, read for a run against an existing cluster."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.cluster.kubeconfig import MAX_BYTES, KubeconfigError, credentials
from tests.cases import table


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


KIND: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Config",
    "current-context": "kind-aim",
    "clusters": [
        {
            "name": "kind-aim",
            "cluster": {
                "server": "https://127.0.0.1:40123",
                "certificate-authority-data": b64("CA PEM"),
            },
        }
    ],
    "contexts": [{"name": "kind-aim", "context": {"cluster": "kind-aim", "user": "kind-aim"}}],
    "users": [
        {
            "name": "kind-aim",
            "user": {
                "client-certificate-data": b64("CERT PEM"),
                "client-key-data": b64("KEY PEM"),
            },
        }
    ],
}
"""The shape of the admin kubeconfig `kind create cluster` writes."""


def test_a_kind_kubeconfig_gives_its_server_and_files(tmp_path: Path) -> None:
    """kind embeds its CA and the admin's certificate: they are written out, readable by the
    owner only (the key is a credential), and the server is the context's cluster's."""
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(KIND))
    creds = credentials(path, tmp_path / "out")
    assert creds.server == "https://127.0.0.1:40123"
    assert creds.cert is not None
    assert creds.key is not None
    assert creds.ca.read_text() == "CA PEM"
    assert creds.cert.read_text() == "CERT PEM"
    assert creds.key.read_text() == "KEY PEM"
    assert creds.key.stat().st_mode & 0o777 == 0o600
    assert creds.token is None


def test_a_bearer_token_is_used_inline_or_from_its_file(tmp_path: Path) -> None:
    """A service account's kubeconfig carries a token and no certificate; `tokenFile` is read
    relative to the kubeconfig, as kubectl reads it."""
    doc = copy.deepcopy(KIND)
    doc["users"][0]["user"] = {"token": "eyJhbGciOi.abc.def"}
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(doc))
    creds = credentials(path, tmp_path / "out")
    assert (creds.token, creds.cert, creds.key) == ("eyJhbGciOi.abc.def", None, None)
    (tmp_path / "sa-token").write_text("eyJ.from.file\n")
    doc["users"][0]["user"] = {"tokenFile": "sa-token"}
    path.write_text(yaml.safe_dump(doc))
    assert credentials(path, tmp_path / "out").token == "eyJ.from.file"  # noqa: S105 - a test token


def test_relative_file_paths_are_read_from_the_kubeconfigs_directory(tmp_path: Path) -> None:
    """kubeadm-style files named relative to the kubeconfig resolve as kubectl resolves them,
    not against the test's working directory."""
    for name in ("ca.crt", "admin.crt", "admin.key"):
        (tmp_path / name).write_text(name)
    doc = copy.deepcopy(KIND)
    doc["clusters"][0]["cluster"] = {"server": "https://h:6443", "certificate-authority": "ca.crt"}
    doc["users"][0]["user"] = {"client-certificate": "admin.crt", "client-key": "admin.key"}
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(doc))
    creds = credentials(path, tmp_path / "out")
    assert (creds.ca, creds.cert, creds.key) == (
        tmp_path / "ca.crt",
        tmp_path / "admin.crt",
        tmp_path / "admin.key",
    )


def test_a_named_context_is_used_instead_of_the_current_one(tmp_path: Path) -> None:
    """A kubeconfig holding several clusters: the context asked for wins."""
    doc = copy.deepcopy(KIND)
    doc["current-context"] = "elsewhere"
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(doc))
    assert credentials(path, tmp_path / "out", context="kind-aim").server.endswith(":40123")


CERT = {"client-certificate-data": b64("CERT PEM")}


def edit(change: Callable[[dict[str, Any]], None]) -> str:
    doc = copy.deepcopy(KIND)
    change(doc)
    return yaml.safe_dump(doc)


@dataclass(frozen=True)
class Bad:
    id: str
    reason: str
    text: str
    says: str


BAD = [
    Bad(
        "exec",
        "an exec plugin (EKS, GKE) cannot be run by the tier's client: say so and point at what "
        "works, rather than failing later with a 401",
        edit(lambda d: d["users"][0]["user"].update(exec={"command": "aws"})),
        "user.exec is set: the client authenticates with a client certificate or a bearer token",
    ),
    Bad(
        "token-with-newline",
        "a token with a line break would split the Authorization header: refused",
        edit(lambda d: d["users"][0].update(user={"token": "abc\nX-Evil: 1"})),
        "user.token holds whitespace or control characters",
    ),
    Bad(
        "token-not-a-string",
        "a token of the wrong type names the field",
        edit(lambda d: d["users"][0].update(user={"token": 12})),
        "user.token is not a token",
    ),
    Bad(
        "token-file-missing",
        "a tokenFile that cannot be read names the file",
        edit(lambda d: d["users"][0].update(user={"tokenFile": "/nonexistent/token"})),
        "user.tokenFile names /nonexistent/token",
    ),
    Bad(
        "no-current-context",
        "an empty current context must say how to set one",
        edit(lambda d: d.pop("current-context")),
        "current-context is empty; set it with `kubectl config use-context`",
    ),
    Bad(
        "unknown-cluster",
        "a context naming a cluster that is not listed names the list and the name",
        edit(lambda d: d["contexts"][0]["context"].update(cluster="gone")),
        "clusters has no entry named 'gone'",
    ),
    Bad(
        "plain-http",
        "an http server would send the client's credentials in the clear",
        edit(lambda d: d["clusters"][0]["cluster"].update(server="http://127.0.0.1:8080")),
        "cluster.server is 'http://127.0.0.1:8080'; the client speaks https only",
    ),
    Bad(
        "skip-verify",
        "skipping TLS verification is refused: the cluster's CA must be given",
        edit(lambda d: d["clusters"][0]["cluster"].update({"insecure-skip-tls-verify": True})),
        "insecure-skip-tls-verify is set",
    ),
    Bad(
        "bad-base64",
        "embedded data that is not base64 names its field",
        edit(lambda d: d["users"][0]["user"].update({"client-key-data": "not base64!"})),
        "client-key-data is not base64",
    ),
    Bad(
        "missing-key",
        "a user without a key names both ways to give one",
        edit(lambda d: d["users"][0]["user"].pop("client-key-data")),
        "client-key is missing: give client-key or client-key-data",
    ),
    Bad(
        "missing-file",
        "a file path that does not exist names the resolved path",
        edit(lambda d: d["users"][0].update(user={**CERT, "client-key": "/nonexistent/key"})),
        "client-key names /nonexistent/key, which is not a file",
    ),
    Bad("not-a-mapping", "a list is not a kubeconfig", "- a\n- b\n", "is not a mapping"),
    Bad("not-yaml", "unparseable text names the file", "a: [b\n", "is not YAML"),
    Bad(
        "huge",
        "a huge file is refused before it is parsed",
        "a: " + "x" * MAX_BYTES,
        "a kubeconfig is at most",
    ),
]


@table(BAD)
def test_an_unusable_kubeconfig_names_the_field_and_the_fix(case: Bad, tmp_path: Path) -> None:
    """Every refusal names the file and what in it is wrong."""
    path = tmp_path / "config"
    path.write_text(case.text)
    with pytest.raises(KubeconfigError) as raised:
        credentials(path, tmp_path / "out")
    assert str(raised.value).startswith(f"kubeconfig {path}:")
    assert case.says in str(raised.value)
