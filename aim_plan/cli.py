"""The `aim` command: `aim plan DIR_OR_FILES...` shows where a set of AIM manifests ends up.

    aim plan examples/journeys/cluster-model --gpu-node MI300X
    aim plan my-catalog/ my-services.yaml -o yaml

Every manifest is read (directories in file order), then the function composes every AIM
object in rounds as Crossplane would, the objects each composed and the statuses each wrote fed
to the next round, until a round changes nothing. No cluster, no registry: what a cluster's
other controllers would do (the kubelet running Jobs, a provisioner, KServe, a gateway) is
simulated and named in the output. Exit status: 0 when the plan reached a fixed point, 1 when
it did not within --max-rounds, 2 on input it cannot read.

    aim plan --against ~/.kube/config my-catalog/

reads the live cluster first (GET and LIST only), plans the manifests on top of it, and prints
what would change; exit status 2 also when a running service would be redeployed (a CI gate).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
import yaml
from crossplane.function import logging

from aim_plan.diff import Diff, as_data, as_text, diff
from aim_plan.kubeconfig import KubeconfigError, credentials
from aim_plan.live import READ_KINDS, Live, LiveError, overlay, read
from aim_plan.load import LoadError, Obj, load
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
@click.option(
    "--against",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KUBECONFIG",
    help="Plan on top of the live cluster of this kubeconfig (read only) and print what would "
    "change; exit 2 when a running service would be redeployed.",
)
@click.option("--context", metavar="NAME", help="The kubeconfig's context (default: current).")
def plan_command(  # noqa: PLR0913, PLR0917 - the command's options, as click passes them
    paths: tuple[Path, ...],
    output: str,
    max_rounds: int,
    gpu_nodes: tuple[str, ...],
    against: Path | None,
    context: str | None,
) -> None:
    """Plan AIM manifests to their end state, with no cluster or on top of a live one.

    Reads every *.yaml/*.yml of the directories (in file order) and the files given. Secrets
    are read but never printed.
    """
    try:
        loaded = load(paths)
    except LoadError as e:
        raise _UnreadableInputError(str(e)) from None
    if context is not None and against is None:
        msg = "--context names a context of --against's kubeconfig; give --against too"
        raise click.UsageError(msg)
    nodes = _gpu_nodes(gpu_nodes)
    live = _read_live(against, context, loaded.objects) if against is not None else None
    logging.configure(logging.Level.DISABLED)  # the function's own log is not the plan's output
    start = overlay(live.objects, loaded.objects) if live is not None else loaded.objects
    world = World([*start, *nodes])
    result = plan(world, max_rounds)
    notes = []
    if not any(o.get("kind") == "Node" for o in result.world):
        notes.append(NO_NODE)
    if nodes:
        names = ", ".join(str(n["metadata"]["name"]) for n in nodes)  # type: ignore[index]
        notes.append(f"simulated GPU nodes (--gpu-node): {names}")
    changes = None
    if live is not None:
        notes += [f"not in the cluster, not compared: {s}" for s in live.skipped]
        # The change is the difference between where the cluster goes as it is and where it goes
        # with the manifests, both planned from the live state: what would happen anyway (another
        # team's discovery Job finishing) is in both, so it is not the change's.
        baseline = plan(World([*live.objects, *nodes]), max_rounds)
        changes = diff(_compared(baseline.world), _compared(result.world))
    _emit(data(result, loaded.ignored, notes), changes, output)
    if changes is not None and changes.redeploys:
        sys.exit(2)
    if not result.converged:
        sys.exit(1)


def _compared(world: World) -> list[Obj]:
    """The objects of the kinds read from the cluster: the others are the plan's own."""
    return [o for o in world if (o.get("apiVersion"), o.get("kind")) in READ_KINDS]


def _emit(report: dict[str, Any], changes: Diff | None, output: str) -> None:
    if changes is not None:
        report["diff"] = as_data(changes)
    if output == "json":
        click.echo(json.dumps(report, indent=2))
    elif output == "yaml":
        click.echo(yaml.safe_dump(report, sort_keys=False), nl=False)
    else:
        click.echo(text(report))
        if changes is not None:
            click.echo(as_text(changes))


def _read_live(kubeconfig: Path, context: str | None, manifests: list[Obj]) -> Live:
    """The live objects, read with the kubeconfig's credentials (GET and LIST only)."""
    with tempfile.TemporaryDirectory(prefix="aim-plan-") as tmp:  # embedded keys, 0600, removed
        try:
            return read(credentials(kubeconfig, Path(tmp), context), manifests)
        except (KubeconfigError, LiveError) as e:
            raise _UnreadableInputError(str(e)) from None


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
