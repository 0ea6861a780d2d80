"""A real control plane on loopback, every component a host process: the end-to-end tier's cluster.

    etcd → kube-apiserver (own PKI, RBAC, Pod Security, an audit log)
         → kube-controller-manager (garbage collector, namespaces, Jobs, ClusterRole aggregation,
           claim protection)
         → Crossplane core (`core init`, then `core start` with the Function runtime External)
           and its RBAC manager → function-aim over mTLS

There is no kubelet and no scheduler: Pods are created (by the real Job controller) but never
run; tests play the kubelet and other missing controllers through named helpers (tests/e2e).

Crossplane core talks to the API server as the user `crossplane` with only the rights the RBAC
manager and package/rbac grant it, the way the Helm chart runs it. Each component's output goes
to `<root>/logs/<name>.log`; a component that does not become ready fails the start with its
name and the end of its log. Everything started is stopped on the way out, failure or not.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.kube import Credentials, Kube, KubeError, condition, wait_for
from devtools.cluster.pki import Pki, make_pki
from devtools.tools import ROOT, HarnessError, Tools, free_port, port_open

CROSSPLANE_NAMESPACE: Final = "crossplane-system"
CROSSPLANE_USER: Final = "crossplane"
# The Crossplane Helm chart's ClusterRole for core; the RBAC manager and package/rbac aggregate
# into it.
CORE_ROLE_TEMPLATE: Final = Path("cluster/charts/crossplane/templates/clusterrole.yaml")
CONTROLLERS: Final = (
    "garbage-collector-controller",
    "namespace-controller",
    "job-controller",
    "clusterrole-aggregation-controller",
    # The API server puts a protection finalizer on every claim; without this controller to
    # lift it once no running Pod mounts the claim, a deleted cache's PVC would never go.
    "persistentvolumeclaim-protection-controller",
)
# Job and Pod writes are audited at Metadata level: that is where Pod Security records what a
# `warn` or `audit` label found (annotation pod-security.kubernetes.io/audit-violations).
AUDIT_POLICY: Final = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {
            "level": "Metadata",
            "verbs": ["create", "update", "patch"],
            "resources": [
                {"group": "batch", "resources": ["jobs"]},
                {"group": "", "resources": ["pods", "pods/status"]},  # status: the kubelet's
            ],
        },
        {"level": "None"},
    ],
}


FUNCTION_MODULE: Final = "function.server.main"
"""What the plane runs as function-aim on the host."""


class ComponentFailedError(HarnessError):
    """A component exited or did not become ready; the message names it and shows its log."""


SERVICE_RANGE: Final = "10.96.0.0/24"
KUBERNETES_SERVICE_IP: Final = "10.96.0.1"
ALL_ADDRESSES: Final = "0.0.0.0"  # noqa: S104 - a node's plane: pods reach it on the node's IP
"""The `kubernetes` Service's address: the first of the range, as the API server allocates it."""


@dataclass
class Component:
    """One host process of the control plane."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 25) -> str:
        """The end of the component's log."""
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        """SIGTERM the process group, then SIGKILL what is left after 10 s."""
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=10)


