"""The Dockerfile and scripts/build-image must make the same image; read, since Docker is not here.

scripts/build-image is what the tests build and run (tests/image); the Dockerfile is for users
with Docker. What a user would notice if they disagreed is checked here: the Python, the user,
the entrypoint, the oras version and the dependency set.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from devtools.tools import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
BUILD_IMAGE = (ROOT / "scripts" / "build-image").read_text()
# Debian releases by the number distroless names them with, and the Python each one ships.
DEBIAN = {"12": ("bookworm", "3.11")}


def stages() -> list[tuple[str, list[str]]]:
    """(resolved base image, instructions) per stage."""
    lines = DOCKERFILE.splitlines()
    args = {m[1]: m[2] for line in lines if (m := re.match(r"ARG (\w+)=(\S+)", line))}
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("FROM "):
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], line.split()[1])
            out.append((image, []))
        elif out and line and not line.startswith("#"):
            out[-1][1].append(line)
    return out


def script_setting(name: str) -> str:
    match = re.search(rf"^{name}=(\S+)", BUILD_IMAGE, re.MULTILINE)
    assert match, f"scripts/build-image sets no {name}"
    return match[1]


def runtime() -> tuple[str, list[str]]:
    return stages()[-1]


def test_both_run_debian_bookworms_python_311() -> None:
    """The same interpreter in both images: the venv links it by path and version."""
    base, _ = runtime()
    match = re.fullmatch(r"gcr\.io/distroless/python3-debian(\d+)(:nonroot)?", base)
    assert match, f"the runtime base {base} is not a distroless Debian Python"
    suite, python = DEBIAN[match[1]]
    assert script_setting("SUITE") == suite
    assert script_setting("PYTHON") == f"python{python}"
    build_base, build = stages()[1]
    assert build_base == f"debian:{suite}-slim"
    assert any(f"python{python}-venv" in line for line in build)
    assert any(f"UV_PYTHON=/usr/bin/python{python}" in line for line in build)


def test_python_version_matches_the_project_floor() -> None:
    """The images run the Python the project is tested on."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={script_setting('PYTHON').removeprefix('python')}"


def test_both_run_as_the_same_non_root_user() -> None:
    """The last stage and the script's image config drop to 65532."""
    users = [line.split()[1] for line in runtime()[1] if line.startswith("USER ")]
    uid = script_setting("UID_GID")
    assert users == [f"{uid}:{uid}"]
    assert uid not in {"0", "root"}
    assert '--config.user "$UID_GID:$UID_GID"' in BUILD_IMAGE


def test_both_start_our_console_script() -> None:
    """The same entrypoint, and it is the command pyproject.toml installs."""
    [entry] = [
        json.loads(line.removeprefix("ENTRYPOINT "))
        for line in runtime()[1]
        if line.startswith("ENTRYPOINT ")
    ]
    assert f"--config.entrypoint {entry[0]} " in BUILD_IMAGE
    assert f'cat >"$venv/bin/{Path(entry[0]).name}"' in BUILD_IMAGE
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert Path(entry[0]).name in scripts
    assert scripts[Path(entry[0]).name] == "function.server.main:cli"
    assert "from function.server.main import cli" in BUILD_IMAGE


def test_both_ship_the_oras_the_tests_use() -> None:
    """The Dockerfile builds the version scripts/build-tools.sh pins; the script copies that one."""
    tools = (ROOT / "scripts" / "build-tools.sh").read_text()
    shipped = re.search(r"ARG ORAS_VERSION=(\S+)", DOCKERFILE)
    tested = re.search(r"ORAS_VERSION=(\S+)", tools)
    assert shipped
    assert tested
    assert shipped[1] == tested[1]
    assert "COPY --from=oras /oras /usr/local/bin/oras" in runtime()[1]
    assert 'install -D -m 0755 "$tools/oras" "$rootfs/usr/local/bin/oras"' in BUILD_IMAGE


def test_both_install_exactly_the_locked_runtime_dependencies() -> None:
    """uv.lock, frozen, without the dev group, in both; and the same uv."""
    syncs = [line for _, lines in stages() for line in lines if "uv sync" in line]
    assert syncs
    assert all("--frozen" in line and "--no-dev" in line for line in syncs)
    assert "export --frozen --no-dev" in BUILD_IMAGE
    assert "--require-hashes" in BUILD_IMAGE
    bootstrap = (ROOT / "scripts" / "bootstrap.sh").read_text()
    pinned = re.search(r"^UV_VERSION=(\S+)", bootstrap, re.MULTILINE)
    assert pinned
    assert f"ARG UV_VERSION={pinned[1]}" in DOCKERFILE
