"""The journeys apply the seed documents' manifests as written, and every complete one is applied.

examples/journeys/ holds the manifests the end-to-end journeys apply. A file whose first line
says "as written" holds a seed's manifests and nothing else, each exactly as the seed writes it;
the other files are the project's own (the services the seeds leave out, the prerequisites they
assume). Every complete manifest of seeds 002 and 004 is applied by some journey, or is listed
below with the reason it is not. Needs the seed documents (AIM_SEEDS_DIR, or ../shared/seeds
beside the clone); without them these tests report themselves skipped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from devtools.tools import ROOT

JOURNEYS: Final = ROOT / "examples" / "journeys"

# Seed manifests no journey applies, each with the reason (seed, kind, name) -> why.
NOT_APPLIED: Final = {
    (
        "004",
        "AIMClusterModel",
        "meta-llama-3-8b-instruct",
        "ghcr.io/example/llama-3.1-8b-instruct:v1.2.0",
    ): (
        "'Cluster Model with Discovery': the flow of the 'Model Specification' example (applied) "
        "under the name of the same model; its nvidia.com/gpu resources are not an AMD cluster's"
    ),
    ("004", "AIMModel", "meta-llama-3-8b-dev", "ghcr.io/ml-team/llama-dev:latest"): (
        "'Namespace Model Without Discovery' is not a flow: it names a default template "
        "(custom-template-name) that no seed shows"
    ),
    ("004", "AIMClusterModel", "auto-<hash-of-image>", "ghcr.io/example/my-model:v1.0.0"): (
        "what AIM creates for a service by image, shown as output, not a manifest to apply "
        "(and not a valid name)"
    ),
}


def _documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def _key(doc: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    meta = doc.get("metadata") or {}
    image = (doc.get("spec") or {}).get("image")
    return (str(doc["kind"]), str(meta.get("name")), meta.get("namespace"), image)


def seed_objects(seeds: Path) -> dict[tuple[str, str, str | None, str | None], tuple[str, Any]]:
    """Every complete object (apiVersion, kind, metadata.name) in seeds 002 and 004, by key."""
    found = {}
    for seed in sorted(seeds.glob("00[24]_*.txt")):
        for block in re.findall(r"```yaml\n(.*?)```", seed.read_text(), re.DOTALL):
            for doc in _documents(block):
                if (
                    "apiVersion" in doc
                    and "kind" in doc
                    and (doc.get("metadata") or {}).get("name")
                ):
                    found[_key(doc)] = (seed.name[:3], doc)
    return found


def journey_objects(*, as_written: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(file, object) for every manifest the journeys apply (only the seeds' copies if asked)."""
    return [
        (str(path.relative_to(JOURNEYS)), doc)
        for path in sorted(JOURNEYS.glob("*/*.yaml"))
        if not as_written or "as written" in path.read_text().partition("\n")[0]
        for doc in _documents(path.read_text())
    ]


@pytest.fixture(scope="module")
def seeds(seeds_dir: Path) -> dict[tuple[str, str, str | None, str | None], tuple[str, Any]]:
    return seed_objects(seeds_dir)


def test_a_journey_manifest_from_an_api_document_is_that_documents_exactly(
    seeds: dict[tuple[str, str, str | None, str | None], tuple[str, Any]],
) -> None:
    """A journey step taken from a seed document applies the seed's manifest unchanged."""
    copies = journey_objects(as_written=True)
    for file, doc in copies:
        found = seeds.get(_key(doc))
        assert found is not None, f"{file}: {_key(doc)} is in no seed"
        assert doc == found[1], f"{file}: {_key(doc)} differs from seed {found[0]}"
    assert len(copies) >= 12  # most of what the journeys apply is the seeds' own


def test_every_complete_api_document_manifest_is_applied_by_a_journey_or_excused(
    seeds: dict[tuple[str, str, str | None, str | None], tuple[str, Any]],
) -> None:
    """Every complete manifest of the seeds is exercised by a journey, or excused with a reason."""
    applied = {_key(doc) for _, doc in journey_objects(as_written=True)}
    missing = []
    for key, (seed, _) in sorted(seeds.items(), key=lambda kv: str(kv[0])):
        kind, name, _namespace, image = key
        if key not in applied and (seed, kind, name, image) not in NOT_APPLIED:
            missing.append(f"seed {seed}: {kind} {name}")
    assert missing == []
    # Every excuse still names a manifest the seeds have (a stale one would hide nothing).
    present = {(seed, k, n, i) for (k, n, _ns, i), (seed, _) in seeds.items()}
    assert set(NOT_APPLIED) <= present
