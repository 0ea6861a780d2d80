"""The seeded run draws the same examples in every process: CI cannot turn red at random.

Hypothesis' `derandomize` seeds each test from itself, but the driver draws one object per
composed resource and requirement of the previous response, and protobuf iterates those maps in
an order that changes from process to process. Drawn in that order, two runs of unchanged code
drew different worlds, and one found a bug the other did not (issue 46). The driver reads them
in key order; this runs the tier twice, in two processes with different hash seeds, and compares
the digest of every request each sent.

Hypothesis also mixes into its draws the constants of every local module the process imported,
so in a full run the tests before the tier changed what it drew (AIMClusterRuntimeConfig: 512
RunFunction calls alone, 432 after tests/unit). The tier pins those constants to function/'s
(tests/fuzz/conftest.py); a third process, which imports a module full of other literals first,
must draw the same.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("AIMService", "AIMModelCache")
TEST = "tests/fuzz/test_fuzz.py::test_any_request_is_answered_safely"
_ROW = re.compile(r"^(AIM\w+)\s+\d+\s+\d+\s+\d+\s+\d+\s+([0-9a-f]{16})$", re.MULTILINE)


BYSTANDER = "aim_fuzz_bystander"
"""A local module outside function/, as the tests before the tier import in a full run."""


def _digests(hash_seed: str, bystander: Path | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "AIM_FUZZ_PROFILE": "ci",
        "AIM_FUZZ_EXAMPLES": "8",
        "PYTHONHASHSEED": hash_seed,
    }
    first: list[str] = []
    if bystander is not None:  # imported as a plugin: in sys.modules before anything is drawn
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(bystander), env.get("PYTHONPATH")]))
        first = ["-p", BYSTANDER]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *first,
         *(f"{TEST}[{kind}]" for kind in KINDS)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return dict(_ROW.findall(done.stdout))


@pytest.fixture(scope="module")
def alone() -> dict[str, str]:
    """The digests of a process that runs only the tier."""
    digests = _digests("1")
    assert set(digests) == set(KINDS), digests
    return digests


def test_two_processes_draw_the_same_examples(alone: dict[str, str]) -> None:
    """Protects the seeded run's promise: the same code draws the same requests, whatever the
    process (protobuf's map order, Python's hash seed, pytest-randomly's shuffle)."""
    assert _digests("2") == alone


def test_what_ran_before_changes_no_draw(alone: dict[str, str], tmp_path: Path) -> None:
    """Protects the promise in a full run: modules other tests imported first (their literals
    are what hypothesis would mix into its draws) leave the tier's examples as they were."""
    words = ", ".join(repr(f"{w}-{i}") for w in ("team", "AIMModel", "Ready") for i in range(40))
    numbers = ", ".join(str(101 + 37 * i) for i in range(40))
    source = f"WORDS = ({words})\nNUMBERS = ({numbers})\nRATIOS = (0.25, 1.5, 1e-3)\n"
    (tmp_path / f"{BYSTANDER}.py").write_text(source)
    assert _digests("1", bystander=tmp_path) == alone
