"""The image scripts/build-image makes: its contents, and that it serves as Crossplane runs it.

The image runs under runc from its own bundle, as the image's user, with the TLS files Crossplane
mounts for a Function (a Secret with tls.crt, tls.key and ca.crt, named by TLS_SERVER_CERTS_DIR).
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from devtools.cluster.pki import Pki, make_pki
from devtools.pkg.image import (
    Bundle,
    Container,
    Image,
    build_image,
    locked_runtime_dependencies,
    normalize_name,
    run_once,
    running,
    unpack,
)
from devtools.render.requests import run_function_request
from devtools.tools import ROOT, free_port

UID = 65532
EXAMPLE = ROOT / "examples" / "aimmodelcache-size-unknown" / "xr.yaml"


@pytest.fixture(scope="module")
def bundle(runtime_image: Image, tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    return unpack(runtime_image, tmp_path_factory.mktemp("bundle") / "function-aim")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def installed(bundle: Bundle) -> set[tuple[str, str]]:
    site = bundle.rootfs / "venv" / "lib" / "python3.11" / "site-packages"
    out = set()
    for info in site.glob("*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").rpartition("-")
        out.add((normalize_name(name), version))
    return out


def test_the_image_runs_as_nonroot_with_the_console_script(runtime_image: Image) -> None:
    """A non-root pod security context needs a numeric non-root user in the image itself."""
    config = runtime_image.config["config"]
    assert config["User"] == f"{UID}:{UID}"
    assert config["Entrypoint"] == ["/venv/bin/function-aim"]
    assert runtime_image.config["architecture"] == "amd64"


def test_the_image_has_no_shell_or_package_manager(bundle: Bundle) -> None:
    """Nothing in the image can run anything but the function (and oras)."""
    for directory in ("bin", "sbin", "usr/bin", "usr/sbin", "usr/local/bin"):
        for path in (bundle.rootfs / directory).glob("*"):
            assert path.name in {"python3.11", "oras"}, f"/{directory}/{path.name} is in the image"
    assert not (bundle.rootfs / "var" / "lib" / "dpkg").exists()


def test_the_image_carries_exactly_the_locked_dependencies(bundle: Bundle) -> None:
    """The image runs what the tests ran: uv.lock's runtime set, no more, no less."""
    assert installed(bundle) == locked_runtime_dependencies()


def test_the_image_carries_a_ca_bundle(bundle: Bundle) -> None:
    """oras reaches registries over TLS; without a bundle every HTTPS registry fails."""
    bundle_file = bundle.rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt"
    assert bundle_file.read_text().count("BEGIN CERTIFICATE") > 100


def test_oras_in_the_image_is_the_version_the_tests_use(bundle: Bundle) -> None:
    """The function shells out to oras; the registry tests ran this exact version."""
    tools = (ROOT / "scripts" / "build-tools.sh").read_text()
    pinned = re.search(r"^ORAS_VERSION=v(\S+)", tools, re.MULTILINE)
    assert pinned
    proc = run_once(bundle, ["/usr/local/bin/oras", "version"])
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"^Version:\s+{re.escape(pinned[1])}$", proc.stdout, re.MULTILINE)


