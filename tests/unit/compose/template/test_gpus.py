"""A template's hardware summary, the HARDWARE column of `kubectl get`: what discovery found over
what the spec asked, and CPU only for a template or a profile that needs no GPU."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from function.api.hardware import Hardware
from function.api.template import Profile
from function.compose.template.gpus import summary
from tests.cases import Case, table

CPU_PROFILE = {"metadata": {"gpu_count": 0}}
MI300X_X2 = {"metadata": {"gpu": "MI300X", "gpu_count": 2}}


@dataclass(frozen=True)
class SummaryCase(Case):
    hardware: dict[str, Any] | None
    profile: dict[str, Any] | None
    want: str | None


@table(
    [
        SummaryCase("nothing", "no hardware and no profile: nothing to show", None, None, None),
        SummaryCase(
            "cpu-template",
            "a CPU template before discovery",
            {"cpu": {"requests": "1"}},
            None,
            "CPU",
        ),
        SummaryCase(
            "cpu-profile",
            "a CPU template with the CPU profile AIM's CPU images print",
            {"cpu": {"requests": "1"}},
            CPU_PROFILE,
            "CPU",
        ),
        SummaryCase(
            "cpu-profile-gpu-template",
            "discovery's answer wins: a GPU template given a CPU profile shows it (and is Failed)",
            {"gpu": {"requests": 2, "model": "MI300X"}},
            CPU_PROFILE,
            "CPU",
        ),
        SummaryCase(
            "gpu-models-and-cpu",
            "a template asking for GPUs by models (no count) and CPUs is no CPU template",
            {"gpu": {"models": ["MI300X"]}, "cpu": {"requests": "1"}},
            None,
            "GPU",
        ),
        SummaryCase(
            "gpu-min-vram",
            "a template asking for GPU memory only asks for a GPU",
            {"gpu": {"minVram": "64Gi"}},
            None,
            "GPU",
        ),
        SummaryCase(
            "gpu-model-no-count",
            "a GPU model without a count shows the model",
            {"gpu": {"model": "MI300X"}},
            None,
            "MI300X",
        ),
        SummaryCase(
            "spec-count-and-model",
            "before discovery the spec's count and model",
            {"gpu": {"requests": 4, "model": "MI325X"}},
            None,
            "4 x MI325X",
        ),
        SummaryCase(
            "profile-over-spec",
            "after discovery the profile's count and model, over the spec's",
            {"gpu": {"requests": 1}},
            MI300X_X2,
            "2 x MI300X",
        ),
        SummaryCase(
            "count-no-model",
            "a count and no model anywhere",
            {"gpu": {"requests": 1}},
            None,
            "1 x GPU",
        ),
    ]
)
def test_the_hardware_summary(case: SummaryCase) -> None:
    """Each template shows what it runs on."""
    hardware = Hardware.model_validate(case.hardware) if case.hardware is not None else None
    profile = Profile.model_validate(case.profile) if case.profile is not None else None

    assert summary(hardware, profile) == case.want, case.reason
