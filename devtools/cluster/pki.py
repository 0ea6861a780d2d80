"""A throwaway PKI for the end-to-end control plane, made with the openssl command.

One CA signs every certificate: the API server's serving certificate, client certificates (an
admin in system:masters, and a plain `crossplane` user whose rights come from RBAC alone), and
the function's gRPC server certificate with the client certificate Crossplane presents to it.
A second CA signs only the client certificate the API server's aggregation layer presents to
extension API servers (KEDA's metrics adapter), as kubeadm's front-proxy CA does.
Keys are P-256, which every party here (Go, Python's ssl, gRPC) accepts and openssl makes fast.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from devtools.tools import HarnessError

LOOPBACK_SANS = "subjectAltName=IP:127.0.0.1,DNS:localhost"


@dataclass(frozen=True)
class Pair:
    """A certificate and its key."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    """Every file the control plane needs."""

    ca: Pair
    apiserver: Pair
    admin: Pair
    crossplane: Pair  # the identity Crossplane core talks to the API server with
    front_proxy_ca: Pair  # trusted for request headers only (--requestheader-client-ca-file)
    front_proxy: Pair  # the aggregator's client certificate (--proxy-client-cert-file)
    sa_public: Path
    sa_private: Path
    function_dir: Path  # tls.crt, tls.key, ca.crt: the function's gRPC server (SDK layout)
    core_client_dir: Path  # tls.crt, tls.key, ca.crt: core's gRPC client (TLS_CLIENT_CERTS_DIR)


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        msg = f"openssl {args[0]} failed: {proc.stderr.strip()}"
        raise HarnessError(msg)


def _ec_key(path: Path) -> None:
    _openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path),
        cwd=path.parent,
    )  # fmt: skip


def _sign(root: Path, ca: Pair, name: str, subject: str, extensions: str) -> Pair:
    pair = Pair(root / f"{name}.crt", root / f"{name}.key")
    _ec_key(pair.key)
    csr = root / f"{name}.csr"
    ext = root / f"{name}.ext"
    ext.write_text(extensions.replace(";", "\n") + "\n")
    _openssl("req", "-new", "-key", str(pair.key), "-subj", subject, "-out", str(csr), cwd=root)
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca.cert), "-CAkey", str(ca.key),
        "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(pair.cert),
        cwd=root,
    )  # fmt: skip
    return pair


def _bundle(directory: Path, ca: Pair, pair: Pair) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(pair.cert, directory / "tls.crt")
    shutil.copy(pair.key, directory / "tls.key")
    shutil.copy(ca.cert, directory / "ca.crt")
    return directory


def loopback_server(
    root: Path,
    ca: Pair,
    name: str,
    *,
    sans: Sequence[str] = (),
    client: bool = False,
) -> Pair:
    """A serving certificate for a host process on loopback (e.g. a webhook), signed by `ca`.

    `sans` are further names it answers to, as openssl writes them (`DNS:<a Service's name>`,
    `IP:<the node's address>`); with `client` it is a client certificate too (for a process
    that is both ends of mTLS).
    """
    root.mkdir(parents=True, exist_ok=True)
    names = ",".join((LOOPBACK_SANS, *sans))
    usage = "serverAuth,clientAuth" if client else "serverAuth"
    return _sign(root, ca, name, f"/CN={name}", f"{names};extendedKeyUsage={usage}")


def _ca(root: Path, name: str, subject: str) -> Pair:
    ca = Pair(root / f"{name}.crt", root / f"{name}.key")
    _ec_key(ca.key)
    _openssl(
        "req", "-x509", "-new", "-key", str(ca.key), "-subj", subject, "-days", "2",
        "-out", str(ca.cert), cwd=root,
    )  # fmt: skip
    return ca


def make_pki(root: Path, *, apiserver_ips: Sequence[str] = ()) -> Pki:
    """Create the CA and every certificate under `root`.

    The API server's certificate is for loopback and `apiserver_ips` (the addresses pods use).
    """
    if shutil.which("openssl") is None:
        msg = "the openssl command is not on PATH (Debian package openssl)"
        raise HarnessError(msg)
    root.mkdir(parents=True, exist_ok=True)
    ca = _ca(root, "ca", "/CN=aim-e2e-ca")
    server = f"{LOOPBACK_SANS};extendedKeyUsage=serverAuth"
    client = "extendedKeyUsage=clientAuth"
    extra = "".join(f",IP:{ip}" for ip in apiserver_ips if ip != "127.0.0.1")
    apiserver = _sign(
        root,
        ca,
        "apiserver",
        "/CN=kube-apiserver",
        server.replace(LOOPBACK_SANS, LOOPBACK_SANS + extra),
    )
    admin = _sign(root, ca, "admin", "/O=system:masters/CN=aim-e2e-admin", client)
    crossplane = _sign(root, ca, "crossplane", "/CN=crossplane", client)
    fn = _sign(root, ca, "function", "/CN=function-aim", server)
    core = _sign(root, ca, "core-grpc", "/CN=crossplane", client)
    front_proxy_ca = _ca(root, "front-proxy-ca", "/CN=aim-e2e-front-proxy-ca")
    front_proxy = _sign(
        root, front_proxy_ca, "front-proxy-client", "/CN=front-proxy-client", client
    )
    # Service-account tokens are signed with RSA, the algorithm every API server version takes.
    sa_private, sa_public = root / "sa.key", root / "sa.pub"
    _openssl("genrsa", "-out", str(sa_private), "2048", cwd=root)
    _openssl("rsa", "-in", str(sa_private), "-pubout", "-out", str(sa_public), cwd=root)
    return Pki(
        ca=ca,
        apiserver=apiserver,
        admin=admin,
        crossplane=crossplane,
        front_proxy_ca=front_proxy_ca,
        front_proxy=front_proxy,
        sa_public=sa_public,
        sa_private=sa_private,
        function_dir=_bundle(root / "function", ca, fn),
        core_client_dir=_bundle(root / "core-client", ca, core),
    )
