"""GPU model names map to the PCI device ids that node affinity selects on."""

from __future__ import annotations

import pytest

from function.rules import gpu
from function.rules.gpu import UnknownGpuModelError, device_ids


@pytest.mark.parametrize(
    ("model", "want"),
    [
        ("MI300X", ("74a1", "74a9", "74b5", "74bd")),
        ("mi300x", ("74a1", "74a9", "74b5", "74bd")),
        ("AMD Instinct MI325X", ("74a5", "74b9")),
        ("amd_instinct_mi210", ("740f", "7410")),
        ("MI300A", ("74a0",)),
    ],
)
def test_device_ids_are_sorted_for_any_spelling(model: str, want: tuple[str, ...]) -> None:
    """Spelling variants resolve to one model; ids are sorted so output is deterministic."""
    assert want == device_ids(model)


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
