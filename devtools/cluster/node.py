"""A real node for the end-to-end control plane: pods run, as host processes and no Docker.

    containerd (its own config, socket and state under the run's directory; runc; CNI bridge)
      ← kubelet (cgroupfs, the settings this host needs) → the control plane's API server
    kube-scheduler, kube-proxy (iptables), and the pause program as the sandbox image

Every piece is the real component: pods are scheduled, their images unpacked, their containers
run by runc in a network namespace of the bridge, their status written by the kubelet; Services
reach them through kube-proxy, and host processes reach Services by name (`ServiceHosts`). What
the node changes on the host is put back when it stops: containers and their shims, mounts,
network namespaces, the bridge, the iptables chains kube-proxy, the kubelet and the node made,
the kubelet's cgroups, the sysctls it and the bridge plugin set, and /etc/hosts. Where this host
cannot do something, docs/e2e.md says so.

The kubelet authenticates as the control plane's admin (there is no bootstrap token flow or
Node authorizer here); its API is served on loopback only, so `kubectl logs` and `exec` do not
work, and `Node.pod_log` reads the kubelet's log files instead.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.controlplane import (
    SERVICE_RANGE,
    ControlPlane,
    Supervisor,
    http_ok,
    node_ip,
)
from devtools.cluster.kube import Kube, KubeError, wait_for
from devtools.cluster.oci import File, Image, write_archive
from devtools.tools import HarnessError, Tools, free_port

NODE_NAME: Final = "aim-node"
# kube-controller-manager's controllers a plane with a node needs besides its own: Ready nodes
# lose the not-ready taint the kubelet registers them with; claims bind to volumes; Services get
# endpoints for kube-proxy; Deployments get ReplicaSets and Pods.
NODE_CONTROLLERS: Final = (
    "node-lifecycle-controller",
    "persistentvolume-binder-controller",
    "endpointslice-controller",
    # The API server's service proxy still reads a Service's v1 Endpoints.
    "endpoints-controller",
    "deployment-controller",
    "replicaset-controller",
    # KServe's HPA class: the counts in an HPA's status (no metrics-server runs, so it scales
    # nothing on CPU, but it reports the replicas it finds); and KEDA's HPAs, which it scales on
    # the external metrics KEDA's adapter serves, where a test runs KEDA.
    "horizontal-pod-autoscaler-controller",
    # `kube-root-ca.crt` in every namespace, which projected service account tokens mount to
    # trust the API server (a download's progress sidecar).
    "root-ca-certificate-publisher-controller",
)
PAUSE_IMAGE: Final = "aim.local/pause:1"
POD_SUBNET: Final = "10.244.0.0/24"
BRIDGE: Final = "aim0"
# What the kubelet and the bridge plugin set on the host; put back on the way out.
SYSCTLS: Final = (
    "vm/overcommit_memory",
    "kernel/panic",
    "kernel/panic_on_oops",
    "net/ipv4/ip_forward",
)
# Paths the kubelet uses whatever its root directory is.
HARD_CODED: Final = (Path("/var/lib/kubelet"), Path("/var/log/containers"))
CGROUPS: Final = Path("/sys/fs/cgroup")
# The node's own chain (see `_hold_service_range`), and the prefixes of the chains a node leaves
# behind for `HostState.restore` to remove.
UNROUTED: Final = "AIM-E2E-UNROUTED"
CHAIN_PREFIXES: Final = (":KUBE-", f":{UNROUTED}")


class NodeError(HarnessError):
    """The node could not start, or what it ran did not behave."""


@dataclass(frozen=True)
class Node:
    """A started node: its name and address, and how to reach its container runtime."""

    name: str
    ip: str
    root: Path
    containerd_socket: Path
    supervisor: Supervisor

    def ctr(self, *args: str) -> str:
        """Run `ctr` against this node's containerd, in the kubelet's namespace."""
        proc = subprocess.run(
            ["ctr", "--address", str(self.containerd_socket), "--namespace", "k8s.io", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if proc.returncode != 0:
            msg = f"ctr {' '.join(args)} failed: {proc.stderr.strip()}"
            raise NodeError(msg)
        return proc.stdout

    def load(self, image: Image) -> None:
        """Make `image` available to pods without a registry (their pull policy must allow it)."""
        archive = self.root / "images" / (image.name.replace("/", "_").replace(":", "_") + ".tar")
        archive.parent.mkdir(parents=True, exist_ok=True)
        write_archive(image, archive)
        self.ctr("images", "import", str(archive))

    def import_archive(self, archive: Path) -> None:
        """Import an image archive (OCI or docker-archive) built elsewhere."""
        self.ctr("images", "import", str(archive))

    def pod_log(self, namespace: str, pod: str, container: str) -> str:
        """What a container of a pod wrote, read from the kubelet's log files."""
        logs = sorted((self.root / "pod-logs").glob(f"{namespace}_{pod}_*/{container}/*.log"))
        return "".join(_cri_line(line) for log in logs for line in log.read_text().splitlines())


