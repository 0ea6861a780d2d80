"""GPU model names map to the PCI device ids that node affinity selects on."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from function.rules import gpu
from function.rules.gpu import UnknownGpuModelError, device_ids
from tests.cases import Case, table


@dataclass(frozen=True)
class ModelCase(Case):
    model: str
    want: tuple[str, ...]


MODEL_CASES = [
    ModelCase("short", "the name templates use", "MI300X", ("74a1", "74a9", "74b5", "74bd")),
    ModelCase("lower-case", "case does not matter", "mi300x", ("74a1", "74a9", "74b5", "74bd")),
    ModelCase(
        "marketing", "the name on the box, with spaces", "AMD Instinct MI325X", ("74a5", "74b9")
    ),
    ModelCase(
        "family-label",
        "the GPU operator's family label value",
        "amd_instinct_mi210",
        ("740f", "7410"),
    ),
    ModelCase("apu", "MI300A is not MI300X: one id of its own", "MI300A", ("74a0",)),
]


@table(MODEL_CASES)
def test_device_ids_are_sorted_for_any_spelling(case: ModelCase) -> None:
    """Spelling variants resolve to one model; ids are sorted so output is deterministic."""
    assert case.want == device_ids(case.model), case.reason


def test_unknown_model_names_the_known_ones() -> None:
    """A typo gets an error that lists what would have worked, not an affinity nobody matches."""
    with pytest.raises(UnknownGpuModelError, match=r"'MI999X'.*MI300X"):
        device_ids("MI999X")


def test_models_with_vram_reads_kubernetes_quantities() -> None:
    """minVram accepts every Kubernetes quantity notation."""
    assert gpu.models_with_vram("256Gi") == ("MI325X", "MI350X", "MI355X")
    assert "MI300X" in gpu.models_with_vram("192Gi")
    assert "MI300X" in gpu.models_with_vram("200G")  # 200 GB is 186 GiB
    assert gpu.models_with_vram("1Ti") == ()
    with pytest.raises(ValueError, match="minVram"):
        gpu.models_with_vram("lots")
