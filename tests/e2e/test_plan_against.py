"""`aim plan --against` on the real control plane: a catalog change, planned before it is applied.

A platform team runs two services on one cluster model and a third on another. It plans a
catalog change that makes the first model's services run a new template (the model's
`defaultServiceTemplate`, which wins over the template a running service keeps), with the
plane's admin kubeconfig, as a user runs the command. The plan must name exactly the two
services as switching template and redeployed, leave the third out, delete nothing, exit 2 for
a CI gate, and change nothing in the cluster; the catalog as applied plans to no change (exit 0).

Simulated (in the background, tests/e2e/cluster.py): KServe; the GPU node (`gpu_node`), which
the plan reads from the live cluster like every other Node.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.converge import AIM, CONVERGE_S, ISVC, wait_status
from devtools.cluster.kube import wait_for
from devtools.cluster.platform import catalog_entry
from devtools.tools import ROOT
from tests.e2e.journey import Journey
from tests.e2e.test_scenarios import service

SWITCHING: Final = "plan-switch"
"""The cluster model whose services the change moves to a new template."""
STAYING: Final = "plan-stay"
"""The other cluster model: the change leaves it and its service alone."""
NEW_TEMPLATE: Final = f"{SWITCHING}-v2"


def _catalog(*, changed: bool) -> list[dict[str, Any]]:
    """Both catalog entries; `changed`: the first model's services move to NEW_TEMPLATE."""
    switching = catalog_entry("AIMClusterModel", SWITCHING, None)
    if changed:
        model, template = switching
        model["spec"]["defaultServiceTemplate"] = NEW_TEMPLATE
        new = json.loads(json.dumps(template))
        new["metadata"]["name"] = NEW_TEMPLATE
        # Two GPUs: the services' InferenceServices change, so they are redeployed (a template
        # the same as the old one under a new name would switch them without a new rollout).
        new["spec"]["hardware"]["gpu"]["requests"] = 2
        switching = [model, template, new]
    return [*switching, *catalog_entry("AIMClusterModel", STAYING, None)]


