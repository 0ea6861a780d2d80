"""The baseline for benchmarks: a function on the same SDK that answers every call unchanged.

.venv/bin/python benchmarks/noop_function.py --insecure --address 127.0.0.1:9444
"""

from __future__ import annotations

import click
from crossplane.function import cli as sdkcli
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1


class Noop(grpcv1.FunctionRunnerServiceServicer):
    """Returns the response the SDK builds from any request, and nothing else."""

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, _: object = None
    ) -> fnv1.RunFunctionResponse:
        """Answer without composing anything."""
        return response.to(req)


@click.command()
@sdkcli.standard_options
def cli(  # noqa: PLR0913 - the SDK's standard options
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    """Serve the no-op function exactly as function-aim is served."""
    sdkcli.run(
        Noop(),
        debug=debug,
        address=address,
        tls_certs_dir=tls_certs_dir,
        insecure=insecure,
        max_recv_message_size=max_recv_message_size,
        max_send_message_size=max_send_message_size,
    )


if __name__ == "__main__":
    cli()