def _cri_line(line: str) -> str:
    # CRI log lines: `<time> <stream> <P|F> <text>`; a partial line continues on the next.
    parts = line.split(" ", 3)
    text = parts[3] if len(parts) == 4 else ""  # noqa: PLR2004
    return text if len(parts) > 2 and parts[2] == "P" else text + "\n"  # noqa: PLR2004


@dataclass(frozen=True)
class HostState:
    """What the node may change on the host, as found before it started."""

    sysctls: dict[str, str]
    netns: set[str]
    missing: tuple[Path, ...]
    cgroups: set[Path]
    chains: set[tuple[str, str, str]]

    @staticmethod
    def read() -> HostState:
        """The host as it is now."""
        return HostState(
            sysctls={k: (Path("/proc/sys") / k).read_text().strip() for k in SYSCTLS},
            netns=_netns(),
            missing=tuple(p for p in HARD_CODED if not p.exists()),
            cgroups=set(CGROUPS.glob("*/kubepods*")),
            chains=_node_chains(),
        )

    def restore(self) -> None:
        """Undo what a node changed since `read`."""
        _remove_chains(_node_chains() - self.chains)
        for ns in _netns() - self.netns:
            subprocess.run(["ip", "netns", "delete", ns], check=False, capture_output=True)
        subprocess.run(["ip", "link", "delete", BRIDGE], check=False, capture_output=True)
        for cgroup in set(CGROUPS.glob("*/kubepods*")) - self.cgroups:
            _remove_cgroup(cgroup)
        for key, value in self.sysctls.items():
            with contextlib.suppress(OSError):
                (Path("/proc/sys") / key).write_text(value)
        for path in self.missing:
            shutil.rmtree(path, ignore_errors=True)


def _iptables_save(binary: str) -> list[tuple[str, str]]:
    """(table, line) for every line `<binary>-save` prints."""
    out = subprocess.run([f"{binary}-save"], capture_output=True, text=True, check=False).stdout
    table, lines = "", []
    for line in out.splitlines():
        if line.startswith("*"):
            table = line[1:]
        lines.append((table, line))
    return lines


def _node_chains() -> set[tuple[str, str, str]]:
    """(binary, table, chain) of every chain a node makes: KUBE-* and its own."""
    return {
        (binary, table, line.split()[0][1:])
        for binary in ("iptables", "ip6tables")
        for table, line in _iptables_save(binary)
        if line.startswith(CHAIN_PREFIXES)
    }


