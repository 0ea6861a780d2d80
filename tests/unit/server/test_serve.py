"""The gRPC server as Crossplane reaches it: both RunFunction versions, reflection, the size limit.

The server passes request and response bytes through without parsing them, so these tests call
it over a real loopback gRPC channel, the way Crossplane and `crossplane render` do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from devtools.tools import free_port
from function.api.meta import Manifest
from function.kube.contract import Composition, Desired, Observed
from function.server.fn import FunctionRunner
from function.server.serve import SERVICES, Listen, start

XR: Manifest = {
    "apiVersion": "aim.silogen.ai/v1alpha1",
    "kind": "K",
    "metadata": {"name": "x", "namespace": "team"},
    "spec": {},
}


def composer(observed: Observed) -> Composition:
    """Composes one ConfigMap named after the XR, and a Running headline."""
    manifest: Manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": observed.name},
    }
    return Composition(
        resources={"cm": Desired(manifest, ready=True)}, status={"status": "Running"}
    )


def serving(
    test: Callable[[grpc.aio.Channel], Awaitable[None]],
    *,
    probe: Callable[[grpc.aio.Channel], Awaitable[None]] | None = None,
    **runner: Any,
) -> None:
    """Run `test` against a server on a free loopback port (and `probe` against its health-only
    address), then stop the server."""

    async def run() -> None:
        address = f"127.0.0.1:{free_port()}"
        health_address = f"127.0.0.1:{free_port()}" if probe else None
        functions = FunctionRunner({"K": composer}, **runner)
        servers = await start(
            functions, Listen(address, insecure=True, health_address=health_address)
        )
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                await test(channel)
            if probe and health_address:
                async with grpc.aio.insecure_channel(health_address) as channel:
                    await probe(channel)
        finally:
            await servers.stop(None)

    asyncio.run(run())


async def check(channel: grpc.aio.Channel, service: str = "") -> int:
    """The health service's answer for `service` ("" is the server as a whole)."""
    # The method by its path, as a Kubernetes probe calls it (the stubs' types lack Check).
    check = channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    answer: health_pb2.HealthCheckResponse = await check(
        health_pb2.HealthCheckRequest(service=service)
    )
    return answer.status


def request() -> fnv1.RunFunctionRequest:
    """A request for the XR above."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "t"
    req.observed.composite.resource.update(XR)
    return req


def test_v1_and_v1beta1_get_the_same_composition() -> None:
    """Crossplane calls v1; an older core (or `crossplane render`) may call v1beta1. The bytes
    pass through unparsed, so both versions must still read as the same composition."""

    async def test(channel: grpc.aio.Channel) -> None:
        v1 = await grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request())  # type: ignore[no-untyped-call]
        beta_request = fnv1beta1.RunFunctionRequest.FromString(request().SerializeToString())
        beta = await grpcv1beta1.FunctionRunnerServiceStub(channel).RunFunction(beta_request)  # type: ignore[no-untyped-call]
        assert list(v1.desired.resources) == ["cm"]
        assert v1.desired.resources["cm"].resource["metadata"]["name"] == "x"
        assert v1.meta.tag == "t"
        assert beta.SerializeToString() == v1.SerializeToString()

    serving(test)


def test_reflection_lists_both_runfunction_services() -> None:
    """grpcurl and other debugging tools find the services by reflection, as with the SDK."""

    async def test(channel: grpc.aio.Channel) -> None:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        ask = reflection_pb2.ServerReflectionRequest(list_services="")
        async for answer in stub.ServerReflectionInfo(iter([ask])):
            names = {s.name for s in answer.list_services_response.service}
            assert set(SERVICES) <= names
            assert "apiextensions.fn.proto.v1.FunctionRunnerService" in names
            return
        pytest.fail("no reflection answer")

    serving(test)


def test_a_request_over_the_limit_is_a_result_over_grpc_too() -> None:
    """The limit is checked on the bytes gRPC read; the refusal is a fatal result naming the XR
    and the flag, not a gRPC error."""

    async def test(channel: grpc.aio.Channel) -> None:
        req = request()
        req.observed.composite.resource.update({"spec": {"padding": "x" * 4096}})
        rsp = await grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req)  # type: ignore[no-untyped-call]
        [result] = rsp.results
        assert result.severity == fnv1.SEVERITY_FATAL
        assert "K team/x" in result.message
        assert "--max-recv-message-size" in result.message
        assert not rsp.desired.resources

    serving(test, max_request_bytes=1024)


def test_health_says_serving_beside_runfunction() -> None:
    """A client that already speaks mTLS to the function (grpc-health-probe with Crossplane's
    certificates) asks the standard health service on the same port."""

    async def test(channel: grpc.aio.Channel) -> None:
        assert await check(channel) == health_pb2.HealthCheckResponse.SERVING
        for service in SERVICES:
            assert await check(channel, service) == health_pb2.HealthCheckResponse.SERVING

    serving(test)


def test_a_probe_address_serves_health_alone() -> None:
    """Kubernetes' gRPC probes speak no TLS: `--health-address` answers them in plaintext,
    and offers nothing else, so no RunFunction is ever served without Crossplane's mTLS."""

    async def test(channel: grpc.aio.Channel) -> None:
        assert await check(channel) == health_pb2.HealthCheckResponse.SERVING

    async def probe(channel: grpc.aio.Channel) -> None:
        assert await check(channel) == health_pb2.HealthCheckResponse.SERVING
        stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.RunFunction(request())
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED

    serving(test, probe=probe)


def test_bytes_that_are_no_request_get_invalid_argument_as_grpc_would_say() -> None:
    """The server no longer lets gRPC parse requests; a caller that sends garbage still gets
    INVALID_ARGUMENT with the reason, as gRPC's own deserializer would answer, and the server
    goes on serving. Over the limit too: the size check must not parse its way into a crash."""

    async def test(channel: grpc.aio.Channel) -> None:
        raw: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
            "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
        )
        for garbage in (b"\xff\xff\xff not protobuf", b"\xff" * 2048):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await raw(garbage)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "not a RunFunctionRequest" in str(refused.value.details())
        rsp = await grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request())  # type: ignore[no-untyped-call]
        assert list(rsp.desired.resources) == ["cm"]

    serving(test, max_request_bytes=1024)
