"""The test AIM image's entrypoint answers a dry-run as AIM's runtime does.

AIM's runtime (aim-build) prints an empty list and exits 0 when none of its profiles fits the
inputs; discovery reads that as DiscoveryNoProfile. The stand-in must say it the same way, or the
end-to-end tier would test a failure real images never produce.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass

from devtools.tools import Tools
from tests.cases import Case, table


@dataclass(frozen=True)
class DryRunCase(Case):
    env: dict[str, str]
    profiles: int


CASES = [
    DryRunCase("gpu-schema", "older images answer whatever the GPU", {}, 1),
    DryRunCase(
        "accelerator-fits",
        "a newer image told the GPU it has a profile for",
        {"AIM_STUB_SCHEMA": "accelerator", "AIM_ACCELERATOR_MODEL": "MI300X"},
        1,
    ),
    DryRunCase(
        "accelerator-unset",
        "a newer image with no GPU to detect and none named finds no profile",
        {"AIM_STUB_SCHEMA": "accelerator"},
        0,
    ),
    DryRunCase(
        "other-count",
        "a count the image has no profile for",
        {
            "AIM_STUB_SCHEMA": "accelerator",
            "AIM_ACCELERATOR_MODEL": "MI300X",
            "AIM_ACCELERATOR_COUNT": "8",
        },
        0,
    ),
]


@table(CASES)
def test_a_dry_run_prints_the_profiles_that_fit_and_exits_0(case: DryRunCase, tools: Tools) -> None:
    """Fitting or not, the dry-run exits 0 and prints a JSON list; no fit is an empty one."""
    done = subprocess.run(
        [str(tools.aimstub), "dry-run", "--format=json"],
        env={"PATH": os.environ.get("PATH", ""), **case.env},
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 0, (case.reason, done.stderr)
    assert len(json.loads(done.stdout)) == case.profiles, case.reason
    if not case.profiles:
        assert "no " in done.stderr, done.stderr  # the reason, where the runtime logs it


def test_a_schema_it_does_not_know_is_an_error(tools: Tools) -> None:
    """A wrong AIM_STUB_SCHEMA is the test's mistake, not an image's answer: exit 1."""
    done = subprocess.run(
        [str(tools.aimstub), "dry-run", "--format=json"],
        env={"AIM_STUB_SCHEMA": "tpu"},
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 1
    assert "tpu" in done.stderr
