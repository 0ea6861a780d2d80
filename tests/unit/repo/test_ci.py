"""CI's entry point: `.ci/run` runs the README's test command, and a failing test fails CI.

CI runs `.ci/run` on a clean clone; if it ran less than the README says, or swallowed an exit
status, a red suite would land.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def readme_test_command() -> str:
    """The second of the README's two commands (the first renders), without its comment."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Try it: two commands") :]
    block = section[section.index("```sh\n") + 6 : section.index("\n```", section.index("```sh"))]
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    commands = [c for c in commands if c]
    assert len(commands) == 2, commands  # the README's "two commands"
    return commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    """`.ci/run` ends in the README's test command (exec'd, so nothing runs after it)."""
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^set -euo pipefail$", script, re.MULTILINE)
    last = [line for line in script.splitlines() if line.strip()][-1]
    assert last == f"exec {readme_test_command()}"


def test_the_test_command_ends_in_pytest_so_its_status_is_ci_s() -> None:
    """`make test` runs scripts/test, which stops at the first failing step (`set -e`) and ends
    by exec'ing pytest: pytest's exit status is the command's."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\ntest:") + 1 :].splitlines()[1]
    assert recipe.strip() == "@scripts/test"
    script = (ROOT / "scripts" / "test").read_text()
    assert "set -euo pipefail" in script
    final = [line for line in script.splitlines() if line.strip()][-1]
    assert final.split(";")[-1].strip().startswith("exec .venv/bin/pytest")


def test_a_failing_test_command_fails_ci(tmp_path: Path) -> None:
    """`.ci/run` with a `make` whose tests fail (exit 3) exits 3: CI goes red."""
    fake = tmp_path / "make"
    fake.write_text('#!/bin/sh\necho "make $*"\nexit 3\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    run = subprocess.run(
        ["/bin/bash", str(ROOT / ".ci" / "run")],
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert run.returncode == 3, run.stderr  # the fake's status, passed through
    assert run.stdout.strip() == "make test"
