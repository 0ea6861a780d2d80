"""Check AIM manifests against the generated XRDs with the API server's own validation code.

Two checks, both offline:

* creation: `crossplane resource validate` (schema, unknown fields, CEL) on a set of objects;
* update: `apicheck` (devtools/apicheck, Go) on (old, new) pairs, for the CEL transition rules
  (immutability) that need the old object, after checking the CRDs Crossplane derives from our
  XRDs would be accepted by the API server.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml
from pydantic import JsonValue

from devtools.tools import ROOT, HarnessError, Tools, run_tool

XRDS: Final = ROOT / "xrds"

Manifest = dict[str, JsonValue]


@dataclass(frozen=True)
class Update:
    """An update of `old` to `new`, as `kubectl apply` would send it."""

    name: str
    old: Manifest
    new: Manifest


def validate_objects(tools: Tools, objects: Sequence[Manifest]) -> list[tuple[str, list[str]]]:
    """Validate objects as creations: `kind/name` and the error messages of each, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "objects.yaml"
        path.write_text(yaml.safe_dump_all(objects))
        proc = subprocess.run(
            [
                str(tools.crossplane),
                "resource",
                "validate",
                "--crossplane-image=",
                "--error-on-missing-schemas",
                "--output=json",
                str(XRDS),
                str(path),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        msg = f"crossplane resource validate printed no report: {proc.stderr[-2000:]}"
        raise HarnessError(msg) from e
    results = []
    for r in report["resources"]:
        key = f"{r['kind']}/{r['name']}"
        if r["status"] == "missingSchema":
            results.append((key, ["no schema for this kind"]))
        else:
            results.append((key, [e["message"] for e in r.get("errors") or ()]))
    return results


def xrd_crds(tools: Tools, out: Path) -> list[Path]:
    """The CRDs Crossplane derives from each generated XRD (`crossplane xrd convert`)."""
    paths = []
    for xrd in sorted(XRDS.glob("*.yaml")):
        crd = out / xrd.name
        run_tool(
            [tools.crossplane, "xrd", "convert", xrd, "-o", crd],
            f"crossplane xrd convert {xrd.name}",
        )
        paths.append(crd)
    return paths


def check_updates(
    tools: Tools, crds: Sequence[Path], updates: Sequence[Update]
) -> dict[str, list[str]]:
    """Validate each update as the API server would; the error messages, keyed by name.

    Raises:
        HarnessError: apicheck failed, for instance because the API server would refuse a CRD.
    """
    cases = [{"name": u.name, "old": u.old, "new": u.new} for u in updates]
    proc = subprocess.run(
        [str(tools.apicheck), *map(str, crds)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise HarnessError(proc.stderr.strip())
    return {r["name"]: list(r["errors"] or ()) for r in json.loads(proc.stdout)}
