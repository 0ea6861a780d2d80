"""A busy control plane: a process burning a bounded share of one core beside the plane.

Production control planes share their machines (other controllers, a CI runner, a noisy
neighbour). Under that load the API server and Crossplane's informers fall behind, and a core
whose reconciles act on stale copies shows it (crossplane/crossplane#7062): on an idle machine
the same benchmark can look settled. `BusyPlane` makes the load part of the run, stated and
measured, instead of whatever else the machine happened to do.

The load is a child process pinned to one CPU that spins for `share` of every 20 ms and sleeps
for the rest, at normal priority (a niced load would yield to the plane and stop being load).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

PERIOD_S: Final = 0.02
_CLOCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Busy:
    """The load while it runs: which CPU, the share asked for, and the share it used."""

    cpu: int
    share: float
    pid: int
    started: float
    cpu_at_start: float

    def used(self) -> float | None:
        """The share of its CPU the load has used since it started (0 to 1); None if it ended."""
        elapsed = time.monotonic() - self.started
        try:
            spent = cpu_seconds(self.pid) - self.cpu_at_start
        except OSError:
            return None
        return spent / elapsed if elapsed > 0 else 0.0

    def describe(self) -> str:
        """One line for the report: the load asked for, and what it has used so far."""
        used = self.used() if time.monotonic() - self.started > 1 else None
        return (
            f"busy plane: a process pinned to CPU {self.cpu} spinning {self.share:.0%} of every "
            f"{PERIOD_S * 1000:.0f} ms"
            + (f" (it has used {used:.0%} of that CPU so far)" if used is not None else "")
        )


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of one process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK


@contextlib.contextmanager
def busy_plane(share: float, cpu: int = 0) -> Iterator[Busy | None]:
    """Burn `share` (0 to 1) of CPU `cpu` while the block runs; nothing when `share` is 0."""
    if share <= 0:
        yield None
        return
    proc = subprocess.Popen([sys.executable, __file__, str(share), str(cpu)])
    try:
        time.sleep(0.1)  # so the first reading has something to measure
        yield Busy(cpu, share, proc.pid, time.monotonic(), cpu_seconds(proc.pid))
        if proc.poll() is not None:
            msg = f"the busy-plane load exited with {proc.returncode}"
            raise RuntimeError(msg)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def spin(share: float, cpu: int) -> None:
    """The load's body: busy for `share` of each period, asleep for the rest, forever."""
    with contextlib.suppress(OSError):  # a machine with fewer CPUs: run unpinned
        os.sched_setaffinity(0, {cpu})
    busy_s = PERIOD_S * share
    while True:
        start = time.perf_counter()
        while time.perf_counter() - start < busy_s:
            pass
        time.sleep(max(PERIOD_S - busy_s, 0.0))


if __name__ == "__main__":
    spin(float(sys.argv[1]), int(sys.argv[2]))
