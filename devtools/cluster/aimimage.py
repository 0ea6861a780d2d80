"""The end-to-end tier's images: a test AIM image, and a storage initializer to download with.

Discovery Jobs run an AIM image's entrypoint through a shell script (function/build/discovery.sh)
that needs `sh`, `cat`, `wc` and `mv`, so the test AIM image is Debian's dash and coreutils,
unpacked by scripts/debian-extract as the runtime image's packages are, plus the `aim` stand-in
(devtools/aimstub) that answers `dry-run --format=json` and serves an OpenAI-compatible endpoint.

A model cache's Jobs run the model download image: its entrypoint with `<sourceUri>
<destination>`, and `python3` for the size check, the progress sidecar and the verification.
`storage_initializer_image` is built the way KServe's storage-initializer is, without Docker:
Debian's Python (the same release and Python version as KServe's image, python:3.11-slim-bookworm)
with the `download-image` group of uv.lock installed with their hashes (`kserve-storage` at the
version of the KServe we compose for, and the `huggingface_hub` its image locks), and our own
entrypoint (storage_initializer.py) at the path KServe's image runs.
tests/unit/repo/test_download_image.py holds these to KServe's Dockerfile and lock, and to the
default `modelDownloadImage`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from devtools.cluster.oci import File, Image
from devtools.tools import ROOT, Tools, run_script, run_tool, uv

PACKAGES: Final = "dash,coreutils"
PYTHON: Final = "3.11"
"""Debian bookworm's (scripts/debian-extract's default suite), as in KServe's image."""
PYTHON_PACKAGES: Final = f"python3-minimal,libpython{PYTHON}-stdlib,ca-certificates"
SITE_PACKAGES: Final = "usr/lib/python3/dist-packages"
ENTRYPOINT: Final = ("/usr/local/bin/aim",)
STORAGE_INITIALIZER_ENTRYPOINT: Final = ("/storage-initializer/scripts/initializer-entrypoint",)
"""Run with `<sourceUri> <destination>` pairs, where KServe's storage-initializer has its own."""
STORAGE_INITIALIZER_USER: Final = "1000"
"""KServe's image's `USER` (the download Jobs run as 1000 whatever the image says)."""
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
    """The test AIM image named `name`, its root filesystem unpacked under `work`."""
    return Image(
        name,
        {ENTRYPOINT[0]: File(tools.aimstub.read_bytes(), 0o755)},
        entrypoint=entrypoint,
        labels=LABELS,
        base=root_filesystem(work / "aim-rootfs"),
    )


def storage_initializer_image(name: str, work: Path) -> Image:
    """A model download image named `name`, as KServe's storage-initializer is made.

    Its root filesystem is made under `work` once, and reused when present.
    """
    script = (Path(__file__).parent / "storage_initializer.py").read_text()
    entrypoint = f"#!/usr/bin/python{PYTHON}\n{script}".encode()
    return Image(
        name,
        {STORAGE_INITIALIZER_ENTRYPOINT[0]: File(entrypoint, 0o755)},
        entrypoint=STORAGE_INITIALIZER_ENTRYPOINT,
        user=STORAGE_INITIALIZER_USER,
        base=python_root_filesystem(work),
    )


def python_root_filesystem(work: Path) -> Path:
    """Debian's Python with the `download-image` group of uv.lock, under `work` (once: reused)."""
    rootfs = work / "python-rootfs"
    site = rootfs / SITE_PACKAGES
    if not (site / "kserve_storage").is_dir():
        run_script("debian-extract", PYTHON_PACKAGES, str(rootfs))
        requirements = work / "download-image.txt"
        export: list[str | Path] = [uv(), "--project", ROOT, "export", "--frozen", "--quiet"]
        group = ["--only-group", "download-image", "--no-emit-project"]
        requirements.write_text(run_tool([*export, *group], "uv export"))
        install_wheels(site, requirements, "--no-deps", "--require-hashes")
    return rootfs


def install_wheels(site: Path, requirements: Path, *options: str) -> None:
    """Install `requirements` into an image's `site` directory, with uv's `options`.

    For the image's Python (Debian bookworm's 3.11 on x86-64), not this host's.
    """
    run_tool(
        [uv(), "pip", "install", "--quiet", *options,
         "--target", site, "--python-version", PYTHON,
         "--python-platform", "x86_64-manylinux_2_28", "-r", requirements],
        f"uv pip install -r {requirements.name}",
    )  # fmt: skip
