"""The claims flavour through the real render engine: v1 LegacyCluster XRDs, `XAIM...` composites.

Each example under examples/claims/ is the composite Crossplane makes for a claim; its twin of the
same name under examples/ is the namespaced XR with the same spec. Both must compose the same
objects, in the claim's namespace, under the same names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.render.harness import render, render_example
from devtools.tools import ROOT, Tools
from tests.render.test_render import check_expected, split

CLAIMS = sorted(p.parent for p in (ROOT / "examples" / "claims").glob("*/xr.yaml"))


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """A composed object without what names its XR (labels and owner references Crossplane adds,
    which differ between a composite and a namespaced XR by design)."""
    meta = dict(obj["metadata"])
    meta.pop("ownerReferences", None)
    meta["labels"] = {
        k: v for k, v in (meta.get("labels") or {}).items() if not k.startswith("crossplane.io/")
    }
    meta.pop("generateName", None)
    return {**obj, "metadata": meta}


@pytest.mark.parametrize("example", CLAIMS, ids=lambda p: p.name)
def test_every_claims_example_composes_what_its_namespaced_twin_does(
    tools: Tools, function_target: str, example: Path
) -> None:
    """Same spec, same composed objects: the claims flavour is a different door to one API."""
    xr, composed = check_expected(example, render_example(tools, function_target, example))

    claim = yaml.safe_load((example / "xr.yaml").read_text())["metadata"]["labels"]
    assert {c["metadata"].get("namespace") for c in composed} == {
        claim["crossplane.io/claim-namespace"]
    }
    for obj in composed:
        [owner] = obj["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"]) == ("XAIMService", xr["metadata"]["name"])

    twin = ROOT / "examples" / example.name
    _, twin_composed, _ = split(render_example(tools, function_target, twin))
    assert [comparable(c) for c in composed] == [comparable(c) for c in twin_composed]


def test_a_composite_without_a_claim_is_refused_with_what_to_apply(
    tools: Tools, function_target: str, tmp_path: Path
) -> None:
    """A composite applied by hand has no namespace to compose into; the user is told to apply
    the claim instead, and nothing is composed."""
    xr = tmp_path / "xr.yaml"
    xr.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "aim.silogen.ai/v1alpha1",
                "kind": "XAIMService",
                "metadata": {"name": "orphan", "uid": "7f3c2a1e-0000-4000-8000-0000000000c5"},
                "spec": {"model": {"image": "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"}},
            }
        )
    )
    result = render(tools, function_target, xr)
    assert result.returncode != 0
    assert "XAIMService orphan belongs to no claim" in result.stderr
    assert "create an AIMService in a namespace" in result.stderr
