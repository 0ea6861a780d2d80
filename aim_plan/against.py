"""Planning on top of a live cluster (`--against`): which flags need it, and what changes.

The plan reads the cluster's objects of the kinds the function composes and reads
(`aim_plan.live`); the diff compares only those, the rest being the plan's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import click

from aim_plan.diff import Diff, diff
from aim_plan.live import READ_KINDS
from aim_plan.load import Obj, key_of
from aim_plan.registry import Answers
from aim_plan.rounds import plan
from aim_plan.world import World


def changes(
    live: list[Obj],
    planned: World,
    *,
    upgrade: bool,
    replan: tuple[list[Obj], int, Answers],
) -> Diff:
    """What the manifests change on the live cluster.

    The difference between where the cluster goes as it is and where it goes with the manifests,
    both planned from the live state: what would happen anyway (another team's discovery Job
    finishing) is in both, so it is not the change's. An upgrade's baseline is the live objects
    themselves: what the installed function composed, which this checkout's function may
    compose otherwise.
    """
    if upgrade:
        before = compared(live)
    else:
        nodes, max_rounds, registry = replan
        before = compared(plan(World([*live, *nodes]), max_rounds, registry).world)
    return diff(before, compared(planned))


def need_against(against: Path | None, *, context: str | None, upgrade: bool) -> None:
    """--context and --upgrade only mean something with --against: refused alone."""
    if against is not None:
        return
    if context is not None:
        msg = "--context names a context of --against's kubeconfig; give --against too"
        raise click.UsageError(msg)
    if upgrade:
        msg = "--upgrade compares with a live cluster; give --against KUBECONFIG too"
        raise click.UsageError(msg)


def compared(world: Iterable[Obj]) -> list[Obj]:
    """The objects of the kinds read from the cluster: the others are the plan's own."""
    return [o for o in world if key_of(o)[:2] in READ_KINDS]