def _write(directory: Path, docs: list[dict[str, Any]]) -> Path:
    directory.mkdir()
    (directory / "catalog.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return directory


def _plan(kubeconfig: Path, directory: Path, *output: str) -> subprocess.CompletedProcess[str]:
    """`scripts/plan --against KUBECONFIG DIR`, as a user runs it."""
    return subprocess.run(
        [str(ROOT / "scripts" / "plan"), "--against", str(kubeconfig), str(directory), *output],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _versions(journey: Journey, ns: str) -> dict[str, str]:
    """resourceVersion of every object the plan reads that this test made or caused."""
    kube = journey.platform.kube
    found = [
        *kube.list(AIM, "AIMService", ns),
        *kube.list(ISVC, "InferenceService", ns),
        *(
            m
            for m in kube.list(AIM, "AIMClusterModel")
            if m["metadata"]["name"].startswith("plan-")
        ),
        *(
            t
            for t in kube.list(AIM, "AIMClusterServiceTemplate")
            if t["spec"].get("modelName", "").startswith("plan-")
        ),
    ]
    return {f"{o['kind']} {o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in found}


def _settled(journey: Journey, ns: str) -> dict[str, str]:
    """The resourceVersions once nothing has written them for a few seconds (the last status
    updates of a convergence land a moment after `Running`)."""
    last: dict[str, str] = {}
    since = time.monotonic()

    def quiet() -> dict[str, str] | None:
        nonlocal last, since
        now = _versions(journey, ns)
        if now != last:
            last, since = now, time.monotonic()
            return None
        return now if time.monotonic() - since >= 6 else None

    return wait_for("the objects to settle", quiet, timeout_s=CONVERGE_S)


def test_plan_against_the_plane_names_exactly_the_services_a_catalog_change_switches(
    journey: Journey, tmp_path: Path
) -> None:
    """Two services of one model switch template (redeployed, exit 2); the third, of another
    model, is not named; nothing deleted; the cluster unchanged; the catalog as applied: exit 0.
    """
    platform = journey.platform
    ns = journey.namespace("team-plan")
    services = [
        service("alpha", ns, SWITCHING, None),
        service("beta", ns, SWITCHING, None),
        service("gamma", ns, STAYING, None),
    ]
    journey.apply(_catalog(changed=False))
    for model in (SWITCHING, STAYING):
        wait_status(platform, "AIMClusterModel", model, None, "Ready")
        wait_status(platform, "AIMClusterServiceTemplate", f"{model}-mi300x", None, "Available")
    journey.apply(services)
    running = {
        s["metadata"]["name"]: wait_status(
            platform, "AIMService", s["metadata"]["name"], ns, "Running"
        )
        for s in services
    }
    for name, model in (("alpha", SWITCHING), ("beta", SWITCHING), ("gamma", STAYING)):
        assert running[name]["status"]["resolvedTemplate"]["name"] == f"{model}-mi300x"
    before = _settled(journey, ns)
    assert len(before) == 10  # 3 services, their 3 InferenceServices, 2 models, 2 templates
    kubeconfig = platform.cluster.kubeconfig

    change = _write(tmp_path / "change", _catalog(changed=True))
    planned = _plan(kubeconfig, change, "-o", "json")
    # Exit 2: a running service would be redeployed.
    assert planned.returncode == 2, planned.stdout + planned.stderr
    found = json.loads(planned.stdout)["diff"]
    assert found["redeploys"] is True
    assert found["deleted"] == []
    assert f"AIMClusterServiceTemplate {NEW_TEMPLATE}" in found["created"]
    model_change = {c["object"]: c.get("paths") for c in found["changed"]}
    assert model_change[f"AIMClusterModel {SWITCHING}"] == ["spec.defaultServiceTemplate"]
    affected = {
        s["service"]: s
        for s in found["runningServices"]
        if s["switchesTemplate"] or s["redeployed"] or s["cachesLost"] or s["cachesChanged"]
    }
    assert sorted(affected) == [f"AIMService {ns}/alpha", f"AIMService {ns}/beta"]
    for what, impact in affected.items():
        assert impact["template"] == {"live": f"{SWITCHING}-mi300x", "planned": NEW_TEMPLATE}
        # Its InferenceService asks for two GPUs now.
        redeployed = impact["redeployed"] or ""
        assert redeployed.startswith(f"InferenceService {what.split()[1]}-"), impact
        assert "resources" in redeployed, impact
    named = [*found["created"], *found["deleted"], *(c["object"] for c in found["changed"])]
    assert not [o for o in named if f"{ns}/gamma" in o or STAYING in o], named

    # The page a person reads says the same.
    page = _plan(kubeconfig, change)
    assert page.returncode == 2, page.stderr
    for name in ("alpha", "beta"):
        assert (
            f"running AIMService {ns}/{name}:\n"
            f"  switches template: {SWITCHING}-mi300x -> {NEW_TEMPLATE}\n"
        ) in page.stdout
    assert f"running AIMService {ns}/gamma: unaffected" in page.stdout

    # The manifests as they were applied: nothing to change, no running service affected.
    applied = _write(tmp_path / "applied", [*_catalog(changed=False), *services])
    same = _plan(kubeconfig, applied, "-o", "json")
    assert same.returncode == 0, same.stdout + same.stderr
    unchanged = json.loads(same.stdout)["diff"]
    assert (unchanged["created"], unchanged["deleted"], unchanged["changed"]) == ([], [], [])
    assert unchanged["redeploys"] is False
    # The plane is shared with other tests: every running service in it is listed, ours too.
    ours = [s for s in unchanged["runningServices"] if s["service"].startswith(f"AIMService {ns}/")]
    assert len(ours) == len(services)
    assert not [
        s["service"]
        for s in unchanged["runningServices"]
        if s["switchesTemplate"] or s["redeployed"] or s["cachesLost"] or s["cachesChanged"]
    ]

    # The plans only read: not one object was written meanwhile.
    assert _versions(journey, ns) == before
