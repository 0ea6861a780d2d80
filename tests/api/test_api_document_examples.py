"""Every AIM manifest the AIM API documents show (the specification this implements) is accepted
by our XRDs, migrated where it is old."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import JsonValue

from aim_migrate.rules import collect_context, migrate
from devtools.render.admission import validate_objects
from devtools.tools import Tools

OLD_KINDS = {"AIMImage", "AIMClusterImage", "AIMClusterConfig", "ModelCache"}


def seed_manifests(seeds_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """(seed file, manifest) for each complete AIM object in a YAML block of the seeds.

    Fragments (a bare `spec:` showing one field) are not manifests and are left out.
    """
    found = []
    for seed in sorted(seeds_dir.glob("*.txt")):
        for block in re.findall(r"```yaml\n(.*?)```", seed.read_text(), re.DOTALL):
            found += [(seed.name, doc) for doc in yaml.safe_load_all(block) if _is_aim_object(doc)]
    return found


def _is_aim_object(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and str(doc.get("apiVersion", "")).startswith("aim.silogen.ai/")
        and "kind" in doc
    )


def test_aim_api_document_manifests_validate_after_migration(tools: Tools, seeds_dir: Path) -> None:
    """The seeds' older manifests pass admission once migrated."""
    manifests = seed_manifests(seeds_dir)
    # Seed 002 shows the older generation, seed 004 the canonical one; both must be present.
    seeds = {name[:3] for name, _ in manifests}
    assert {"002", "004"} <= seeds, seeds

    docs: list[JsonValue] = [doc for _, doc in manifests]
    context = collect_context(docs)
    migrated = [migrate(doc, context) for doc in docs]
    for m in migrated:
        assert m.not_carried == [], (m.source, m.not_carried)
        if m.source.split("/")[0] in OLD_KINDS:
            assert m.changes, m.source

    results = validate_objects(
        tools, [m.manifest for m in migrated if isinstance(m.manifest, dict)]
    )
    assert len(results) == len(manifests)
    problems = [(name, errors) for name, errors in results if errors]
    assert problems == []


def test_older_api_document_manifests_are_refused_without_migration(
    tools: Tools, seeds_dir: Path
) -> None:
    """The old generation is converted, not kept alive: as written, the XRDs refuse it."""
    old = [doc for name, doc in seed_manifests(seeds_dir) if name.startswith("002")]
    assert old
    results = validate_objects(tools, old)
    assert len(results) == len(old)
    assert all(errors for _, errors in results), results
