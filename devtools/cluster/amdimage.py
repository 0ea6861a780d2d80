"""AMD's own AIM images, built here from aim-build's source the way its Dockerfiles layer them.

Every other AIM image the tests run is a stand-in (devtools/aimstub). These are AMD's code: the
`aim-runtime` entrypoint that selects a profile and prints the dry-run discovery reads, the
model's profiles, and OCI labels made by AMD's own label generator from the model's
metadata.yaml. The source is test data that is not part of this project (github.com/
amd-enterprise-ai/aim-build, MIT): it is read where it lies, never copied in, and the tests that
need it skip, saying which variable names it, where it is absent.

What differs from AMD's build, because it needs a GPU or Docker: the parent image is Debian
bookworm's Python 3.11 (AMD's is ROCm's vLLM image with 3.12), the requirements are installed as
wheels only, and LMCache, which is built against ROCm and which the runtime does not import, is
left out. The base and the model's layer are one layer here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from devtools.cluster.aimimage import PYTHON, SITE_PACKAGES, install_wheels
from devtools.cluster.oci import File, Image
from devtools.tools import ROOT, HarnessError, run_script

SOURCES: Final = {
    "0.9": ("AIM_BUILD_SRC", ROOT.parent / "shared" / "vendor" / "aim-build-0.9"),
    "2026": ("AIM_BUILD_2026_SRC", ROOT.parent / "shared" / "vendor" / "aim-build-2026"),
}
"""aim-build's trees by release: the variable that names one, and where it is looked for else."""
PACKAGES: Final = f"python3-minimal,libpython{PYTHON}-stdlib,ca-certificates,dash,coreutils"
"""Python, and the shell and tools discovery's wrapper script needs (sh, cat, wc, mv)."""
WORKSPACE: Final = "/workspace"
RUNTIME: Final = f"{WORKSPACE}/aim-runtime"
ENTRYPOINT: Final = ("./entrypoint.py",)
"""Relative, as AMD's images have it: it works only from the image's WorkingDir."""
CONSOLE_SCRIPT: Final = "/usr/local/bin/aim-runtime"
LABEL_TIME: Final = "2026-01-01T00:00:00Z"
"""The labels' creation time, fixed so the same source gives the same image."""


@dataclass(frozen=True)
class Source:
    """An aim-build tree found on disk."""

    release: str
    path: Path


def source(release: str) -> Source | str:
    """The aim-build tree of `release`, or why it cannot be used (a test's skip reason)."""
    variable, default = SOURCES[release]
    path = Path(os.environ.get(variable) or default)
    if not (path / "src" / "entrypoint.py").is_file():
        return f"aim-build {release} source not found at {path}; set {variable} to a checkout"
    return Source(release, path)


def cache_dir() -> Path:
    """Where built root filesystems are kept between runs: the project's tools cache."""
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aim-crossplane"
    return Path(os.environ.get("AIM_CACHE_DIR") or default) / "aim-runtime"


def runtime_root_filesystem(src: Source, cache: Path | None = None) -> Path:
    """Debian's Python with the runtime's pinned requirements, built once and reused."""
    return root_filesystem([src.path / "requirements" / "requirements.txt"], cache=cache)


def root_filesystem(
    requirements: Sequence[Path],
    *,
    pins: Sequence[str] = (),
    packages: str = PACKAGES,
    cache: Path | None = None,
) -> Path:
    """Debian's `packages` with `requirements` and `pins` installed as wheels, built once.

    Kept in `cache` (`cache_dir()` unless given). The requirement files are read at build time
    and key the directory with the pins and the packages, so another release's get their own.
    Built aside and renamed into place, so a run that stops halfway, or two at once, never leave
    a half-made one to reuse.
    """
    digest = hashlib.sha256()
    for part in [*(r.read_bytes() for r in requirements), *(p.encode() for p in pins)]:
        digest.update(part)
    digest.update(packages.encode())
    key = digest.hexdigest()[:12]
    root = cache or cache_dir()
    rootfs = root / f"rootfs-{key}"
    if rootfs.is_dir():
        return rootfs
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=f".rootfs-{key}-") as building:
        aside = Path(building) / "rootfs"
        run_script("debian-extract", packages, str(aside))
        # One resolution for all of them, as one `pip install` of the files would make.
        wanted = Path(building) / "requirements.txt"
        wanted.write_text(
            "".join([*(f"-r {r}\n" for r in requirements), *(f"{p}\n" for p in pins)])
        )
        install_wheels(aside / SITE_PACKAGES, wanted, "--only-binary", ":all:")
        (aside / "tmp").mkdir(exist_ok=True)
        (aside / "tmp").chmod(0o1777)
        with contextlib.suppress(OSError):  # another run got there first: use its
            aside.rename(rootfs)
    return rootfs


def tree(src: Path, to: str) -> dict[str, File]:
    """The files under `src`, at the same places under `to`, as a Dockerfile's COPY puts them."""
    return {
        f"{to}/{f.relative_to(src)}": File(
            f.read_bytes(), 0o755 if os.access(f, os.X_OK) else 0o644
        )
        for f in sorted(src.rglob("*"))
        if f.is_file() and "__pycache__" not in f.parts
    }


