"""The `function-aim` command: serve the composition function over gRPC."""

from __future__ import annotations

import click
from crossplane.function import cli as sdkcli

from function.fn import FunctionRunner


@click.command()
@sdkcli.standard_options
def cli(  # noqa: PLR0913 - the SDK's standard options, passed through one by one
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    """Serve the AIM composition function (Crossplane's FunctionRunnerService)."""
    try:
        sdkcli.run(
            FunctionRunner(),
            debug=debug,
            address=address,
            tls_certs_dir=tls_certs_dir,
            insecure=insecure,
            max_recv_message_size=max_recv_message_size,
            max_send_message_size=max_send_message_size,
        )
    except (OSError, ValueError, RuntimeError) as e:
        # Missing certificates, an address already in use, neither --insecure nor certificates:
        # exit non-zero with the cause, so a supervisor (or a person) sees why it did not start.
        msg = f"cannot serve on {address}: {e}"
        raise click.ClickException(msg) from e


if __name__ == "__main__":
    cli()
