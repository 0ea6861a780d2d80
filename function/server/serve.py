"""The gRPC server: RunFunction in Crossplane's v1 and v1beta1 services, health, reflection.

The SDK's server hands RunFunction a parsed request and serializes the response it returns. Our
requests go to a worker process as bytes and come back as bytes, so that parsing and
serializing was all the server did with them, and for a service's request (the template catalog
rides along) it cost as much as a tenth of the call (benchmarks/run_function.py). Here the
handler receives the bytes gRPC read and returns the bytes the worker wrote.

v1beta1 messages have v1's field numbers (the SDK converts between them by a bytes round trip),
so one handler serves both versions.

The standard health service (grpc.health.v1) answers SERVING for the server and each RunFunction
service, and NOT_SERVING from the moment a shutdown begins. Crossplane reaches the function over
mTLS, and Kubernetes' gRPC probes speak no TLS, so health can also be served alone on a plaintext
address (`--health-address`) for a probe to call.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from function.server.fn import FunctionRunner, UndecodableRequestError

SERVICES: Final = tuple(
    module.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name
    for module in (fnv1, fnv1beta1)
)
"""The services Crossplane may call, newest first."""

SHUTDOWN_GRACE_S: Final = 5.0
"""How long calls in flight may finish after SIGTERM (as the SDK's server allows)."""

Options = Sequence[tuple[str, int]]


def handlers(runner: FunctionRunner) -> list[grpc.GenericRpcHandler]:
    """RunFunction of every service in `SERVICES`, bytes in and bytes out."""

    async def run_function(
        request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> bytes:
        try:
            return await runner.run_bytes(request)
        except UndecodableRequestError as e:
            # What gRPC answers when its own deserializer fails, with the reason: there is no
            # request to attach a result to.
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"not a RunFunctionRequest: {e}")
            raise  # abort raises; this only tells the type checker

    # No (de)serializers: gRPC passes the message's bytes through.
    method: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(run_function)
    return [grpc.method_handlers_generic_handler(s, {"RunFunction": method}) for s in SERVICES]


@dataclass
class Servers:
    """The started servers: RunFunction (with health), and health alone when asked for."""

    main: grpc.aio.Server
    health: health.aio.HealthServicer
    probe: grpc.aio.Server | None = None

    async def stop(self, grace_s: float | None) -> None:
        """Say NOT_SERVING, then stop: calls in flight may finish within `grace_s`.

        The probe's server stops last, answering NOT_SERVING meanwhile.
        """
        await self.health.enter_graceful_shutdown()
        await self.main.stop(grace=grace_s)
        if self.probe:
            await self.probe.stop(grace=None)


@dataclass(frozen=True)
class Listen:
    """Where to serve, and how.

    RunFunction on `address`: mTLS with `credentials`, or plaintext with `insecure`. Health alone
    on `health_address` when given, always plaintext.
    """

    address: str
    credentials: grpc.ServerCredentials | None = None
    insecure: bool = False
    options: Options = ()
    health_address: str | None = None


async def start(runner: FunctionRunner, listen: Listen) -> Servers:
    """The servers, started.

    Raises:
        ValueError: neither credentials nor insecure were given.
        RuntimeError: gRPC could not listen on an address (in use, say).
    """
    if listen.credentials is None and not listen.insecure:
        msg = "no TLS certificates were given; pass --tls-server-certs-dir, or --insecure"
        raise ValueError(msg)
    checks = health.aio.HealthServicer()
    for service in SERVICES:
        await checks.set(service, health_pb2.HealthCheckResponse.SERVING)
    server = grpc.aio.server(options=list(listen.options))
    server.add_generic_rpc_handlers(handlers(runner))
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    names = (*SERVICES, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    if listen.credentials is not None and not listen.insecure:
        server.add_secure_port(listen.address, listen.credentials)
    else:
        server.add_insecure_port(listen.address)
    probe = None
    if listen.health_address:
        probe = grpc.aio.server()
        health_pb2_grpc.add_HealthServicer_to_server(checks, probe)
        probe.add_insecure_port(listen.health_address)
    await server.start()
    if probe:
        await probe.start()
    return Servers(server, checks, probe)


def serve(runner: FunctionRunner, listen: Listen) -> None:
    """Serve until SIGTERM or SIGINT, then let calls in flight finish."""

    async def run() -> None:
        servers = await start(runner, listen)
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopping.set)
        await stopping.wait()
        await servers.stop(SHUTDOWN_GRACE_S)

    asyncio.run(run())
