"""The test storage initializer's entrypoint hands the download Job's arguments to kserve-storage.

It runs in the image (devtools/cluster/storage_initializer.py), where kserve-storage is; here a
stand-in module records the call, so what the entrypoint itself decides is checked: the pairs it
passes, and the exit code and last line a Job's termination message falls back to.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import pytest

from devtools.cluster import storage_initializer
from tests.cases import Case, table


@dataclass
class KserveStorage:
    """What `kserve_storage.Storage.download_files` was given, and what it raises."""

    fails: Exception | None = None
    calls: list[tuple[list[str], list[str]]] = field(default_factory=list)

    def download_files(self, sources: list[str], destinations: list[str]) -> list[str]:
        self.calls.append((sources, destinations))
        if self.fails:
            raise self.fails
        return destinations


@pytest.fixture
def kserve(monkeypatch: pytest.MonkeyPatch) -> KserveStorage:
    """kserve_storage, as the image has it, replaced by a recorder."""
    storage = KserveStorage()
    package = types.ModuleType("kserve_storage")
    package.Storage = storage  # type: ignore[attr-defined]
    logging = types.ModuleType("kserve_storage.logging")
    logging.configure_logging = lambda: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kserve_storage", package)
    monkeypatch.setitem(sys.modules, "kserve_storage.logging", logging)
    return storage


@dataclass(frozen=True)
class PairsCase(Case):
    args: tuple[str, ...]
    sources: list[str]
    destinations: list[str]


PAIRS_CASES = [
    PairsCase(
        "one-pair",
        "what a model cache's download Job gives: the source, then /mnt/models",
        ("hf://Org/Small", "/mnt/models"),
        ["hf://Org/Small"],
        ["/mnt/models"],
    ),
    PairsCase(
        "two-pairs",
        "KServe's convention allows several pairs: each source with the destination after it",
        ("s3://b/a", "/mnt/a", "hf://Org/B", "/mnt/b"),
        ["s3://b/a", "hf://Org/B"],
        ["/mnt/a", "/mnt/b"],
    ),
]


@table(PAIRS_CASES)
def test_each_source_goes_to_the_destination_after_it(
    kserve: KserveStorage, case: PairsCase
) -> None:
    """The pairs reach kserve-storage in their order, in one call, as KServe's entrypoint does."""
    assert storage_initializer.main(case.args) == 0
    assert kserve.calls == [(case.sources, case.destinations)]


@dataclass(frozen=True)
class UsageCase(Case):
    args: tuple[str, ...]


USAGE_CASES = [
    UsageCase("none", "an image run without the Job's arguments", ()),
    UsageCase("source-only", "a source without a destination", ("hf://Org/Small",)),
    UsageCase("odd", "a second source without its destination", ("a", "/mnt/a", "b")),
]


@table(USAGE_CASES)
def test_arguments_that_are_not_pairs_download_nothing(
    kserve: KserveStorage, capsys: pytest.CaptureFixture[str], case: UsageCase
) -> None:
    """Exit 2 with the usage, before anything is fetched."""
    assert storage_initializer.main(case.args) == 2
    assert kserve.calls == []
    assert capsys.readouterr().err.startswith("usage: initializer-entrypoint SOURCE_URI")


def test_a_failed_download_exits_1_and_says_why_last(
    kserve: KserveStorage, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Job's container falls back to its log's tail: the reason must be the last line."""
    kserve.fails = RuntimeError("HuggingFace authentication failed. Set HF_TOKEN")
    assert storage_initializer.main(["hf://Org/Small", "/mnt/models"]) == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == (
        "storage-initializer: RuntimeError: HuggingFace authentication failed. Set HF_TOKEN"
    )
