"""The seeded run draws the same examples in every process: CI cannot turn red at random.

Hypothesis' `derandomize` seeds each test from itself, but the driver draws one object per
composed resource and requirement of the previous response, and protobuf iterates those maps in
an order that changes from process to process. Drawn in that order, two runs of unchanged code
drew different worlds, and one found a bug the other did not (issue 46). The driver reads them
in key order; this runs the tier twice, in two processes with different hash seeds, and compares
the digest of every request each sent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("AIMService", "AIMModelCache")
TEST = "tests/fuzz/test_fuzz.py::test_any_request_is_answered_safely"
_ROW = re.compile(r"^(AIM\w+)\s+\d+\s+\d+\s+\d+\s+\d+\s+([0-9a-f]{16})$", re.MULTILINE)


def _digests(hash_seed: str) -> dict[str, str]:
    env = {
        **os.environ,
        "AIM_FUZZ_PROFILE": "ci",
        "AIM_FUZZ_EXAMPLES": "8",
        "PYTHONHASHSEED": hash_seed,
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         *(f"{TEST}[{kind}]" for kind in KINDS)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return dict(_ROW.findall(done.stdout))


def test_two_processes_draw_the_same_examples() -> None:
    """Protects the seeded run's promise: the same code draws the same requests, whatever the
    process (protobuf's map order, Python's hash seed, pytest-randomly's shuffle)."""
    first, second = _digests("1"), _digests("2")
    assert set(first) == set(KINDS), first
    assert first == second
