"""A test AIM image: Debian's shell and coreutils, `aim` as the entrypoint, AIM's labels.

Discovery Jobs run an AIM image's entrypoint through a shell script (function/build/discovery.sh)
that needs `sh`, `cat`, `wc` and `mv`, so the image is Debian's dash and coreutils, unpacked by
scripts/debian-extract as the runtime image's packages are, plus the `aim` stand-in
(devtools/aimstub) that answers `dry-run --format=json`, serves an OpenAI-compatible endpoint and,
as a download image's entrypoint, fetches a Hugging Face repository from a mirror.

The size check runs Python with `huggingface_hub` in the model download image (as KServe's
storage-initializer carries them), so `size_check_image` is Debian's Python with the version of
`huggingface_hub` uv.lock pins in its `download-image` group, installed with their hashes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from devtools.cluster.oci import File, Image
from devtools.tools import ROOT, Tools, run_script, run_tool

PACKAGES: Final = "dash,coreutils"
PYTHON_PACKAGES: Final = "python3-minimal,libpython3.11-stdlib,ca-certificates"
SITE_PACKAGES: Final = "usr/lib/python3/dist-packages"
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


def size_check_image(name: str, work: Path) -> Image:
    """A model download image for size checks, named `name`: `python3` with `huggingface_hub`.

    Its root filesystem is made under `work` once, and reused when present.
    """
    return Image(name, {}, base=python_root_filesystem(work))


def download_image(tools: Tools, name: str, work: Path) -> Image:
    """A model download image named `name`: `aim download`, and `python3` for the sidecar.

    The stand-in's `download` fetches a Hugging Face repository from a mirror; the download's
    progress sidecar runs `python3`, which KServe's storage-initializer carries too.
    """
    return Image(
        name,
        {ENTRYPOINT[0]: File(tools.aimstub.read_bytes(), 0o755)},
        entrypoint=DOWNLOAD_ENTRYPOINT,
        base=python_root_filesystem(work),
    )


def python_root_filesystem(work: Path) -> Path:
    """Debian's Python with the locked `huggingface_hub`, under `work` (once: reused)."""
    rootfs = work / "python-rootfs"
    site = rootfs / SITE_PACKAGES
    if not (site / "huggingface_hub").is_dir():
        run_script("debian-extract", PYTHON_PACKAGES, str(rootfs))
        bootstrap = run_tool(["bash", ROOT / "scripts" / "bootstrap.sh"], "scripts/bootstrap.sh")
        uv = bootstrap.split()[-1]
        requirements = work / "download-image.txt"
        export: list[str | Path] = [uv, "--project", ROOT, "export", "--frozen", "--quiet"]
        group = ["--only-group", "download-image", "--no-emit-project"]
        requirements.write_text(run_tool([*export, *group], "uv export"))
        run_tool(
            [uv, "pip", "install", "--quiet", "--no-deps", "--require-hashes",
             "--target", site, "--python-version", "3.11",
             "--python-platform", "x86_64-manylinux_2_28", "-r", requirements],
            "uv pip install",
        )  # fmt: skip
    return rootfs
