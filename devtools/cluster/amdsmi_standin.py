"""Stands in for AMD SMI's Python library (`amdsmi`), which AIM's runtime asks for the GPUs.

With no GPU here the real library finds none, and AMD's runtime then has no profile to serve.
This module answers the calls the runtime makes (aim_runtime/gpu_detector.py) for the GPUs a
device plugin would have given the container: `AMD_STANDIN_GPU_DEVICE_IDS`, a comma-separated list
of PCI device ids (`74a1` is an MI300X), idle and with 192 GiB free each. It is installed as
`amdsmi` only in the test image (devtools/cluster/amdimage.py); nothing else of the runtime is
replaced. Standard library only, as it runs in the image's Python.
"""

from __future__ import annotations

import os
from typing import Final

VARIABLE: Final = "AMD_STANDIN_GPU_DEVICE_IDS"
VRAM_MB: Final = 196_608


def amdsmi_init() -> None:
    """Nothing to open: the GPUs are the variable's."""


def amdsmi_shut_down() -> None:
    """Nothing to close."""


def amdsmi_get_processor_handles() -> list[str]:
    """One handle per GPU given, its device id."""
    given = os.environ.get(VARIABLE, "")
    return [d.strip() for d in given.split(",") if d.strip()]


def amdsmi_get_gpu_asic_info(handle: str) -> dict[str, str]:
    """The device id, as the library reports it."""
    return {"device_id": f"0x{handle.removeprefix('0x')}"}


def amdsmi_get_gpu_vram_usage(handle: str) -> dict[str, int]:  # noqa: ARG001 - the library's signature
    """All of it free."""
    return {"vram_total": VRAM_MB, "vram_used": 0}


def amdsmi_get_gpu_activity(handle: str) -> dict[str, int]:  # noqa: ARG001 - the library's signature
    """Idle."""
    return {"gfx_activity": 0, "umc_activity": 0, "mm_activity": 0}
