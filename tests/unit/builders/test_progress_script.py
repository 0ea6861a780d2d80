"""build/progress.py, the download's progress sidecar, driven in process with a stand-in clock.

Its one network call (`patch`, the ConfigMap merge-patch) and its one signal (`stop_download`)
are replaced by recorders; measuring is real, on files the test writes as a download would. The
real sidecar against a real API server and kubelet runs in tests/e2e/test_node.py.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from function.build import progress
from tests.cases import Case, table


def test_measure_counts_the_bytes_of_files_and_nothing_a_link_points_at(tmp_path: Path) -> None:
    """Bytes in files, in subdirectories too; a symlink (to a huge file elsewhere) adds nothing."""
    (tmp_path / "a").write_bytes(b"x" * 10)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 5)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_bytes(b"z" * 1000)
    (tmp_path / "link").symlink_to(outside)
    assert progress.measure(str(tmp_path)) == 15
    assert progress.measure(str(tmp_path / "missing")) == 0


@dataclass
class Sidecar:
    """The sidecar's world: a clock, the files, what it reported and stopped."""

    root: Path
    growth: list[int]
    """Bytes appended to the download at each tick (0: it stalls)."""
    now: float = 0.0
    reports: list[dict[str, str]] = field(default_factory=list)
    stops: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        if not self.growth:
            raise _TicksOverError
        self.now += seconds
        with (self.root / "weights").open("ab") as f:
            f.write(b"\0" * self.growth.pop(0))


def _no_handler(*args: object) -> None:
    """The test process keeps its own SIGTERM handling."""
    del args


class _TicksOverError(Exception):
    """The scripted ticks are over."""


def guard_file(root: Path) -> Path:
    """Where the sidecar says it is guarded: beside the download's files, not among them."""
    return root.parent / f"{root.name}-guarded"


def run_sidecar(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    growth: list[int],
    stall_s: int,
    *,
    guarded: bool = True,
) -> Sidecar:
    world = Sidecar(tmp_path, growth)
    # The real guard would make the test process itself non-dumpable: its own test is below.
    monkeypatch.setattr(progress, "guard", lambda: guarded)
    monkeypatch.setenv("AIM_PROGRESS_GUARDED", str(guard_file(tmp_path)))
    monkeypatch.setenv("AIM_PROGRESS_DIR", str(tmp_path))
    monkeypatch.setenv("AIM_PROGRESS_INTERVAL_S", "1")
    monkeypatch.setenv("AIM_STALL_AFTER_S", str(stall_s))
    monkeypatch.setattr("function.build.progress.time.sleep", world.sleep)
    monkeypatch.setattr("function.build.progress.time.monotonic", lambda: world.now)
    monkeypatch.setattr(progress, "patch", world.reports.append)
    monkeypatch.setattr(progress, "stop_download", lambda: world.stops.append(world.now))
    monkeypatch.setattr("function.build.progress.signal.signal", _no_handler)
    with pytest.raises(_TicksOverError):
        progress.main()
    return world


def test_a_growing_download_is_reported_and_never_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every tick reports the bytes so far; growth, however slow, is never a stall."""
    world = run_sidecar(tmp_path, monkeypatch, [100, 1, 0, 0, 1, 50], stall_s=3)
    assert [r["downloadedBytes"] for r in world.reports] == [
        "0",
        "100",
        "101",
        "101",
        "101",
        "102",
        "152",
    ]
    assert world.reports[0]["stalled"] == "", "a new attempt starts with no stall"
    assert world.stops == []
    assert all("stalled" not in r for r in world.reports[1:])


def test_a_download_that_stops_growing_is_stopped_once_per_stall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No growth for the stall time: the report says so and the download is stopped; the clock
    starts again, so a download that lingers is stopped again only after another stall time,
    not on every tick."""
    world = run_sidecar(tmp_path, monkeypatch, [10, 0, 0, 0, 0, 0, 0], stall_s=3)
    assert world.stops == [4.0, 7.0]
    stalled = [r for r in world.reports if r.get("stalled")]
    assert len(stalled) == 2
    assert stalled[0]["stalled"] == "no growth for 3s at 10 bytes; the attempt was stopped"
    assert stalled[0]["downloadedBytes"] == "10"


