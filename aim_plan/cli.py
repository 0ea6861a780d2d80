"""The `aim` command: `aim plan DIR_OR_FILES...` shows where a set of AIM manifests ends up.

    aim plan examples/journeys/cluster-model --gpu-node MI300X
    aim plan my-catalog/ my-services.yaml -o yaml

Every manifest is read (directories in file order), then the function composes every AIM
object in rounds as Crossplane would, the objects each composed and the statuses each wrote fed
to the next round, until a round changes nothing. No cluster: what a cluster's other
controllers would do (the kubelet running Jobs, a provisioner, KServe, a gateway) is simulated
and named in the output. Registries are read as the function reads them (its oras client and
flags, the pull secrets it finds), each question once per run; --offline reads none. Older
AIM API manifests are converted in memory with aim-migrate. Exit status: 0 when the plan
reached a fixed point, 1 when it did not within --max-rounds, 2 on input it cannot read or
convert, or flags it refuses.

    aim plan --against ~/.kube/config my-catalog/

reads the live cluster first (GET and LIST only), plans the manifests on top of it, and prints
what would change; exit status 2 also when a running service would be redeployed (a CI gate).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import click
import yaml
from crossplane.function import logging

from aim_plan.against import changes as against_changes
from aim_plan.against import need_against
from aim_plan.diff import Diff, as_data, as_text
from aim_plan.kubeconfig import KubeconfigError, credentials
from aim_plan.live import Live, LiveError, overlay, read
from aim_plan.load import Loaded, LoadError, Obj, key_of, load
from aim_plan.registry import NO_ORAS_NOTE, Answers, offline_answers, oras_answers
from aim_plan.report import NO_NODE, data, text
from aim_plan.rounds import DEFAULT_MAX_ROUNDS, plan
from aim_plan.simulate import gpu_node
from aim_plan.world import World
from function.server import flags

REGISTRY_FLAGS: Final = (
    "oras_path",
    "insecure_registries",
    "registry_mirrors",
    "registry_timeout",
    "registry_listing_timeout",
    "registry_listing_max_tags",
)
"""The parameters that say how to read registries, which --offline reads none of."""


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
@click.option(
    "--upgrade",
    is_flag=True,
    help="With --against: compare with the live objects as the installed function composed "
    "them, so the diff also shows what this checkout's function would change on upgrading.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="Read no registry: images' labels only from spec.imageMetadata, no source listed.",
)
@click.option(
    "--oras",
    "oras_path",
    envvar="AIM_ORAS",
    metavar="PATH",
    help="The oras binary that reads model images' labels from their registries, as the "
    "function's --oras  [default: oras on PATH; without one the plan reads no registry]",
)
@flags.insecure_registry
@flags.registry_mirror
@flags.registry_timeout
@flags.registry_listing_timeout
@flags.registry_listing_max_tags
@click.pass_context
def plan_command(  # noqa: PLR0913, PLR0917 - the command's options, as click passes them
    ctx: click.Context,
    paths: tuple[Path, ...],
    output: str,
    max_rounds: int,
    gpu_nodes: tuple[str, ...],
    against: Path | None,
    context: str | None,
    *,
    upgrade: bool,
    offline: bool,
    oras_path: str | None,
    insecure_registries: tuple[str, ...],
    registry_mirrors: dict[str, str],
    registry_timeout: float,
    registry_listing_timeout: float,
    registry_listing_max_tags: int,
) -> None:
    """Plan AIM manifests to their end state, with no cluster or on top of a live one.

    Reads every *.yaml/*.yml of the directories (in file order) and the files given. Secrets
    are read but never printed. Model images' labels and model sources' listings are read from
    their registries as the function reads them (oras, the pull secrets among the manifests or
    in the cluster), unless --offline.
    """
    loaded = _load(paths)
    need_against(against, context=context, upgrade=upgrade)
    nodes = _gpu_nodes(gpu_nodes)
    notes = list(loaded.notes)
    if offline:
        _refuse_registry_flags(ctx)
        registry = offline_answers()
    else:
        registry, no_oras = _registry(
            _find_oras(oras_path),
            timeout_s=registry_timeout,
            insecure=frozenset(insecure_registries),
            mirrors=registry_mirrors,
            listing_timeout_s=registry_listing_timeout,
            listing_max_tags=registry_listing_max_tags,
        )
        notes += no_oras
    live = _read_live(against, context, loaded.objects) if against is not None else None
    logging.configure(logging.Level.DISABLED)  # the function's own log is not the plan's output
    start = overlay(live.objects, loaded.objects) if live is not None else loaded.objects
    result = plan(World([*start, *nodes]), max_rounds, registry)
    notes += _node_notes(result.world, nodes)
    changes = None
    if live is not None:
        notes += [f"not in the cluster, not compared: {s}" for s in live.skipped]
        changes = against_changes(
            live.objects, result.world, upgrade=upgrade, replan=(nodes, max_rounds, registry)
        )
    _emit(data(result, loaded.ignored, notes), changes, output)
    if changes is not None and changes.redeploys:
        sys.exit(2)
    if not result.converged:
        sys.exit(1)


def _load(paths: tuple[Path, ...]) -> Loaded:
    """The manifests; one that cannot be read ends the command, naming it."""
    try:
        return load(paths)
    except LoadError as e:
        raise _UnreadableInputError(str(e)) from None


def _node_notes(world: Iterable[Obj], simulated: list[dict[str, object]]) -> list[str]:
    """What the report says of the nodes: none at all, or the GPU nodes --gpu-node simulated."""
    notes = [] if any(key_of(o)[1] == "Node" for o in world) else [NO_NODE]
    if simulated:
        names = ", ".join(str(n["metadata"]["name"]) for n in simulated)  # type: ignore[index]
        notes.append(f"simulated GPU nodes (--gpu-node): {names}")
    return notes


def _registry(  # noqa: PLR0913 - the registry options, passed on as the client takes them
    oras: str | None,
    *,
    timeout_s: float,
    insecure: frozenset[str],
    mirrors: dict[str, str],
    listing_timeout_s: float,
    listing_max_tags: int,
) -> tuple[Answers, list[str]]:
    """The registry client the function would use, and the report's notes about it.

    With no oras to run, no answers, and a note that says so.
    """
    if oras is None:
        return offline_answers(no_oras=True), [NO_ORAS_NOTE]
    answers = oras_answers(
        oras,
        timeout_s=timeout_s,
        insecure=insecure,
        mirrors=mirrors,
        listing_timeout_s=listing_timeout_s,
        listing_max_tags=listing_max_tags,
    )
    return answers, []


def _refuse_registry_flags(ctx: click.Context) -> None:
    """A registry flag beside --offline would be ignored: refused instead, naming both."""
    for name in REGISTRY_FLAGS:
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
            flag = next(p for p in ctx.command.params if p.name == name).opts[-1]
            msg = f"{flag} says how to read registries, and --offline reads none; drop one of them"
            raise click.UsageError(msg)


def _find_oras(path: str | None) -> str | None:
    """The oras to run: `path` (--oras or AIM_ORAS), else oras on PATH; None when there is none.

    Raises:
        click.BadParameter: `path` is given but no executable is there.
    """
    if path is None:
        return shutil.which("oras")
    found = shutil.which(path)
    if found is None:
        msg = (
            f"{path!r} is no executable oras (given by --oras or AIM_ORAS); install oras "
            "(https://oras.land) and give its path, or pass --offline to read no registry"
        )
        raise click.BadParameter(msg, param_hint="--oras")
    return found


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
