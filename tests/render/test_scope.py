"""An XR whose metadata contradicts its kind's scope, through the real render engine: refused with
the fix, nothing composed. The API server never lets such an object exist, but a manifest given to
`crossplane render` (or a hand-written test) can, and must not make a cluster kind read a
namespace's Secrets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from devtools.render.harness import render
from devtools.tools import Tools
from tests.cases import Case, table

IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"


@dataclass(frozen=True)
class Contradiction(Case):
    kind: str
    metadata: dict[str, Any]
    says: str
    fix: str


CASES = [
    Contradiction(
        "cluster-model-in-a-namespace",
        "the issue's case: a cluster model naming a namespace would read that namespace's Secrets",
        "AIMClusterModel",
        {"name": "qwen", "namespace": "team"},
        "AIMClusterModel qwen carries metadata.namespace 'team'",
        "remove metadata.namespace",
    ),
    Contradiction(
        "model-without-a-namespace",
        "a namespaced model without a namespace would read the function's own namespace",
        "AIMModel",
        {"name": "qwen"},
        "AIMModel qwen has no metadata.namespace",
        "set metadata.namespace",
    ),
]


@table(CASES)
def test_an_xr_of_the_wrong_scope_is_refused_with_the_fix(
    tools: Tools, function_target: str, tmp_path: Path, case: Contradiction
) -> None:
    """The render fails with the function's fatal result, which names the kind and object."""
    xr = tmp_path / "xr.yaml"
    meta = {**case.metadata, "uid": "7f3c2a1e-0000-4000-8000-0000000000d1"}
    xr.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "aim.silogen.ai/v1alpha1",
                "kind": case.kind,
                "metadata": meta,
                "spec": {"image": IMAGE},
            }
        )
    )
    result = render(tools, function_target, xr)
    assert result.returncode != 0, case.reason
    assert case.says in result.stderr, case.reason
    assert case.fix in result.stderr, case.reason