@dataclass
class Supervisor:
    """Starts components, waits for them, and stops them in reverse order."""

    logs: Path
    components: list[Component] = field(default_factory=list)

    def start(
        self, name: str, cmd: Sequence[str | Path], env: Mapping[str, str] | None = None
    ) -> Component:
        """Start a component with its output in its own log file."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{name}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [str(c) for c in cmd],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **(env or {})},
                cwd=ROOT,
                start_new_session=True,  # its own process group, so stop() reaches children too
            )
        component = Component(name, popen, log)
        self.components.append(component)
        return component

    def wait_ready(
        self, component: Component, probe: Callable[[], bool], timeout_s: float = 60.0
    ) -> float:
        """Wait until `probe` holds; return the seconds it took. Fail fast if the process exits."""
        t0 = time.monotonic()
        while not _safe(probe):
            code = component.popen.poll()
            if code is not None:
                msg = f"{component.name} exited with code {code} before it was ready"
                raise ComponentFailedError(_with_log(msg, component))
            if time.monotonic() - t0 > timeout_s:
                msg = f"{component.name} was not ready after {timeout_s:.0f}s"
                raise ComponentFailedError(_with_log(msg, component))
            time.sleep(0.2)
        return time.monotonic() - t0

    def check(self) -> None:
        """Fail naming any component that has exited since it started."""
        for c in self.components:
            code = c.popen.poll()
            if code is not None:
                raise ComponentFailedError(_with_log(f"{c.name} exited with code {code}", c))

    def retire(self, name: str) -> None:
        """Stop one component for good: it is no longer watched or restarted."""
        for c in [c for c in self.components if c.name == name]:
            c.stop()
            self.components.remove(c)

    def stop_all(self) -> None:
        """Stop every component, newest first."""
        for c in reversed(self.components):
            c.stop()


@dataclass(frozen=True)
class ControlPlane:
    """A running control plane: an admin client, files, and where the function listens."""

    root: Path
    pki: Pki
    admin: Kube
    kubeconfig: Path  # admin
    function_endpoint: str
    audit_log: Path
    supervisor: Supervisor
    startup_s: dict[str, float]

    def retire_rbac_manager(self) -> None:
        """Stop the RBAC manager once the packages are installed.

        What it granted (core's rights over every XRD's kinds) stays in the API server, and it
        has nothing more to do unless XRDs change. It must go because its metrics listener has a
        fixed address (`:8080`, no flag in core v2.4), so a second control plane on the same host
        (the claims flavour's, beside this one) could not start its own.
        """
        self.supervisor.retire("crossplane-rbac-manager")

    def component(self, name: str) -> Component:
        """A component by name (for its log)."""
        return next(c for c in self.supervisor.components if c.name == name)

    def audit_events(self) -> list[dict[str, Any]]:
        """The audit log so far, parsed."""
        try:
            lines = self.audit_log.read_text().splitlines()
        except FileNotFoundError:
            return []
        events = []
        for line in lines:
            with contextlib.suppress(json.JSONDecodeError):  # a line still being written
                events.append(json.loads(line))
        return events


def _safe(probe: Callable[[], bool]) -> bool:
    try:
        return probe()
    except (OSError, KubeError, http.client.HTTPException):
        return False


def _with_log(msg: str, component: Component) -> str:
    return f"{msg}; the end of {component.log}:\n{component.tail()}"


def http_ok(url: str, *, tls: bool = False) -> bool:
    """True when GET `url` answers 200 (HTTPS without verifying: components' own certificates)."""
    host, _, rest = url.partition("://")[2].partition(":")
    port, _, path = rest.partition("/")
    conn: http.client.HTTPConnection
    if tls:
        # kube-controller-manager serves /healthz with a self-signed certificate of its own.
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=2)
    else:
        conn = http.client.HTTPConnection(host, int(port), timeout=2)
    try:
        conn.request("GET", f"/{path}")
        return conn.getresponse().status == 200  # noqa: PLR2004
    finally:
        conn.close()


def core_role(tools: Tools) -> list[dict[str, Any]]:
    """Crossplane's own ClusterRoles for core, from the Helm chart of the pinned release.

    The chart template is rendered with the defaults (RBAC manager deployed): an aggregating
    ClusterRole `crossplane`, and the system rules aggregated into it.
    """
    text = (tools.crossplane_src / CORE_ROLE_TEMPLATE).read_text()
    text = text.replace('{{ template "crossplane.name" . }}', "crossplane")
    lines = [ln for ln in text.splitlines() if not re.match(r"\s*\{\{-?\s*(include|if|end)", ln)]
    return [d for d in yaml.safe_load_all("\n".join(lines)) if d]


def _crossplane_init(sup: Supervisor, tools: Tools, kubeconfig: Path) -> None:
    """`crossplane core init`: core's CRDs, the package Lock and TLS secrets.

    init applies the CRDs and then the Lock in one go, and the Lock's kind may not be served yet
    when it gets there; init is idempotent, so a failed run is simply repeated (three at most).
    """
    for attempt in range(1, 4):
        init = sup.start(
            f"crossplane-init-{attempt}",
            [
                tools.core, "core", "init", f"--cr-ds-path={tools.crossplane_src / 'cluster/crds'}",
                f"--namespace={CROSSPLANE_NAMESPACE}",
                # Secrets init fills for the Deployment runtime's TLS; unused with External.
                "--tlsca-secret-name=crossplane-root-ca",
                "--tls-client-secret-name=crossplane-tls-client",
            ],
            # No webhooks: nothing could call back into a host process through a Service.
            env={"KUBECONFIG": str(kubeconfig), "ENABLE_WEBHOOKS": "false"},
        )  # fmt: skip
        try:
            code = init.popen.wait(timeout=120)
        except subprocess.TimeoutExpired:
            code = None
        else:
            sup.components.remove(init)  # a one-shot: its exit is not a failure of the plane
        if code == 0:
            return
        if attempt == 3:  # noqa: PLR2004
            raise ComponentFailedError(_with_log(f"crossplane core init ended with {code}", init))
        time.sleep(2)


def _core_binding() -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "crossplane"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "crossplane",
        },
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": CROSSPLANE_USER}
        ],
    }


