"""Running a benchmark as a user does: its script, by the project's python, from the checkout."""

from __future__ import annotations

import subprocess
import sys

from devtools.tools import ROOT


def run_benchmark(script: str, *args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """`python benchmarks/<script> <args>`, its output captured; a non-zero exit is returned."""
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
