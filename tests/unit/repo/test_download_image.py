"""The default modelDownloadImage is the image the node tests' storage initializer is built as.

Users download with KServe's storage initializer (function/api/cache.py DEFAULT_DOWNLOAD_IMAGE);
the node tests (tests/e2e/test_node.py) run the size check, the download, the progress sidecar
and the verification in an image built without Docker
(devtools.cluster.aimimage.storage_initializer_image). Docker is not here to pull KServe's, so
what the composed Jobs rely on is read from the Dockerfile KServe builds it with, in the KServe
module scripts/build-tools.sh fetches: the release, the entrypoint the download's arguments go
to, the kserve-storage and huggingface_hub it runs, and the Python the Jobs' `python3 -c`
scripts run on.

One difference stays, by design: KServe's Python is the Docker library's build of CPython
(`python:3.11-slim-bookworm`, in /usr/local), the test image's is Debian bookworm's `python3.11`;
the same minor version on the same Debian release, not the same binary.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from devtools.cluster import aimimage
from devtools.tools import ROOT
from function.api.cache import DEFAULT_DOWNLOAD_IMAGE
from function.build.storage import RUN_AS

KSERVE_VERSION = re.search(
    r"^KSERVE_VERSION=(v\S+)", (ROOT / "scripts" / "build-tools.sh").read_text(), re.MULTILINE
)
assert KSERVE_VERSION, "scripts/build-tools.sh pins no KSERVE_VERSION"
RELEASE = KSERVE_VERSION[1]


def kserve_module() -> Path:
    """KServe's module at RELEASE in the Go module cache scripts/build-tools.sh fills."""
    cache = os.environ.get("AIM_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aim-crossplane"
    )
    module = Path(cache) / "go" / "mod" / "github.com" / "kserve" / f"kserve@{RELEASE}"
    if not module.is_dir():
        pytest.skip(f"KServe's module is not at {module}: scripts/build-tools.sh fetches it")
    return module


def kserve_python(path: str) -> str:
    """A file of KServe's python/ directory."""
    return (kserve_module() / "python" / path).read_text()


def dockerfile() -> tuple[dict[str, str], list[str]]:
    """KServe's storage-initializer Dockerfile: its ARG defaults, and its last stage's lines."""
    lines = kserve_python("storage-initializer.Dockerfile").splitlines()
    args = {m[1]: m[2] for line in lines if (m := re.match(r"ARG (\w+)=(\S+)", line))}
    last = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    return args, lines[last:]


def locked(name: str) -> str:
    """The version of `name` uv.lock pins."""
    packages = tomllib.loads((ROOT / "uv.lock").read_text())["package"]
    [version] = [p["version"] for p in packages if p["name"] == name]
    return str(version)


def test_the_default_is_the_storage_initializer_of_the_kserve_we_compose_for() -> None:
    """KServe tags its storage initializer with its release (its installers name it so); the
    default follows the release whose InferenceService CRD the function composes."""
    assert DEFAULT_DOWNLOAD_IMAGE.rsplit(":", 1) == ["kserve/storage-initializer", RELEASE]


def test_the_test_image_runs_the_kserve_storage_of_that_release() -> None:
    """The download-image group pins kserve-storage at the release, and uv.lock locks it."""
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    version = RELEASE.removeprefix("v")
    assert f"kserve-storage=={version}" in groups["download-image"]
    assert locked("kserve-storage") == version


def test_kserve_builds_its_image_from_that_kserve_storage() -> None:
    """The Dockerfile installs the release's own storage package: the version the tests run."""
    storage = tomllib.loads(kserve_python("storage/pyproject.toml"))["project"]
    assert (storage["name"], storage["version"]) == ("kserve-storage", locked("kserve-storage"))
    assert "COPY storage storage" in kserve_python("storage-initializer.Dockerfile")


def test_the_test_image_has_the_huggingface_hub_kserve_s_image_locks() -> None:
    """The download, the size check and the verification all call huggingface_hub: the test
    image's is the version KServe's image installs (its storage/uv.lock, `uv sync`)."""
    assert "uv sync" in kserve_python("storage-initializer.Dockerfile")
    theirs = tomllib.loads(kserve_python("storage/uv.lock"))["package"]
    [version] = [p["version"] for p in theirs if p["name"] == "huggingface-hub"]
    assert locked("huggingface-hub") == version


def test_the_download_runs_the_entrypoint_kserve_s_image_runs() -> None:
    """The download Job gives the image only arguments: KServe's ENTRYPOINT is the path the test
    image runs, and both hand the `<sourceUri> <destination>` pairs to kserve-storage."""
    _, stage = dockerfile()
    [entrypoint] = [
        json.loads(line.removeprefix("ENTRYPOINT "))
        for line in stage
        if line.startswith("ENTRYPOINT ")
    ]
    assert tuple(entrypoint) == aimimage.STORAGE_INITIALIZER_ENTRYPOINT
    assert "COPY ./storage-initializer /storage-initializer" in stage
    theirs = kserve_python("storage-initializer/scripts/initializer-entrypoint")
    ours = (ROOT / "devtools" / "cluster" / "storage_initializer.py").read_text()
    assert "Storage.download_files(src_uris, dest_paths)" in theirs
    assert "Storage.download_files(sources, destinations)" in ours


def test_the_jobs_python_scripts_run_on_the_same_python_release() -> None:
    """The size check, the sidecar and the verification are `python3 -c` in the image: KServe's
    is Python 3.11 on Debian bookworm, as the test image's (Debian's own build of it)."""
    args, stage = dockerfile()
    base = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], args["BASE_IMAGE"])
    assert stage[0] in {"FROM ${BASE_IMAGE} AS prod", f"FROM {base} AS prod"}
    match = re.fullmatch(r"python:(\d+\.\d+)-slim-(\w+)", base)
    assert match, f"KServe's base {base} is not the Docker library's slim Debian Python"
    extract = (ROOT / "scripts" / "debian-extract").read_text()
    suite = re.search(r"suite=\$\{SUITE:-(\w+)\}", extract)
    assert suite
    assert (match[1], match[2]) == (aimimage.PYTHON, suite[1])


def test_the_jobs_run_as_the_user_kserve_s_image_is_made_for() -> None:
    """KServe's image runs as 1000 and owns /mnt for it; the Jobs run as that uid, as does the
    test image."""
    _, stage = dockerfile()
    assert "USER 1000" in stage
    assert "RUN chown -R kserve:kserve /mnt" in stage
    assert any(line.startswith("RUN useradd kserve -m -u 1000") for line in stage)
    assert str(RUN_AS) == aimimage.STORAGE_INITIALIZER_USER == "1000"