def _hold_service_range() -> None:
    """Refuse a connection to a ClusterIP that kube-proxy has not translated yet.

    In a cluster such a packet leaves by the default route and is lost, so the client's dial
    fails and it tries again. This host's default route ends at a transparent proxy that answers
    anything on port 80 with its own 404: a host process dialling a Service in the moment
    between its endpoint turning ready and kube-proxy's next sync (the KEDA HTTP add-on's
    interceptor forwarding the request that woke a pod) would take that 404 for the server's
    answer. A reset instead makes the dial fail, as it would in a cluster, and the client's retry
    reaches the pod. The filter table sees a packet after the nat table's DNAT, so a translated
    connection passes.
    """
    untranslated = f"-d {SERVICE_RANGE} -p tcp -m conntrack ! --ctstate DNAT"
    rules = [
        f"-N {UNROUTED}",
        f"-A {UNROUTED} {untranslated} -j REJECT --reject-with tcp-reset",
        f"-I OUTPUT 1 -m conntrack --ctstate NEW -j {UNROUTED}",
    ]
    for rule in rules:
        proc = subprocess.run(
            ["iptables", *rule.split()], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            msg = f"iptables {rule} failed: {proc.stderr.strip()}"
            raise NodeError(msg)


def _remove_chains(chains: set[tuple[str, str, str]]) -> None:
    """Delete the rules that jump to `chains`, then the chains.

    kube-proxy --cleanup leaves the kubelet's, and its KUBE-FIREWALL drops traffic to loopback
    that comes from elsewhere.
    """
    by_table: dict[tuple[str, str], set[str]] = {}
    for binary, table, chain in chains:
        by_table.setdefault((binary, table), set()).add(chain)
    for (binary, table), own in by_table.items():
        for line_table, line in _iptables_save(binary):
            words = shlex.split(line) if line.startswith("-A ") else []
            jump = words[words.index("-j") + 1] if "-j" in words[:-1] else ""
            if line_table == table and jump in own and words[1] not in own:
                subprocess.run(
                    [binary, "-t", table, "-D", *words[1:]], capture_output=True, check=False
                )
        for flag in ("-F", "-X"):
            for chain in own:
                subprocess.run([binary, "-t", table, flag, chain], capture_output=True, check=False)


def _netns() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return {line.split()[0] for line in out.stdout.splitlines() if line.strip()}


def _remove_cgroup(path: Path) -> None:
    """Remove a cgroup directory tree, children first (cgroupfs refuses rmtree)."""
    for child in sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            child.rmdir()
    with contextlib.suppress(OSError):
        path.rmdir()


def _containerd_config(root: Path, registries: Sequence[str]) -> str:
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    # Plain-HTTP registries (the tests' loopback ones): containerd pulls over HTTPS otherwise.
    # `name=host` serves images named after another registry (`ghcr.io=127.0.0.1:5000`).
    pairs = [entry.partition("=")[::2] for entry in registries]
    mirrors = "".join(
        f'  [{cri}.registry.mirrors."{name}"]\n    endpoint = ["http://{host or name}"]\n'
        for name, host in pairs
    )
    return f"""version = 2
root = "{root / "containerd"}"
state = "{root / "containerd-state"}"
[grpc]
  address = "{root / "containerd.sock"}"
[ttrpc]
  address = "{root / "containerd.sock.ttrpc"}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{root / "containerd-opt"}"
[{cri}]
  sandbox_image = "{PAUSE_IMAGE}"
  # A negative oom_score_adj is refused on this host: let the kubelet's values be clamped.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{root / "runc"}"
  [{cri}.cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{root / "cni"}"
{mirrors}"""


def _cni_config(root: Path) -> dict[str, Any]:
    return {
        "cniVersion": "0.4.0",
        "name": "aim",
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": POD_SUBNET}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(root / "cni-ipam"),
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def _kubelet_config(root: Path, ca: Path, port: int, healthz: int) -> dict[str, Any]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        # This host: cgroup v1 (hybrid), no systemd, swap not refused, no negative OOM scores.
        "failCgroupV1": False,
        "cgroupDriver": "cgroupfs",
        "failSwapOn": False,
        "oomScoreAdj": 0,
        "address": "127.0.0.1",
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": False},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "containerRuntimeEndpoint": f"unix://{root / 'containerd.sock'}",
        "podLogsDir": str(root / "pod-logs"),
        "resolvConf": "/etc/resolv.conf",
        "clusterDomain": "cluster.local",
        # A test machine's disk is small and shared: never evict or collect images for it.
        "evictionHard": {
            "memory.available": "1Mi",
            "nodefs.available": "0%",
            "imagefs.available": "0%",
            "nodefs.inodesFree": "0%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "registerNode": True,
    }


def _kube_proxy_config(kubeconfig: Path, healthz: int, metrics: int) -> dict[str, Any]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "hostnameOverride": NODE_NAME,
        "mode": "iptables",
        "clusterCIDR": POD_SUBNET,
        # Zero: kube-proxy leaves the host's conntrack sysctls alone.
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
        # Not true: that would turn on route_localnet, a sysctl of the host.
        "iptables": {"localhostNodePorts": False},
        "healthzBindAddress": f"127.0.0.1:{healthz}",
        "metricsBindAddress": f"127.0.0.1:{metrics}",
    }


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _stop_containers(root: Path) -> None:
    """Kill every container runc runs for this node, then containerd's shims for it."""
    runc = ["runc", "--root", str(root / "runc" / "k8s.io")]
    listed = subprocess.run([*runc, "list", "-q"], capture_output=True, text=True, check=False)
    for container in listed.stdout.split():
        subprocess.run([*runc, "delete", "--force", container], capture_output=True, check=False)
    socket = str(root / "containerd.sock")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if (
                cmdline
                and cmdline[0].endswith(b"containerd-shim-runc-v2")
                and any(socket.encode() in arg for arg in cmdline)
            ):
                subprocess.run(["kill", "-9", proc.name], capture_output=True, check=False)


def _unmount_under(root: Path) -> None:
    """Unmount what containers left mounted under the node's directory, deepest first."""
    mounts = [
        line.split()[1]
        for line in Path("/proc/self/mounts").read_text().splitlines()
        if line.split()[1].startswith(str(root))
    ]
    for mount in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True, check=False)


