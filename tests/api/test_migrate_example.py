"""examples/migrate: old manifests, converted as a user would convert them, pass the XRDs."""

from __future__ import annotations

import subprocess

import yaml

from devtools.admission import validate_objects
from devtools.render import ROOT, Tools

EXAMPLE = ROOT / "examples" / "migrate" / "old.yaml"


def test_migrated_example_validates_and_reports_what_it_dropped(tools: Tools) -> None:
    """A migrated example passes admission, and the report lists what migration dropped."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "migrate"), str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=False,
    )
    # Exit 1: the cluster config's pull secrets have no canonical place, and the report says so.
    assert proc.returncode == 1, proc.stderr
    not_carried = [line for line in proc.stderr.splitlines() if "NOT CARRIED" in line]
    assert len(not_carried) == 1
    assert "spec.imagePullSecrets" in not_carried[0]

    old_kinds = [d["kind"] for d in yaml.safe_load_all(EXAMPLE.read_text())]
    converted = list(yaml.safe_load_all(proc.stdout))
    assert len(converted) == len(old_kinds)
    assert {d["kind"] for d in converted} == {
        "AIMClusterRuntimeConfig",
        "AIMClusterModel",
        "AIMClusterServiceTemplate",
        "AIMModelCache",
        "AIMTemplateCache",
        "AIMService",
    }
    results = validate_objects(tools, converted)
    assert [(name, errors) for name, errors in results if errors] == []
    assert len(results) == len(converted)
