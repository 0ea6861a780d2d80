"""The gRPC server: RunFunction in Crossplane's v1 and v1beta1 services, and reflection.

The SDK's server hands RunFunction a parsed request and serializes the response it returns. Our
requests go to a worker process as bytes and come back as bytes, so that parsing and
serializing was all the server did with them, and for a service's request (the template catalog
rides along) it cost as much as a tenth of the call (benchmarks/run_function.py). Here the
handler receives the bytes gRPC read and returns the bytes the worker wrote.

v1beta1 messages have v1's field numbers (the SDK converts between them by a bytes round trip),
so one handler serves both versions.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from typing import Final

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from grpc_reflection.v1alpha import reflection

from function.server.fn import FunctionRunner

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

    async def run_function(request: bytes, _: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return await runner.run_bytes(request)

    # No (de)serializers: gRPC passes the message's bytes through.
    method: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(run_function)
    return [grpc.method_handlers_generic_handler(s, {"RunFunction": method}) for s in SERVICES]


async def start(
    runner: FunctionRunner,
    address: str,
    *,
    credentials: grpc.ServerCredentials | None,
    insecure: bool,
    options: Options = (),
) -> grpc.aio.Server:
    """A started server on `address`: mTLS with `credentials`, plaintext with `insecure`.

    Raises:
        ValueError: neither credentials nor insecure were given.
        RuntimeError: gRPC could not listen on the address (in use, say).
    """
    if credentials is None and not insecure:
        msg = "no TLS certificates were given; pass --tls-server-certs-dir, or --insecure"
        raise ValueError(msg)
    server = grpc.aio.server(options=list(options))
    server.add_generic_rpc_handlers(handlers(runner))
    reflection.enable_server_reflection((*SERVICES, reflection.SERVICE_NAME), server)
    if credentials is not None and not insecure:
        server.add_secure_port(address, credentials)
    else:
        server.add_insecure_port(address)
    await server.start()
    return server


def serve(
    runner: FunctionRunner,
    address: str,
    *,
    credentials: grpc.ServerCredentials | None,
    insecure: bool,
    options: Options = (),
) -> None:
    """Serve until SIGTERM or SIGINT, then let calls in flight finish."""

    async def run() -> None:
        server = await start(
            runner, address, credentials=credentials, insecure=insecure, options=options
        )
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopping.set)
        await stopping.wait()
        await server.stop(grace=SHUTDOWN_GRACE_S)

    asyncio.run(run())
