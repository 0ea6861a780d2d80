"""The RBAC platform teams apply for Crossplane (package/rbac) matches what the function does."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_crossplane_rbac_covers_what_the_function_composes_and_reads() -> None:
    """package/rbac grants Crossplane every kind the composers emit or require."""
    role = yaml.safe_load((ROOT / "package" / "rbac" / "aggregate-to-crossplane.yaml").read_text())
    assert role["metadata"]["labels"]["rbac.crossplane.io/aggregate-to-crossplane"] == "true"
    granted = {
        (g, r): set(rule["verbs"])
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    for composed in [
        ("batch", "jobs"),
        ("", "persistentvolumeclaims"),
        ("serving.kserve.io", "inferenceservices"),
        ("gateway.networking.k8s.io", "httproutes"),
    ]:
        assert {"create", "update", "delete", "watch"} <= granted[composed]
    for read in [("", "nodes"), ("", "pods"), ("", "secrets")]:
        assert {"get", "list", "watch"} <= granted[read]
