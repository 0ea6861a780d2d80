"""The Dockerfile cannot be built here (no Docker engine): its invariants are checked by reading."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def stages() -> list[tuple[str, list[str]]]:
    """(resolved base image, instructions) per stage."""
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    args = {m[1]: m[2] for line in lines if (m := re.match(r"ARG (\w+)=(\S+)", line))}
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("FROM "):
            image = re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], line.split()[1])
            out.append((image, []))
        elif out and line and not line.startswith("#"):
            out[-1][1].append(line)
    return out


def python_version(image: str) -> str:
    match = re.match(r"python:(\d+\.\d+)", image)
    assert match, f"base image {image!r} does not name a Python version"
    return match[1]


def test_build_and_runtime_stages_use_the_same_python() -> None:
    """A venv built on one Python does not import on another."""
    python = [image for image, _ in stages() if image.startswith("python:")]
    versions = {python_version(image) for image in python}
    assert len(python) >= 2
    assert len(versions) == 1


def test_the_image_ships_the_oras_the_tests_use() -> None:
    """The function runs oras; the image has the version the registry tests ran against."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    tools = (ROOT / "scripts" / "build-tools.sh").read_text()
    shipped = re.search(r"ARG ORAS_VERSION=(\S+)", dockerfile)
    tested = re.search(r"ORAS_VERSION=(\S+)", tools)
    assert shipped
    assert tested
    assert shipped[1] == tested[1]
    _, runtime = stages()[-1]
    assert "COPY --from=oras /oras /usr/local/bin/oras" in runtime


def test_runtime_runs_as_non_root() -> None:
    """The last stage drops to a numeric non-root user."""
    _, runtime = stages()[-1]
    users = [line.split()[1] for line in runtime if line.startswith("USER ")]
    assert users
    assert users[-1].split(":")[0] not in {"0", "root"}


def test_entrypoint_is_our_console_script() -> None:
    """The image starts the command pyproject.toml installs."""
    _, runtime = stages()[-1]
    entry = [
        json.loads(line.removeprefix("ENTRYPOINT "))
        for line in runtime
        if line.startswith("ENTRYPOINT ")
    ]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert entry
    assert Path(entry[-1][0]).name in scripts


def test_python_version_matches_the_project_floor() -> None:
    """The image runs the Python the project is tested on."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={python_version(stages()[-1][0])}"