@dataclass(frozen=True)
class _Plane:
    """What the bring-up steps share."""

    tools: Tools
    root: Path
    sup: Supervisor
    pki: Pki
    times: dict[str, float]
    advertise: str = "127.0.0.1"
    """Where the `kubernetes` Service sends pods: the node's address when pods run here."""


def _start_etcd(p: _Plane) -> str:
    client, peer = free_port(), free_port()
    etcd = p.sup.start(
        "etcd",
        [
            p.tools.etcd,
            f"--data-dir={p.root / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{client}",
            f"--advertise-client-urls=http://127.0.0.1:{client}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=default=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync",  # throwaway data: durability only costs time
            "--log-level=warn",
        ],
    )
    url = f"http://127.0.0.1:{client}"
    p.times["etcd"] = p.sup.wait_ready(etcd, lambda: http_ok(f"{url}/health"))
    return url


def _start_apiserver(p: _Plane, etcd: str) -> Kube:
    port = free_port()
    policy = p.root / "audit-policy.yaml"
    policy.write_text(yaml.safe_dump(AUDIT_POLICY))
    pki = p.pki
    apiserver = p.sup.start(
        "kube-apiserver",
        [
            p.tools.kube_apiserver,
            f"--etcd-servers={etcd}",
            # A plane for a node listens on the node's address too, so that pods reach it
            # through the `kubernetes` Service, as on any cluster.
            f"--bind-address={'127.0.0.1' if p.advertise == '127.0.0.1' else ALL_ADDRESSES}",
            f"--advertise-address={p.advertise}",
            f"--secure-port={port}",
            f"--tls-cert-file={pki.apiserver.cert}",
            f"--tls-private-key-file={pki.apiserver.key}",
            f"--client-ca-file={pki.ca.cert}",
            "--authorization-mode=RBAC",
            f"--service-account-issuer=https://127.0.0.1:{port}",
            f"--service-account-key-file={pki.sa_public}",
            f"--service-account-signing-key-file={pki.sa_private}",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            # No ServiceAccount admission: there is no token controller to make accounts.
            "--disable-admission-plugins=ServiceAccount",
            # As on a real cluster: privileged Pods are a matter for Pod Security, not a flag.
            "--allow-privileged=true",
            f"--audit-policy-file={policy}",
            f"--audit-log-path={p.root / 'audit.log'}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
            # The aggregation layer, as kubeadm sets it up: extension API servers (KEDA's
            # metrics adapter, for the HPA controller's external metrics) trust the
            # front-proxy CA's client certificate and the user it names in these headers.
            f"--requestheader-client-ca-file={pki.front_proxy_ca.cert}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki.front_proxy.cert}",
            f"--proxy-client-key-file={pki.front_proxy.key}",
        ],
    )
    server = f"https://127.0.0.1:{port}"
    admin = Kube(Credentials(server, pki.ca.cert, pki.admin.cert, pki.admin.key))
    p.times["kube-apiserver"] = p.sup.wait_ready(apiserver, admin.ready, timeout_s=90)
    return admin


