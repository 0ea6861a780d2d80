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
    ModelCase("r9700", "the Radeon AI PRO R9700's one PCI id (Navi 48)", "R9700", ("7551",)),
    ModelCase(
        "r9700-marketing",
        "the AIM operator's and the box's name: `AI` is a word between vendor words",
        "AMD Radeon AI PRO R9700",
        ("7551",),
    ),
    ModelCase(
        "r9700-mixed-case",
        "how a user may type it in spec.hardware.gpu.model",
        "Radeon AI Pro r9700",
        ("7551",),
    ),
    ModelCase(
        "w7900",
        "W7900, its dual-slot board and the W7900D all place on a W7900 template",
        "AMD Radeon PRO W7900",
        ("7448", "744a", "744b"),
    ),
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


@dataclass(frozen=True)
class NodeCase(Case):
    labels: dict[str, str]
    want: frozenset[str]


NODE_CASES = [
    NodeCase(
        "r9700-device-id",
        "the AMD GPU operator's device id label on an R9700 workstation",
        {"amd.com/gpu.device-id": "7551"},
        frozenset({"R9700"}),
    ),
    NodeCase(
        "w7900d-device-id",
        "the W7900D is a W7900 to templates, as in the AIM operator's table",
        {"beta.amd.com/gpu.device-id": "744b"},
        frozenset({"W7900"}),
    ),
    NodeCase(
        "family-only",
        "a node with only the family label still shows an AMD GPU: `AI` is kept, not dropped",
        {"amd.com/gpu.family": "AI"},
        frozenset({"AI"}),
    ),
]


@table(NODE_CASES)
def test_node_labels_name_the_radeon_models(case: NodeCase) -> None:
    """Radeon nodes are known by their device ids, so templates for them find their nodes."""
    assert gpu.node_gpu_models(case.labels) == case.want, case.reason


def test_radeon_memory_places_by_min_vram() -> None:
    """The R9700 has 32 GiB and the W7900 48 GiB: minVram picks them as their memory allows."""
    assert {"R9700", "W7900"} <= set(gpu.models_with_vram("32Gi"))
    assert "W7900" in gpu.models_with_vram("48Gi")
    assert "R9700" not in gpu.models_with_vram("48Gi")


def test_known_model_tells_a_gpu_from_anything_else() -> None:
    """What discovery's accelerator check relies on: a name of a known GPU, or None."""
    assert gpu.known_model("AMD Radeon AI PRO R9700") == "R9700"
    assert gpu.known_model("mi300x") == "MI300X"
    assert gpu.known_model("EPYC_ZEN5") is None  # a CPU profile's accelerator
    assert gpu.known_model("MI999X") is None
    assert gpu.known_model("") is None
