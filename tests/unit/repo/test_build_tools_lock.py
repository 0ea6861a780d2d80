"""scripts/build-tools.sh says whom it waits for when another run holds the tools cache lock.

Checkouts share one tools cache, and a cold build holds its lock for many minutes: a `make render`
that waited without a word looked hung. The runs here build the `render` set into a temporary
cache whose store already holds its three tools, stamped with the pinned versions, with a `go`
that fails if called: nothing is built or downloaded, and each run takes well under a second.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.cases import Case, table

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "build-tools.sh"
NEVER_A_PID = 4_194_304
"""Linux's highest possible pid_max: PIDs stay below it, so no process ever has this one."""


def _pinned(name: str) -> str:
    match = re.search(rf"^{name}=(\S+)", SCRIPT.read_text(), re.MULTILINE)
    assert match, f"scripts/build-tools.sh pins no {name}"
    return match.group(1)


def _warm_cache(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A cache holding the render set, and the environment that points the script at it."""
    cache = tmp_path / "cache"
    store = cache / "tools" / "store"
    store.mkdir(parents=True)
    for name, pin in (
        ("crossplane-cli", "CLI_VERSION"),
        ("crossplane-core", "CORE_VERSION"),
        ("oras", "ORAS_VERSION"),
    ):
        version = _pinned(pin)
        tool = store / f"{name}-{version}"
        tool.write_text("#!/bin/sh\nexit 1\n")
        tool.chmod(0o755)
        (store / f"{name}-{version}.version").write_text(f"{version}\n")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    go = fake_bin / "go"
    go.write_text('#!/bin/sh\necho "go $* called: this run was to build nothing" >&2\nexit 1\n')
    go.chmod(0o755)
    env = {**os.environ, "AIM_CACHE_DIR": str(cache), "PATH": f"{fake_bin}:{os.environ['PATH']}"}
    return cache, env


@contextmanager
def _running(env: dict[str, str], tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The script on the render set, its output in files; stopped if a test leaves it running."""
    with (tmp_path / "stdout").open("w") as out, (tmp_path / "stderr").open("w") as err:
        proc = subprocess.Popen(
            ["/bin/bash", str(SCRIPT), "render"], env=env, stdout=out, stderr=err
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _holder_line(cache: Path) -> tuple[int, str]:
    pid, rest = (cache / "tools" / ".lock.holder").read_text().rstrip("\n").split(" ", 1)
    return int(pid), rest


def test_a_run_with_the_lock_free_says_nothing_of_it_and_writes_who_holds_it(
    tmp_path: Path,
) -> None:
    """No wait, no word; the line beside the lock names the run: its PID, the script of its
    checkout, the set and when it took the lock."""
    cache, env = _warm_cache(tmp_path)
    with _running(env, tmp_path) as proc:
        assert proc.wait(timeout=60) == 0, (tmp_path / "stderr").read_text()
    stderr = (tmp_path / "stderr").read_text()
    assert "tools cache lock" not in stderr
    assert "building" not in stderr  # the warm cache held the whole set
    pid, rest = _holder_line(cache)
    assert pid == proc.pid
    assert rest.startswith(f"{SCRIPT} render, since "), rest


@dataclass(frozen=True)
class Held(Case):
    holder: str | None
    """The line beside the lock when the run starts (None: no such file); {pid} is a live PID."""
    says: str
    """What the run's one line about the lock says after `is held by `."""


HELD = [
    Held(
        "live-holder",
        "another checkout's run, still running: named with its script, set and start, so the "
        "user knows which build to wait for (or to stop)",
        "{pid} /other/checkout/scripts/build-tools.sh all, since 2026-11-27 10:00:00",
        "PID {pid} (/other/checkout/scripts/build-tools.sh all, since 2026-11-27 10:00:00); "
        "waiting for it to finish",
    ),
    Held(
        "holder-gone",
        "a run killed before it could exit leaves its line behind; the lock's holder is another "
        "process, which must not be named as that dead one",
        f"{NEVER_A_PID} /other/checkout/scripts/build-tools.sh all, since 2026-11-27 10:00:00",
        "another process; waiting for it to finish",
    ),
    Held(
        "no-holder-file",
        "a checkout whose script predates the holder file holds the lock: the wait is still said",
        None,
        "another process; waiting for it to finish",
    ),
    Held(
        "holder-file-garbled",
        "a line that does not start with a PID names no one",
        "not a pid at all",
        "another process; waiting for it to finish",
    ),
]


@table(HELD)
def test_a_run_kept_waiting_says_whom_it_waits_for_then_takes_the_lock(
    case: Held, tmp_path: Path
) -> None:
    """While the lock is held the run says so in one line and waits; once it is released the
    run takes it, finishes as usual, and the line beside the lock names the run."""
    cache, env = _warm_cache(tmp_path)
    tools = cache / "tools"
    live = os.getpid()  # this test holds the lock, as the holder's line says
    with (tools / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if case.holder is not None:
            (tools / ".lock.holder").write_text(case.holder.format(pid=live) + "\n")
        with _running(env, tmp_path) as proc:
            deadline = time.monotonic() + 30
            while "tools cache lock" not in (tmp_path / "stderr").read_text():
                assert proc.poll() is None, (case.reason, (tmp_path / "stderr").read_text())
                assert time.monotonic() < deadline, case.reason
                time.sleep(0.05)
            time.sleep(0.2)
            assert proc.poll() is None, case.reason  # it waits rather than failing or going on
            fcntl.flock(lock, fcntl.LOCK_UN)
            assert proc.wait(timeout=60) == 0, (case.reason, (tmp_path / "stderr").read_text())
    said = [line for line in (tmp_path / "stderr").read_text().splitlines() if "cache lock" in line]
    assert said == [
        f"[build-tools] the tools cache lock {tools / '.lock'} is held by "
        + case.says.format(pid=live)
    ], case.reason
    assert _holder_line(cache)[0] == proc.pid, case.reason