@contextlib.contextmanager
def start_node(  # noqa: PLR0913 - a node's settings, each with its default
    tools: Tools,
    plane: ControlPlane,
    root: Path,
    *,
    capacity: Mapping[str, str] | None = None,
    registries: Sequence[str] = (),
    scheduler: bool = True,
) -> Iterator[Node]:
    """Start a node under `root` and register it with `plane`; stop it and clean the host after.

    `capacity`: extended resources to advertise (e.g. `{"amd.com/gpu": "8"}`), patched into the
    node's status as a device plugin would report them. `registries`: `host:port` of registries
    the node pulls from over plain HTTP, or `name=host:port` to pull `name`'s images from there.
    Without `scheduler`, only pods that name the node (`spec.nodeName`) run on it, and the rest
    stay unscheduled. While it runs, Services' names resolve on this host (`ServiceHosts`), as
    cluster DNS would resolve them in a pod.
    """
    root.mkdir(parents=True, exist_ok=True)
    host = HostState.read()
    sup = Supervisor(root / "logs")
    ip = node_ip()
    try:
        containerd = sup.start(
            "containerd",
            [
                "containerd",
                "--config",
                _write(root / "containerd.toml", _containerd_config(root, registries)),
            ],
        )
        socket = root / "containerd.sock"
        sup.wait_ready(containerd, socket.exists)
        node = Node(NODE_NAME, ip, root, socket, sup)
        pause = tools.pause.read_bytes()
        node.load(Image(PAUSE_IMAGE, {"/pause": File(pause, 0o755)}, entrypoint=["/pause"]))
        _write(root / "cni" / "10-aim.conflist", json.dumps(_cni_config(root)))

        kubeconfig = plane.kubeconfig
        port, healthz = free_port(), free_port()
        kubelet_config = _kubelet_config(root, plane.pki.ca.cert, port, healthz)
        kubelet = sup.start(
            "kubelet",
            [
                tools.kubelet,
                f"--config={_write(root / 'kubelet.yaml', yaml.safe_dump(kubelet_config))}",
                f"--kubeconfig={kubeconfig}",
                f"--root-dir={root / 'kubelet'}",
                f"--cert-dir={root / 'kubelet-pki'}",  # its default ignores --root-dir
                f"--hostname-override={NODE_NAME}",
                f"--node-ip={ip}",
            ],
        )
        sup.wait_ready(kubelet, lambda: http_ok(f"http://127.0.0.1:{healthz}/healthz"))

        if scheduler:
            _start_scheduler(sup, tools, kubeconfig)

        proxy_health = free_port()
        proxy_config = _kube_proxy_config(kubeconfig, proxy_health, free_port())
        proxy = sup.start(
            "kube-proxy",
            [
                tools.kube_proxy,
                f"--config={_write(root / 'kube-proxy.yaml', yaml.safe_dump(proxy_config))}",
            ],
        )
        sup.wait_ready(proxy, lambda: http_ok(f"http://127.0.0.1:{proxy_health}/healthz"))

        _hold_service_range()
        wait_ready_node(plane.admin, capacity or {})
        with ServiceHosts(plane.admin).running():
            yield node
    finally:
        sup.stop_all()
        _stop_containers(root)
        subprocess.run(
            [str(tools.kube_proxy), "--cleanup"], capture_output=True, check=False, timeout=60
        )
        _unmount_under(root)
        host.restore()


