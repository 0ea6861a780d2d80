"""The shell blocks the docs mark runnable run as pasted, so a doc command that breaks fails here.

A block is runnable when the line before its opening ```sh fence is `<!-- runnable -->`, or
`<!-- runnable: exit N -->` for a command whose documented exit status is N (scripts/migrate
says 1 when something could not be carried over). Only commands that need no cluster, no root
and no network beyond the tools cache are marked: `make render` and its variants, rendering by
hand, `make help`, `scripts/migrate`. Each block runs with bash from the checkout's root, in its
own process group (killed afterwards, so a block that leaves a process behind leaks nothing),
within its own timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.tools import ROOT, free_port

DOCS = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("examples/**/*.md")])
MARKER = re.compile(r"^<!-- runnable(?:: exit (\d+))? -->$")
FENCE = re.compile(r"^```sh$")
TIMEOUT_S = 120  # a warm render takes about 3 s; the tools are built by the fixture beforehand


@dataclass(frozen=True)
class Block:
    """One runnable block: where it is, what it runs and the exit status the doc promises."""

    where: str
    script: str
    exit_code: int


def runnable_blocks(path: Path) -> list[Block]:
    """The marked blocks of one Markdown file; a marker with no ```sh block under it fails."""
    lines = path.read_text().splitlines()
    blocks = []
    for i, line in enumerate(lines):
        marked = MARKER.match(line.strip())
        if not marked:
            continue
        where = f"{path.relative_to(ROOT)}:{i + 1}"
        following = lines[i + 1] if i + 1 < len(lines) else ""
        assert FENCE.match(following), f"{where}: the marker is not followed by a ```sh block"
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        script = "\n".join(lines[i + 2 : end]) + "\n"
        blocks.append(Block(where, script, int(marked.group(1) or 0)))
    return blocks


BLOCKS = [b for path in DOCS for b in runnable_blocks(path)]


def test_the_docs_mark_the_commands_a_newcomer_runs_first() -> None:
    """A marker misspelt or dropped would leave its block untested without a word: the README's
    two commands' offline half (make render, by name and with a file), make help, rendering by
    hand and scripts/migrate stay marked."""
    readme = "".join(b.script for b in BLOCKS if b.where.startswith("README.md"))
    for command in ("make render", "FILE=", "make help", "composition render", "scripts/migrate"):
        assert command in readme, f"no runnable README block runs {command!r}"
    assert any(b.where.startswith("docs/") for b in BLOCKS), "no runnable block in docs/"


def _left_running(pgid: int) -> bool:
    """True when a process of the group is still alive (signal 0 only checks)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.usefixtures("tools")
@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.where)
def test_a_runnable_doc_block_runs_as_pasted(block: Block, tmp_path: Path) -> None:
    """The block exits as the doc says, within its timeout, run from the checkout's root, and
    leaves nothing running behind it (a function started with `&` is stopped by the block).
    No Python traceback either: a crash exits 1 too, which a block documented to exit 1 (a
    migration that could not carry something) must not pass for."""
    # PORT: rendering by hand listens on ${PORT:-9443}; a free one here, so two runs side by side
    # (or a function someone left on 9443) do not collide.
    env = {**os.environ, "PORT": str(free_port())}
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            ["/bin/bash", "-e", "-o", "pipefail", "-c", block.script],
            cwd=ROOT,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        timed_out = False
        try:
            proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            timed_out = True
        # A background process that outlives the block by more than a moment was not stopped.
        deadline = time.monotonic() + 5
        while _left_running(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _left_running(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    report = (
        f"{block.where}:\n{block.script}--- stderr:\n{err.read_text()[-3000:]}\n"
        f"--- stdout:\n{out.read_text()[-1000:]}"
    )
    assert not timed_out, f"timed out after {TIMEOUT_S}s; {report}"
    assert proc.returncode == block.exit_code, (
        f"exited {proc.returncode}, the doc says {block.exit_code}; {report}"
    )
    assert not left, f"left a process running; {report}"
    assert "Traceback (most recent call last)" not in err.read_text(), f"crashed; {report}"
