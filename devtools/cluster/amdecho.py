"""AMD's CPU play model, `example/echo-model`, built here as aim-build's newer tree layers it.

Three layers in AMD's build, one here: the model's own (BentoML and the echo service under
/workspace/model, put on the path by a .pth file), the CPU base (`Dockerfile.aim-cpu-base`: the
runtime without developer tooling, an engine config, CPU general profiles, accelerator family
`cpu`) and the model's (`Dockerfile.aim`: its profile, `AIM_ID`, no general fallback). AMD's
runtime detects the CPU, selects the echo profile and starts BentoML, which answers
`POST /predict` with the text reversed: no GPU is involved, so nothing is stood in for.

What differs from AMD's build:
- Debian bookworm's Python 3.11 (and the C++ runtime ZeroMQ's wheel links) for
  `python:3.12-slim`; no pip, no locale settings, and the requirement files are not copied into
  the image (nothing reads them there).
- The three requirement files are resolved together, wheels only, where AMD's build installs
  them one after another.
- The engine config is AMD's BentoML one from its instinct BentoML base: the tree has none where
  the CPU base's Dockerfile copies it from (`assets/cpu/base/config`).
- `AIM_UPSTREAM_IMAGE_REF` and `AIM_BASE_IMAGE_REF` name parents that are not built separately
  here; the runtime reads neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from devtools.cluster.aimimage import SITE_PACKAGES
from devtools.cluster.amdimage import PACKAGES, RUNTIME, WORKSPACE, Source, root_filesystem, tree
from devtools.cluster.oci import File, Image
from devtools.tools import HarnessError

MODEL: Final = "example/echo-model"
PROFILE: Final = "bentoml-cpu-fp32-tp1-latency"
ENGINE: Final = "bentoml"
ENGINE_PINS: Final = ("bentoml==1.4.39",)
"""What one resolution of the three files picks (1.4.40 wants a newer certifi than the runtime
pins), pinned so the cache key, which hashes the files and not what they resolve to, names what
the root filesystem holds."""
MODEL_DIR: Final = f"{WORKSPACE}/model"
PARENT: Final = "docker.io/library/python:3.12-slim"
"""The parent AMD's echo image names (its config.yaml); `AIM_UPSTREAM_IMAGE_REF` says it here."""


def _assets(src: Source) -> Path:
    return src.path / "assets" / "cpu" / MODEL


def echo_root_filesystem(src: Source) -> Path:
    """Python with the runtime's CPU requirements, BentoML and the echo service's, cached."""
    requirements = src.path / "requirements"
    return root_filesystem(
        [
            requirements / "requirements.txt",
            requirements / "cpu-requirements.txt",
            _assets(src) / "image" / "requirements.txt",
        ],
        pins=ENGINE_PINS,
        # BentoML's process manager talks ZeroMQ, whose wheel links the C++ runtime, which
        # python:3.12-slim has and Debian's bare Python does not.
        packages=f"{PACKAGES},libstdc++6",
    )


def echo_image(name: str, src: Source, *, labels: Mapping[str, str]) -> Image:
    """The AIM image of `example/echo-model` from the newer aim-build tree `src`."""
    assets = _assets(src)
    engines = src.path / "assets" / "instinct" / "base" / ENGINE / "config"
    for needed in (assets / "profiles", assets / "image" / "src", engines):
        if not needed.is_dir():
            msg = f"{src.path} has no {needed.relative_to(src.path)}: not aim-build's newer tree"
            raise HarnessError(msg)
    runtime = src.path / "src"
    files = {
        # The model's layer (its Dockerfile).
        f"{MODEL_DIR}/requirements.txt": File((assets / "image" / "requirements.txt").read_bytes()),
        f"{MODEL_DIR}/bentofile.yaml": File((assets / "image" / "bentofile.yaml").read_bytes()),
        **tree(assets / "image" / "src", f"{MODEL_DIR}/src"),
        f"/{SITE_PACKAGES}/workspace-model.pth": File(f"{MODEL_DIR}/src\n".encode()),
        # The CPU base (Dockerfile.aim-cpu-base).
        **tree(runtime / "aim_runtime", f"{RUNTIME}/src/aim_runtime"),
        **tree(runtime / "aim_common", f"{RUNTIME}/src/aim_common"),
        f"{WORKSPACE}/entrypoint.py": File((runtime / "entrypoint.py").read_bytes(), 0o755),
        **tree(src.path / "assets" / "cpu" / "base" / "profiles" / "general",
               f"{RUNTIME}/profiles/general"),
        **tree(engines, f"{RUNTIME}/config"),
        f"{WORKSPACE}/model-cache/.keep": File(b""),
        f"{WORKSPACE}/LICENSE": File((src.path / "LICENSE").read_bytes()),
        # The model's AIM layer (Dockerfile.aim).
        **tree(assets / "profiles", f"{RUNTIME}/profiles/{MODEL}"),
    }  # fmt: skip
    return Image(
        name,
        files,
        entrypoint=("./entrypoint.py",),
        user="",
        env=(
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PYTHONUNBUFFERED=1",
            "DEBIAN_FRONTEND=noninteractive",
            f"PYTHONPATH={RUNTIME}/src",
            f"HF_HOME={WORKSPACE}/model-cache",
            f"HF_DATASETS_CACHE={WORKSPACE}/model-cache",
            "HF_HUB_DISABLE_TELEMETRY=1",
            f"AIM_UPSTREAM_IMAGE_REF={PARENT}",
            # The base allows general profiles; the model's layer sets it again, in place.
            "AIM_ALLOW_GENERAL_PROFILE_FALLBACK=false",
            f"AIM_CONFIG_PATH={RUNTIME}/config",
            "AIM_ACCELERATOR_FAMILY=cpu",
            "AIM_ACCELERATOR_TYPE=cpu",
            "VLLM_CPU_OMP_THREADS_BIND=auto",
            f"AIM_BASE_IMAGE_REF={name.rsplit(':', 1)[0]}-cpu-base",
            f"AIM_ID={MODEL}",
        ),
        labels=labels,
        base=echo_root_filesystem(src),
        working_dir=WORKSPACE,
    )