def test_a_sidecar_that_cannot_hide_its_token_never_reports_but_still_stops_stalls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a non-dumpable process (no ctypes in the image, an odd kernel) the token could be
    read by the download: it is never used. The download still starts (the startup probe's file
    is written, saying so) and a stall is still stopped, as that needs no API."""
    world = run_sidecar(tmp_path, monkeypatch, [10, 0, 0, 0, 0], stall_s=3, guarded=False)
    assert world.reports == []
    assert world.stops == [4.0]
    assert guard_file(tmp_path).read_text() == "unguarded\n"


def test_reporting_failures_never_stop_the_sidecar(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An API server that refuses or cannot be reached is printed and the next tick tries again."""

    def refuse(data: dict[str, Any]) -> None:
        del data
        msg = "HTTP Error 403: Forbidden"
        raise OSError(msg)

    monkeypatch.setattr(progress, "patch", refuse)
    progress.report({"downloadedBytes": "1"})
    assert "cannot update the ConfigMap: HTTP Error 403: Forbidden" in capsys.readouterr().err


def test_stop_download_signals_only_processes_of_the_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only processes whose command line names the download's directory are signalled; the
    sidecar itself and the pod's pause process (pid 1) never are."""
    proc = tmp_path / "proc"
    for pid, cmdline in {
        "1": b"/pause\0",
        str(os.getpid()): b"python3\0-c\0...\0",
        "41": b"/storage-initializer\0hf://org/m\0/mnt/models\0",
        "42": b"sleep\0100\0",
        "self": b"",
    }.items():
        (proc / pid).mkdir(parents=True)
        (proc / pid / "cmdline").write_bytes(cmdline)
    killed: list[int] = []
    monkeypatch.setenv("AIM_PROGRESS_DIR", "/mnt/models")
    monkeypatch.setattr(progress, "Path", lambda p: proc if p == "/proc" else Path(p))

    def kill(pid: int, sig: int) -> None:
        del sig
        killed.append(pid)

    monkeypatch.setattr("function.build.progress.os.kill", kill)
    progress.stop_download()
    assert killed == [41]


# A process that reads another's /proc files as the same, unprivileged user: what the download
# container would do to reach the sidecar's token through its root directory.
_PEEK = """
import os, sys
try:
    os.listdir(f"/proc/{sys.argv[1]}/root/")
    print("read")
except PermissionError:
    print("refused")
"""
_TARGET = """
import sys, time
script = {"__name__": "progress"}
exec(sys.argv[2], script)
print(script["guard"]() if sys.argv[1] == "guard" else "unguarded", flush=True)
time.sleep(30)
"""
NOBODY = 65534


@dataclass(frozen=True)
class Peek(Case):
    mode: str
    expected: str


PEEKS = [
    Peek("guarded", "the sidecar's case: its root directory is out of a peer's reach",
         "guard", "refused"),
    Peek("control", "without the guard the same peer reads it: the test can fail",
         "plain", "read"),
]  # fmt: skip
# The script runs in the download image's python3, not ours: any python3 the other user may run.
SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run both processes as another user")
@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="needs /usr/bin/python3 for the other user")
@table(PEEKS)
def test_guard_keeps_a_same_user_process_out_of_the_sidecar_s_proc_files(case: Peek) -> None:
    """The kernel, not the script, enforces it: a process of the same unprivileged user is
    refused the guarded process's root directory (through which the token mounted in the
    sidecar's container would be read), and reads it when the guard is not used."""
    with subprocess.Popen(
        [SYSTEM_PYTHON, "-c", _TARGET, case.mode, Path(progress.__file__).read_text()],
        stdout=subprocess.PIPE,
        text=True,
        user=NOBODY,
        cwd="/",
    ) as target:
        try:
            assert target.stdout is not None
            said = target.stdout.readline().strip()
            assert said == ("True" if case.mode == "guard" else "unguarded")
            peek = subprocess.run(
                [SYSTEM_PYTHON, "-c", _PEEK, str(target.pid)],
                capture_output=True,
                text=True,
                user=NOBODY,
                check=True,
                cwd="/",
            )
            assert peek.stdout.strip() == case.expected
        finally:
            target.kill()