def gpu_standins() -> dict[str, File]:
    """What stands in for the GPU in a serving test, at the module names the runtime uses.

    The vLLM server the runtime launches and the AMD SMI library it detects GPUs with
    (`vllm_standin.py`, `amdsmi_standin.py`).
    """
    here = Path(__file__).parent
    site = f"/{SITE_PACKAGES}"
    empty = File(b"")
    return {
        f"{site}/amdsmi/__init__.py": File((here / "amdsmi_standin.py").read_bytes()),
        f"{site}/vllm/__init__.py": empty,
        f"{site}/vllm/entrypoints/__init__.py": empty,
        f"{site}/vllm/entrypoints/openai/__init__.py": empty,
        f"{site}/vllm/entrypoints/openai/api_server.py": File(
            (here / "vllm_standin.py").read_bytes()
        ),
    }


def base_image(
    name: str,
    src: Source,
    *,
    labels: Mapping[str, str] | None = None,
    extra: Mapping[str, File] | None = None,
) -> Image:
    """AMD's AIM base image, as Dockerfile.aim-base layers it.

    The runtime under /workspace/aim-runtime with its general profiles and schemas,
    `./entrypoint.py` run from /workspace, the `aim-runtime` console script, and general
    profiles allowed. It serves the model `AIM_MODEL_ID` names (a custom model's). `extra` files
    are added on top (`gpu_standins()` for a serving test).
    """
    files = {
        **tree(src.path / "src", f"{RUNTIME}/src"),
        **tree(src.path / "schemas", f"{RUNTIME}/schemas"),
        **tree(src.path / "profiles" / "general", f"{RUNTIME}/profiles/general"),
        f"{WORKSPACE}/entrypoint.py": File(
            (src.path / "src" / "entrypoint.py").read_bytes(), 0o755
        ),
        f"{WORKSPACE}/model-cache/.keep": File(b""),
        # What `pip install --no-deps .` writes for the project's `aim-runtime = entrypoint:main`.
        CONSOLE_SCRIPT: File(
            f"#!/usr/bin/python{PYTHON}\nimport sys\nfrom entrypoint import main\n"
            "sys.exit(main())\n".encode(),
            0o755,
        ),
        **(extra or {}),
    }
    return Image(
        name,
        files,
        entrypoint=ENTRYPOINT,
        user="",
        env=(
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PYTHONUNBUFFERED=1",
            f"PYTHONPATH={RUNTIME}/src",
            f"HF_HOME={WORKSPACE}/model-cache",
            f"HF_DATASETS_CACHE={WORKSPACE}/model-cache",
            "HF_HUB_DISABLE_TELEMETRY=1",
            f"AIM_BASE_IMAGE_REF={name}",
            "AIM_ALLOW_GENERAL_PROFILE_FALLBACK=true",
        ),
        labels=labels or {},
        base=runtime_root_filesystem(src),
        working_dir=WORKSPACE,
    )


def model_image(
    name: str,
    src: Source,
    model: str,
    *,
    labels: Mapping[str, str],
    extra: Mapping[str, File] | None = None,
) -> Image:
    """The AIM image of `model` (`<org>/<name>`, a directory of the source's profiles/).

    As Dockerfile.aim layers it on the base image: the model's profiles, `AIM_ID`, and no
    fallback to general profiles.
    """
    profiles = src.path / "profiles" / model
    if not profiles.is_dir():
        msg = f"{src.path} has no profiles for {model}"
        raise HarnessError(msg)
    base = base_image(f"{name.rsplit(':', 1)[0]}-base", src, extra=extra)
    # Docker's ENV: a name set again replaces the base's value, in the base's place.
    env = dict(e.partition("=")[::2] for e in base.env)
    env.update({"AIM_ID": model, "AIM_ALLOW_GENERAL_PROFILE_FALLBACK": "false"})
    return replace(
        base,
        name=name,
        files={**base.files, **tree(profiles, f"{RUNTIME}/profiles/{model}")},
        env=tuple(f"{k}={v}" for k, v in env.items()),
        labels=labels,
    )


def generated_labels(
    metadata: Path, generator: Source, *, model: str, version: str
) -> dict[str, str]:
    """The OCI labels AMD's generator (aim-build's `aim_utils.generate_labels`) makes.

    From a model's metadata.yaml, as aim-build's CI passes them to `docker build --label`.

    Run in a child process, so AMD's modules never enter this one's import path. Read as the
    generator's dict, not its `key=value` text, whose values may hold newlines.
    """
    org, model_name = model.split("/", 1)
    program = (
        "import json, sys\nfrom aim_utils.generate_labels import generate_labels\n"
        "json.dump(generate_labels(sys.argv[1]), sys.stdout)\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(generator.path / "src"),
        "LABELS_SERVER_URL": "https://github.com",
        "LABELS_REPOSITORY": "amd-enterprise-ai/aim-build",
        "LABELS_VERSION_NUMBER": version,
        "LABELS_ORG": org,
        "LABELS_MODEL_NAME": model_name,
        "LABELS_SHA": "0" * 40,
        "LABELS_TIMESTAMP": LABEL_TIME,
    }
    proc = subprocess.run(
        [sys.executable, "-c", program, str(metadata)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if proc.returncode != 0:
        msg = f"aim-build's label generator failed on {metadata}: {proc.stderr.strip()[-2000:]}"
        raise HarnessError(msg)
    labels = json.loads(proc.stdout)
    return {str(k): str(v) for k, v in labels.items()}
