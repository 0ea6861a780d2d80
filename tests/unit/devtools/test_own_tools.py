"""The harness runs the build of our Go programs made from this checkout's sources.

scripts/build-tools.sh keeps each build of devtools/<name> as `<name>-<sum>` in the shared tools
cache; `devtools.tools.own_tool` must compute the same sum, or the tests would run whatever
build another checkout left under the plain name.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from devtools.tools import ROOT, own_tool
from tests.cases import Case, table


@dataclass(frozen=True)
class ToolCase(Case):
    name: str


TOOL_CASES = [
    ToolCase("aimstub", "the test AIM image's entrypoint, whose dry-run tests vary", "aimstub"),
    ToolCase("pause", "the node's pod sandbox", "pause"),
    ToolCase(
        "apicheck", "with a go.sum: go.* is two files, summed in build-tools' order", "apicheck"
    ),
]


@table(TOOL_CASES)
def test_the_harness_sums_sources_as_build_tools_does(case: ToolCase, tmp_path: Path) -> None:
    """The sum in the file name is the one build-tools.sh's `own` computes, with its own shell."""
    name = case.name
    src = ROOT / "devtools" / name
    shell = subprocess.run(
        ["/bin/bash", "-c", 'cat "$1"/go.* "$1"/*.go | sha256sum | cut -c1-16', "sum", str(src)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (tmp_path / f"{name}-{shell}").write_bytes(b"")

    assert own_tool(tmp_path, name) == tmp_path / f"{name}-{shell}", case.reason


def test_without_a_build_of_these_sources_the_plain_name_is_used(tmp_path: Path) -> None:
    """A tools set built before the sums existed still works: its `<name>` is run."""
    (tmp_path / "aimstub-0000000000000000").write_bytes(b"")  # another checkout's build

    assert own_tool(tmp_path, "aimstub") == tmp_path / "aimstub"
