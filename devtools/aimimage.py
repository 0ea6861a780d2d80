"""A test AIM image: Debian's shell and coreutils, `aim` as the entrypoint, AIM's labels.

Discovery Jobs run an AIM image's entrypoint through a shell script (function/build/discovery.sh)
that needs `sh`, `cat`, `wc` and `mv`, so the image is Debian's dash and coreutils, unpacked by
scripts/debian-extract as the runtime image's packages are, plus the `aim` stand-in
(devtools/aimstub) that answers `dry-run --format=json`, serves an OpenAI-compatible endpoint and,
as a download image's entrypoint, fetches a Hugging Face repository from a mirror.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from devtools.oci import File, Image
from devtools.render import Tools, run_script

PACKAGES: Final = "dash,coreutils"
ENTRYPOINT: Final = ("/usr/local/bin/aim",)
DOWNLOAD_ENTRYPOINT: Final = ("/usr/local/bin/aim", "download")
"""A model download image's: run with `<sourceUri> <destination>`."""
LABELS: Final = {
    "com.amd.aim.model.canonicalName": "Org/Small",
    "com.amd.aim.model.source": "hf://Org/Small",
    "com.amd.aim.model.recommendedDeployments": (
        '[{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}]'
    ),
}


def root_filesystem(directory: Path) -> Path:
    """Debian's dash and coreutils unpacked into `directory` (once: reused when present)."""
    if not (directory / "bin" / "sh").exists():
        run_script("debian-extract", PACKAGES, str(directory))
    return directory


def stub_image(
    tools: Tools, name: str, work: Path, entrypoint: tuple[str, ...] = ENTRYPOINT
) -> Image:
    """The test AIM image named `name`, its root filesystem unpacked under `work`.

    With `DOWNLOAD_ENTRYPOINT`, a model download image instead.
    """
    return Image(
        name,
        {ENTRYPOINT[0]: File(tools.aimstub.read_bytes(), 0o755)},
        entrypoint=entrypoint,
        labels=LABELS,
        base=root_filesystem(work / "aim-rootfs"),
    )
