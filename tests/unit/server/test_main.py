"""The `function-aim` command fails loudly when it cannot start."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import yaml
from click.testing import CliRunner
from grpc_health.v1 import health_pb2

from devtools.tools import ROOT, free_port
from function.registry.oras import OrasInspector
from function.server import main
from function.server.fn import FunctionRunner
from tests.cases import Case, table


def start(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "function.server.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_credentials_and_not_insecure_exits_non_zero() -> None:
    """Forgetting both TLS certificates and --insecure is an error, not a silent exit 0."""
    proc = start("--address", "127.0.0.1:0")
    assert proc.returncode != 0
    assert "cannot serve on 127.0.0.1:0" in proc.stderr
    assert "insecure" in proc.stderr


def test_missing_certificate_directory_exits_non_zero() -> None:
    """A wrong --tls-server-certs-dir names the missing file."""
    proc = start("--address", "127.0.0.1:0", "--tls-server-certs-dir", "/nonexistent/certs")
    assert proc.returncode != 0
    assert "/nonexistent/certs/tls.crt" in proc.stderr


def test_address_in_use_exits_non_zero() -> None:
    """A port someone else holds is reported, and the process does not hang."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = start("--insecure", "--address", f"127.0.0.1:{port}")
    assert proc.returncode != 0
    assert f"cannot serve on 127.0.0.1:{port}" in proc.stderr


def test_a_malformed_registry_mirror_is_refused_naming_the_form() -> None:
    """A malformed --registry-mirror is refused, showing the expected form."""
    proc = start("--insecure", "--registry-mirror", "ghcr.io")
    assert proc.returncode == 2
    assert "REGISTRY=HOST[:PORT]" in proc.stderr


def test_registry_mirrors_are_keyed_like_image_references(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Docker Hub's aliases and the case of a host do not matter, as in pull secrets."""
    served: list[FunctionRunner] = []
    monkeypatch.setattr(
        "function.server.main.serve", lambda runner, *_, **__: served.append(runner)
    )
    args = ["--insecure", "--registry-mirror", "index.docker.io=M:5000"]
    result = CliRunner().invoke(main.cli, [*args, "--registry-mirror", "GHCR.io=m2"])

    assert result.exit_code == 0, result.output
    inspector = served[0]._inspector  # noqa: SLF001 - what the command built is the point
    assert isinstance(inspector, OrasInspector)
    assert inspector.mirrors == {"docker.io": "m:5000", "ghcr.io": "m2"}


def test_the_event_flags_reach_the_server_s_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """--warning-repeat, --events-per-minute and --event-memory set the server's memory of events:
    the server's, since no worker sees every call of an XR."""
    served: list[FunctionRunner] = []
    monkeypatch.setattr(
        "function.server.main.serve", lambda runner, *_, **__: served.append(runner)
    )
    args = ["--insecure", "--workers=0", "--warning-repeat=30", "--events-per-minute=3"]
    result = CliRunner().invoke(main.cli, [*args, "--event-memory=7"])

    assert result.exit_code == 0, result.output
    told = served[0]._told  # noqa: SLF001 - what the command built is the point
    assert (told._repeat_s, told._per_minute, told._capacity) == (30, 3, 7)  # noqa: SLF001


@dataclass(frozen=True)
class CpuCase(Case):
    cpu_max: str
    want: int | None


CPU_CASES = [
    CpuCase("half-core", "less than a core is still one worker", "50000 100000\n", 1),
    CpuCase(
        "fractional", "2.5 cores round up to 3, if the affinity has them", "250000 100000\n", 3
    ),
    CpuCase("unlimited", "no limit: the affinity decides", "max 100000\n", None),
    CpuCase("unreadable", "a file that cannot be read: the affinity decides", "garbage", None),
]


@table(CPU_CASES)
def test_default_workers_follow_the_cgroup_cpu_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: CpuCase
) -> None:
    """A pod's CPU limit is a quota, not an affinity: without reading it, a function on a large
    node would start a worker per host core."""
    path = tmp_path / "cpu.max"
    path.write_text(case.cpu_max)
    monkeypatch.setattr(main, "_CPU_MAX", path)
    affinity = min(len(os.sched_getaffinity(0)), 8)
    want = affinity if case.want is None else min(case.want, affinity)
    assert main._cores() == want, case.reason  # noqa: SLF001


def test_the_documented_probe_configuration_matches_the_command() -> None:
    """docs/operations.md's DeploymentRuntimeConfig passes a flag the command has, and probes the
    port that flag opens: a typo in either would leave a function that never turns Ready."""
    readme = (ROOT / "docs" / "operations.md").read_text()
    block = readme.split("kind: DeploymentRuntimeConfig", 1)[1].split("```", 1)[0]
    config = yaml.safe_load("kind: DeploymentRuntimeConfig" + block)
    [container] = config["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"]
    [arg] = container["args"]
    flag, _, address = arg.partition("=")
    assert flag in {opt for p in main.cli.params for opt in p.opts}
    port = int(address.rsplit(":", 1)[1])
    assert container["readinessProbe"]["grpc"]["port"] == port
    assert container["livenessProbe"]["grpc"]["port"] == port


def test_the_served_command_answers_health_and_stops_cleanly_on_sigterm() -> None:
    """As Kubernetes runs it: a probe's plaintext health check answers SERVING, and SIGTERM
    (a rollout, a node drain) ends the process with status 0, not a traceback."""
    address, health = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    args = ["--insecure", "--address", address, "--health-address", health, "--workers", "1"]
    with subprocess.Popen(
        [sys.executable, "-m", "function.server.main", *args],
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            with grpc.insecure_channel(health) as channel:
                check = channel.unary_unary(
                    "/grpc.health.v1.Health/Check",
                    request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                    response_deserializer=health_pb2.HealthCheckResponse.FromString,
                )
                grpc.channel_ready_future(channel).result(timeout=30)
                answer = check(health_pb2.HealthCheckRequest(), timeout=10)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        finally:
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_an_address_of_only_a_port_listens_everywhere() -> None:
    """`--health-address=:8081` is how Kubernetes manifests write it; gRPC Python refuses an
    empty host, so it means every interface."""
    assert main._listen(":8081") == "0.0.0.0:8081"  # noqa: SLF001
    assert main._listen("127.0.0.1:8081") == "127.0.0.1:8081"  # noqa: SLF001