class ServiceHosts:
    """Services' names in /etc/hosts, for the host processes of the control plane.

    Crossplane core runs on the host, not in a pod, so it has no cluster DNS; it dials a function
    run by the Deployment runtime at `<service>.<namespace>:9443`. ClusterIPs (through
    kube-proxy's rules) and pod IPs (through the bridge) are reachable from the host, so a name is
    all that is missing: each Service gets lines in a marked block of /etc/hosts, kept in step
    every half second and removed on the way out (the file is put back as it was).
    """

    BEGIN: Final = "# BEGIN aim-crossplane e2e Services"
    END: Final = "# END aim-crossplane e2e Services"
    HOSTS: Final = Path("/etc/hosts")

    def __init__(self, admin: Kube) -> None:
        """Follow `admin`'s Services."""
        self._admin = admin
        self._stop = threading.Event()

    def lines(self) -> list[str]:
        """Hosts lines: a Service's ClusterIP, or each ready endpoint of a headless Service.

        Crossplane's function Services are headless: gRPC balances over the pods itself. An
        ExternalName Service naming another Service (`<name>.<namespace>.svc.cluster.local`)
        gets that one's address, which cluster DNS would reach by its CNAME.
        """
        ready: dict[tuple[str, str], list[str]] = {}
        for eps in self._admin.list("discovery.k8s.io/v1", "EndpointSlice"):
            service = eps["metadata"].get("labels", {}).get("kubernetes.io/service-name")
            for endpoint in eps.get("endpoints") or []:
                if service and endpoint.get("conditions", {}).get("ready"):
                    key = (eps["metadata"]["namespace"], service)
                    ready.setdefault(key, []).extend(endpoint.get("addresses", []))
        services = self._admin.list("v1", "Service")
        cluster_ips = {
            f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc.cluster.local": ip
            for svc in services
            if (ip := svc.get("spec", {}).get("clusterIP")) and ip != "None"
        }
        out: list[str] = []
        for svc in services:
            name, ns = svc["metadata"]["name"], svc["metadata"]["namespace"]
            names = " ".join([f"{name}.{ns}", f"{name}.{ns}.svc", f"{name}.{ns}.svc.cluster.local"])
            spec = svc.get("spec", {})
            ip = spec.get("clusterIP")
            if spec.get("type") == "ExternalName":
                target = cluster_ips.get(str(spec.get("externalName", "")).rstrip("."))
                addresses = [target] if target else []
            else:
                addresses = ready.get((ns, name), []) if ip == "None" else [ip] if ip else []
            out.extend(f"{address} {names}" for address in addresses)
        return sorted(out)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Keep the block in step until the context ends, then put the file back."""
        original = self.HOSTS.read_text()
        if self.BEGIN in original:  # left by a run that was killed: not ours to keep
            head, _, rest = original.partition(self.BEGIN)
            original = head + rest.partition(self.END)[2].lstrip("\n")
        thread = threading.Thread(target=self._follow, args=(original,), daemon=True)
        thread.start()
        try:
            yield
        finally:
            self._stop.set()
            thread.join(timeout=10)
            self.HOSTS.write_text(original)

    def _follow(self, original: str) -> None:
        written: list[str] = []
        while not self._stop.wait(0.5):
            with contextlib.suppress(OSError, KubeError):
                lines = self.lines()
                if lines != written:
                    block = "\n".join([self.BEGIN, *lines, self.END])
                    self.HOSTS.write_text(f"{original.rstrip()}\n{block}\n")
                    written = lines


def _start_scheduler(sup: Supervisor, tools: Tools, kubeconfig: Path) -> None:
    port = free_port()
    scheduler = sup.start(
        "kube-scheduler",
        [
            tools.kube_scheduler,
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
        ],
    )
    sup.wait_ready(scheduler, lambda: http_ok(f"https://127.0.0.1:{port}/healthz", tls=True))


def wait_ready_node(admin: Kube, capacity: Mapping[str, str], timeout_s: float = 60.0) -> None:
    """Wait for the node to be Ready, advertising `capacity` besides what the kubelet found."""

    def ready() -> bool:
        node = admin.get("v1", "Node", NODE_NAME) or {}
        conditions = node.get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    wait_for(f"node {NODE_NAME} Ready", ready, timeout_s=timeout_s)
    if capacity:
        # As the Kubernetes documentation advertises an extended resource; the kubelet keeps
        # resources it does not manage.
        status = {"capacity": dict(capacity), "allocatable": dict(capacity)}
        admin.patch_status("v1", "Node", NODE_NAME, None, {"status": status})


def node_local_volume(kube: Kube, name: str, path: Path, storage_class: str) -> None:
    """A ReadWriteMany PersistentVolume of `storage_class` on the node's disk at `path`.

    The real volume binder binds a claim of that class to it: the node has no provisioner, where
    a cluster's NFS or CephFS class would make such volumes.
    """
    path.chmod(0o777)  # written by Jobs of non-root users, as `restricted` requires
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "2Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": storage_class,
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": str(path)},
            },
        }
    )
