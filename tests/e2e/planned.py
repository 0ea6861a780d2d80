"""`aim plan` beside the real plane: what a journey applied, planned on a laptop, reaches the end
state the journey reached through Crossplane.

The plan gets what a user would give it: the manifests the journey applied (in its namespaces,
its registry login filled in), the cluster's Nodes as manifests, and the function's registry
flags (the plane's registries serve `ghcr.io` and `private.registry`). Its end state is then
compared with the live objects as `aim plan --against` compares two states (`aim_plan.diff`):
every field the plan sets, labels and annotations, `status.status` and each condition's status
and reason. The live side is the journey's own: the objects in its namespaces, those the plan
names, and what those control, transitively (discovery Jobs in the system namespace, a cluster
model's templates); another test's objects on the shared plane are not in it.

What the plan is given as input (Secrets, ServiceAccounts, Namespaces, Nodes) is not compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final

import yaml
from click.testing import CliRunner

from aim_plan.cli import cli
from aim_plan.diff import Diff, as_text, diff
from aim_plan.live import AIM_RESOURCES, COMPOSED
from aim_plan.load import key_of
from aim_plan.report import text
from devtools.cluster.converge import CONVERGE_S
from devtools.cluster.kube import Kube, KubeError, wait_for
from devtools.cluster.platform import PRIVATE_REGISTRY, PUBLIC_REGISTRY
from function.kube.objects import controller_uid
from tests.e2e.journey import Journey

Obj = dict[str, Any]

OUTPUTS: Final = tuple(
    (r.api_version, r.kind) for r in (*AIM_RESOURCES, *COMPOSED) if r.kind != "Node"
)
"""The kinds a plan's end state is compared on: AIM objects and what they compose."""


def assert_plan_reaches_the_live_end_state(journey: Journey, workdir: Path) -> dict[str, Any]:
    """Plan what the journey applied so far, and wait until the plane's objects are the plan's
    end state (nothing the plan would create, change or delete). Return the plan's report."""
    report = plan_of(journey, workdir)
    assert report["converged"], report["didNotConverge"]
    planned = [o for o in report["objects"] if (o["apiVersion"], o["kind"]) in OUTPUTS]
    last: list[Diff] = []

    def same() -> bool:
        last[:] = [diff(live_of(journey, planned), planned)]
        return not last[0].changes

    wait_for(
        "the plane to reach the end state `aim plan` gives for the journey's manifests",
        same,
        timeout_s=CONVERGE_S,
        explain=lambda: (
            (as_text(last[0]) if last else "not compared yet")
            + "\n--- the plan ---\n"
            + text(report)
        ),
    )
    return report


def plan_of(journey: Journey, workdir: Path) -> dict[str, Any]:
    """`aim plan -o json` of the journey's manifests and the plane's Nodes, reading the plane's
    registries as the function does."""
    workdir.mkdir(parents=True, exist_ok=True)
    kube = journey.platform.kube
    nodes = [_as_manifest(n) for n in kube.list("v1", "Node")]
    (workdir / "00-nodes.yaml").write_text(yaml.safe_dump_all(nodes))
    (workdir / "01-journey.yaml").write_text(yaml.safe_dump_all(journey.applied))
    platform = journey.platform
    mirrors = {
        PUBLIC_REGISTRY: platform.registry.host,
        PRIVATE_REGISTRY: platform.private_registry.host,
    }
    flags = [
        f"--oras={platform.registry.oras}",
        *(f"--insecure-registry={host}" for host in mirrors.values()),
        *(f"--registry-mirror={name}={host}" for name, host in mirrors.items()),
    ]
    result = CliRunner().invoke(cli, ["plan", str(workdir), "-o", "json", *flags])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.output)
    return report


def live_of(journey: Journey, planned: Iterable[Obj]) -> list[Obj]:
    """The journey's live objects of the compared kinds: in its namespaces, named by the plan,
    or controlled (transitively) by one of those."""
    kube = journey.platform.kube
    every = [o for api, kind in OUTPUTS for o in _listed(kube, api, kind)]
    wanted = {key_of(o) for o in planned}
    namespaces = set(journey.namespaces.values())
    mine = {
        key_of(o): o
        for o in every
        if key_of(o) in wanted or (o["metadata"].get("namespace") or "") in namespaces
    }
    while True:
        uids = {o["metadata"]["uid"] for o in mine.values()}
        more = {key_of(o): o for o in every if key_of(o) not in mine and controller_uid(o) in uids}
        if not more:
            return list(mine.values())
        mine.update(more)


def _listed(kube: Kube, api: str, kind: str) -> list[Obj]:
    """Every object of the kind, or none where the plane does not serve it (the claims flavour's
    kinds are installed only by the claims tier)."""
    try:
        items = kube.list(api, kind)
    except KubeError as e:
        if e.status == HTTPStatus.NOT_FOUND:
            return []
        raise
    for o in items:  # a list's items carry neither
        o["apiVersion"], o["kind"] = api, kind
    return items


def _as_manifest(node: Obj) -> Obj:
    """A Node as a user would give it to the plan: its labels and what it can allocate."""
    meta, status = node["metadata"], node.get("status") or {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": meta["name"], "labels": meta.get("labels") or {}},
        "status": {k: status[k] for k in ("capacity", "allocatable") if k in status},
    }