def _start_controller_manager(p: _Plane, kubeconfig: Path, extra: Sequence[str]) -> None:
    port = free_port()
    kcm = p.sup.start(
        "kube-controller-manager",
        [
            p.tools.kube_controller_manager,
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--controllers={','.join((*CONTROLLERS, *extra))}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={p.root / 'kcm'}",
            f"--root-ca-file={p.pki.ca.cert}",
            # Where the HPA controller runs (a node's plane), it reads metrics every 5 s rather
            # than 15 s, so that tests watching it scale wait less.
            "--horizontal-pod-autoscaler-sync-period=5s",
        ],
    )
    p.times["kube-controller-manager"] = p.sup.wait_ready(
        kcm, lambda: http_ok(f"https://127.0.0.1:{port}/healthz", tls=True)
    )


def _client_certificates(admin: Kube, root: Path) -> Path:
    """Core's client certificate from `core init` (secret `crossplane-tls-client`).

    The Helm chart mounts it for core: functions run by the Deployment runtime trust its CA.
    """
    secret = wait_for(
        "core init's client certificate",
        lambda: admin.get("v1", "Secret", "crossplane-tls-client", CROSSPLANE_NAMESPACE),
    )
    directory = root / "core-tls-client"
    directory.mkdir(exist_ok=True)
    for key in ("tls.crt", "tls.key", "ca.crt"):
        (directory / key).write_bytes(base64.b64decode(secret["data"][key]))
    return directory


def _start_crossplane(
    p: _Plane, admin: Kube, kubeconfig: Path, *, deployment_runtime: bool, args: Sequence[str]
) -> None:
    t0 = time.monotonic()
    admin.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CROSSPLANE_NAMESPACE}}
    )
    _crossplane_init(p.sup, p.tools, kubeconfig)
    admin.apply_all(core_role(p.tools))
    admin.apply(_core_binding())
    p.times["crossplane-init"] = time.monotonic() - t0

    # The RBAC manager gives core the rights over each XRD's kinds; it runs as admin, as its
    # own ClusterRole would allow.
    p.sup.start(
        "crossplane-rbac-manager",
        [p.tools.core, "rbac", "start", "--poll-interval=5s"],
        env={"KUBECONFIG": str(kubeconfig), "POD_NAMESPACE": CROSSPLANE_NAMESPACE},
    )
    xp = Credentials(
        admin.credentials.server, p.pki.ca.cert, p.pki.crossplane.cert, p.pki.crossplane.key
    )
    xp_kubeconfig = p.root / "crossplane.kubeconfig"
    xp_kubeconfig.write_text(xp.kubeconfig(CROSSPLANE_USER))
    (p.root / "xpkg-cache").mkdir(exist_ok=True)
    health = free_port()
    runtime = [] if deployment_runtime else ["--package-runtime=Function=External"]
    if deployment_runtime:
        # The runtime copies core's own ServiceAccount's pull secrets to each function's.
        admin.apply(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "crossplane", "namespace": CROSSPLANE_NAMESPACE},
            }
        )
    client_certificates = (
        _client_certificates(admin, p.root) if deployment_runtime else p.pki.core_client_dir
    )
    core = p.sup.start(
        "crossplane",
        [
            p.tools.core,
            "core",
            "start",
            "--debug",
            *runtime,
            f"--xpkg-cache-dir={p.root / 'xpkg-cache'}",
            f"--metrics-port={free_port()}",
            f"--health-probe-port={health}",
            "--poll-interval=5s",
            *args,
        ],
        env={
            "KUBECONFIG": str(xp_kubeconfig),
            "POD_NAMESPACE": CROSSPLANE_NAMESPACE,
            "TLS_CLIENT_CERTS_DIR": str(client_certificates),
            "ENABLE_WEBHOOKS": "false",
        },
    )
    p.times["crossplane"] = p.sup.wait_ready(
        core, lambda: http_ok(f"http://127.0.0.1:{health}/readyz"), timeout_s=90
    )
    p.sup.check()  # the RBAC manager has had as long as core to fail