def test_python_in_the_image_runs_as_its_user(bundle: Bundle) -> None:
    """The interpreter the venv points at is present, runs unprivileged, and is 3.11."""
    proc = run_once(
        bundle,
        ["/venv/bin/python3", "-c", "import os, sys; print(os.getuid(), sys.version_info[:2])"],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == f"{UID} (3, 11)"


def test_two_builds_give_the_same_digest(runtime_image: Image, tmp_path: Path) -> None:
    """Same inputs, same image: a digest users can check against a rebuild."""
    again = build_image(tmp_path / "again")
    assert again.digest == runtime_image.digest


@pytest.fixture(scope="module")
def served(bundle: Bundle, pki: Pki) -> Iterator[tuple[Container, str]]:
    """The image serving RunFunction over mTLS, with the files Crossplane would mount."""
    tls = bundle.path.parent / "tls"
    shutil.copytree(pki.function_dir, tls)
    # A Secret volume is readable by the pod's user; the copy is made so for the image's user.
    for path in [tls, *tls.iterdir()]:
        os.chown(path, UID, UID)
    port = free_port()
    with running(
        bundle,
        ["--address", f"127.0.0.1:{port}"],
        env={"TLS_SERVER_CERTS_DIR": "/tls/server"},
        mounts=[(tls, "/tls/server")],
    ) as container:
        yield container, f"127.0.0.1:{port}"


def channel(pki: Pki, target: str, *, client_cert: bool) -> grpc.Channel:
    client = pki.core_client_dir
    credentials = grpc.ssl_channel_credentials(
        root_certificates=(client / "ca.crt").read_bytes(),
        private_key=(client / "tls.key").read_bytes() if client_cert else None,
        certificate_chain=(client / "tls.crt").read_bytes() if client_cert else None,
    )
    return grpc.secure_channel(target, credentials)


def test_the_image_answers_run_function_over_mtls(served: tuple[Container, str], pki: Pki) -> None:
    """Crossplane's client certificate gets answers: after the lookups, the size-check Job."""
    container, target = served
    xr = yaml.safe_load(EXAMPLE.read_text())
    with channel(pki, target, client_cert=True) as ch:
        try:
            grpc.channel_ready_future(ch).result(timeout=30)
        except grpc.FutureTimeoutError:
            pytest.fail(f"the image did not serve on {target}:\n{container.log_tail()}")
        stub = grpcv1.FunctionRunnerServiceStub(ch)  # type: ignore[no-untyped-call]
        first: fnv1.RunFunctionResponse = stub.RunFunction(
            run_function_request(xr, {}, {}), timeout=30
        )
        # Crossplane answers each lookup; no runtime config exists in this namespace.
        lookups: dict[str, list[dict[str, object]]] = {k: [] for k in first.requirements.resources}
        second: fnv1.RunFunctionResponse = stub.RunFunction(
            run_function_request(xr, {}, lookups), timeout=30
        )
    assert lookups, first
    kinds = {r.resource["kind"] for r in second.desired.resources.values()}
    assert "Job" in kinds, second
    assert all(r.severity != fnv1.SEVERITY_FATAL for r in second.results), second.results


def test_the_image_refuses_a_client_without_a_certificate(
    served: tuple[Container, str], pki: Pki
) -> None:
    """The function trusts only callers with a certificate from Crossplane's CA."""
    _, target = served
    with channel(pki, target, client_cert=False) as ch:
        stub = grpcv1.FunctionRunnerServiceStub(ch)  # type: ignore[no-untyped-call]
        with pytest.raises(grpc.RpcError) as err:
            stub.RunFunction(fnv1.RunFunctionRequest(), timeout=10)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_the_image_runs_the_wake_responder_as_package_wake_responder_yaml_says(
    runtime_image: Image, tmp_path: Path
) -> None:
    """The platform runs the same image with another command; that command must be in it, run
    as the image's user, and answer a request 503 with Retry-After."""
    manifest = yaml.safe_load_all((ROOT / "package" / "wake-responder.yaml").read_text())
    [deployment] = [m for m in manifest if m["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    port = free_port()
    own = unpack(runtime_image, tmp_path / "responder")  # a second container of its own name
    with running(
        own,
        ["--listen", f"127.0.0.1:{port}", "--retry-after", "5"],
        entrypoint=container["command"],
    ) as responder:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("POST", "/v1/chat/completions", body=b"{}")
                answer = conn.getresponse()
                break
            except ConnectionError:
                assert time.monotonic() < deadline, responder.log_tail()
                time.sleep(0.2)
        assert answer.status == 503, responder.log_tail()
        assert answer.getheader("Retry-After") == "5"
