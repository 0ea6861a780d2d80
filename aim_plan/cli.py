"""The `aim` command: `aim plan DIR_OR_FILES...` shows where a set of AIM manifests ends up.

    aim plan examples/journeys/cluster-model --gpu-node MI300X
    aim plan my-catalog/ my-services.yaml -o yaml

Every manifest is read (directories in file order), then the function composes every AIM
object in rounds as Crossplane would, the objects each composed and the statuses each wrote fed
to the next round, until a round changes nothing. No cluster, no registry: what a cluster's
other controllers would do (the kubelet running Jobs, a provisioner, KServe, a gateway) is
simulated and named in the output. Exit status: 0 when the plan reached a fixed point, 1 when
it did not within --max-rounds, 2 on input it cannot read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import yaml
from crossplane.function import logging

from aim_plan.load import LoadError, load
from aim_plan.report import NO_NODE, data, text
from aim_plan.rounds import DEFAULT_MAX_ROUNDS, plan
from aim_plan.simulate import gpu_node
from aim_plan.world import World


class _UnreadableInputError(click.ClickException):
    exit_code = 2


def _gpu_nodes(values: tuple[str, ...]) -> list[dict[str, object]]:
    nodes = []
    for value in values:
        model, _, count = value.partition(":")
        try:
            nodes.append(gpu_node(model, int(count) if count else 8))
        except ValueError as e:
            msg = f"--gpu-node {value}: {e}; write MODEL or MODEL:COUNT (MI300X:8)"
            raise click.BadParameter(msg) from None
    return nodes


@click.group()
def cli() -> None:
    """AIM tools that need no cluster."""


@cli.command(name="plan")
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="DIR_OR_FILES..."
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "yaml", "json"]),
    default="text",
    help="text for people; yaml or json: the same, with every object's end state, for tools.",
)
@click.option(
    "--max-rounds",
    type=click.IntRange(1, 1000),
    default=DEFAULT_MAX_ROUNDS,
    show_default=True,
    help="Rounds of reconciles before the plan reports what did not converge.",
)
@click.option(
    "--gpu-node",
    "gpu_nodes",
    multiple=True,
    metavar="MODEL[:COUNT]",
    help="Add a simulated GPU node (MI300X:8, the default count 8); repeatable.",
)
def plan_command(
    paths: tuple[Path, ...], output: str, max_rounds: int, gpu_nodes: tuple[str, ...]
) -> None:
    """Plan AIM manifests to their end state, with no cluster.

    Reads every *.yaml/*.yml of the directories (in file order) and the files given. Secrets
    are read but never printed.
    """
    try:
        loaded = load(paths)
    except LoadError as e:
        raise _UnreadableInputError(str(e)) from None
    nodes = _gpu_nodes(gpu_nodes)
    logging.configure(logging.Level.DISABLED)  # the function's own log is not the plan's output
    world = World([*loaded.objects, *nodes])
    result = plan(world, max_rounds)
    notes = []
    if not any(o.get("kind") == "Node" for o in result.world):
        notes.append(NO_NODE)
    if nodes:
        names = ", ".join(str(n["metadata"]["name"]) for n in nodes)  # type: ignore[index]
        notes.append(f"simulated GPU nodes (--gpu-node): {names}")
    report = data(result, loaded.ignored, notes)
    if output == "json":
        click.echo(json.dumps(report, indent=2))
    elif output == "yaml":
        click.echo(yaml.safe_dump(report, sort_keys=False), nl=False)
    else:
        click.echo(text(report))
    if not result.converged:
        sys.exit(1)


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