def _start_function(p: _Plane, args: Sequence[str], module: str) -> str:
    port = free_port()
    fn = p.sup.start(
        "function-aim",
        [
            sys.executable,
            "-m",
            module,
            "--debug",
            f"--address=127.0.0.1:{port}",
            f"--tls-certs-dir={p.pki.function_dir}",  # mTLS, as Crossplane always dials
            *args,
        ],
    )
    p.times["function-aim"] = p.sup.wait_ready(fn, lambda: port_open(port))
    return f"127.0.0.1:{port}"


def node_ip() -> str:
    """The host's first global IPv4 address: the kubelet refuses a loopback node IP."""
    out = subprocess.run(
        ["ip", "-j", "-4", "addr", "show", "scope", "global"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for link in json.loads(out):
        for addr in link.get("addr_info", []):
            if addr.get("family") == "inet":
                return str(addr["local"])
    msg = "this host has no global IPv4 address; the kubelet refuses a loopback node IP"
    raise HarnessError(msg)


@contextlib.contextmanager
def start_control_plane(  # noqa: PLR0913 - the plane's parts a caller may choose
    tools: Tools,
    root: Path,
    *,
    function_args: Sequence[str] = (),
    extra_controllers: Sequence[str] = (),
    deployment_runtime: bool = False,
    function_module: str = FUNCTION_MODULE,
    core_args: Sequence[str] = (),
) -> Iterator[ControlPlane]:
    """Start everything under `root`; stop it all on exit, however the caller leaves.

    `extra_controllers`: kube-controller-manager's controllers besides `CONTROLLERS` (a plane
    with a real node needs those in `devtools.cluster.node.NODE_CONTROLLERS`). Such a plane is for a
    node: its API server also listens on the node's address and advertises it, with that address
    and the `kubernetes` Service's in its certificate, so pods reach it as on a cluster. With
    `deployment_runtime`, Crossplane runs functions as it does on a cluster (a Deployment and a
    Service, with TLS from `core init`'s CA; a node must run them) and no function is started on
    the host (`function_endpoint` is empty). Otherwise `function_module` is run on the host as
    the function (a benchmark may serve its own program there). `core_args` are more flags for
    Crossplane core (a benchmark's circuit breaker settings, say).
    """
    sup = Supervisor(root / "logs")
    times: dict[str, float] = {}
    try:
        t0 = time.monotonic()
        advertise = node_ip() if extra_controllers else "127.0.0.1"
        pki = make_pki(root / "pki", apiserver_ips=(advertise, KUBERNETES_SERVICE_IP))
        plane = _Plane(tools, root, sup, pki, times, advertise)
        times["pki"] = time.monotonic() - t0
        admin = _start_apiserver(plane, _start_etcd(plane))
        kubeconfig = root / "admin.kubeconfig"
        kubeconfig.write_text(admin.credentials.kubeconfig("admin"))
        _start_controller_manager(plane, kubeconfig, extra_controllers)
        _start_crossplane(
            plane, admin, kubeconfig, deployment_runtime=deployment_runtime, args=core_args
        )
        endpoint = (
            "" if deployment_runtime else _start_function(plane, function_args, function_module)
        )
        yield ControlPlane(
            root=root,
            pki=plane.pki,
            admin=admin,
            kubeconfig=kubeconfig,
            function_endpoint=endpoint,
            audit_log=root / "audit.log",
            supervisor=sup,
            startup_s=times,
        )
    finally:
        sup.stop_all()


def wait_established(admin: Kube, crd: str, timeout_s: float = 60.0) -> None:
    """Wait until a CRD is Established."""

    def established() -> bool:
        obj = admin.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd)
        return (condition(obj, "Established") or {}).get("status") == "True"

    wait_for(f"CRD {crd} Established", established, timeout_s=timeout_s)
