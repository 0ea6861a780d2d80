"""The repository's top-level packages import only those below them, and nothing imports tests.

function < aim_migrate < aim_plan < devtools < benchmarks < tests:

- function/ is what runs in the cluster: it may need nothing of the tools around it;
- aim_migrate converts manifests with the function's API models and naming;
- aim_plan runs the function's composers on files and may convert older manifests first;
- devtools builds, renders and runs the end-to-end plane, and stands in for controllers that
  cannot run here (`aim plan` shares those stand-ins, so the plane may use aim_plan's);
- benchmarks drive the plane devtools brings up;
- tests check all of them, and are imported by none: a benchmark or a tool that reached into a
  test module would break when the test changed, and ship test code with it.

Read with the same scan as function/'s layer test (`tests/unit/imports.py`), so imports inside
functions, under `TYPE_CHECKING` and from a package (`from function import server`) all count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from devtools.tools import ROOT
from tests.cases import Case, table
from tests.unit.imports import Import, imports


@dataclass(frozen=True)
class Package(Case):
    """A top-level package and its level: it may import packages of lower levels."""

    level: int


PACKAGES = [
    Package("function", "the composition function: runs in the cluster, needs no tool", 0),
    Package("aim_migrate", "converts manifests with the function's API and naming", 1),
    Package("aim_plan", "plans manifests with the function's composers, migrating first", 2),
    Package("devtools", "builds, renders and runs the plane; shares aim plan's stand-ins", 3),
    Package("benchmarks", "drive the plane devtools brings up", 4),
    Package("tests", "check everything; imported by nothing", 5),
]
LEVEL = {p.id: p.level for p in PACKAGES}


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def against_the_order(package: str) -> list[Import]:
    """Imports in `package` of a top-level package above it."""
    return [
        imp
        for path in sources(package)
        for imp in imports(path)
        if LEVEL.get(imp.module.split(".")[0], -1) > LEVEL[package]
    ]


@table(PACKAGES)
def test_a_package_imports_only_the_packages_below_it(case: Package) -> None:
    """Each import of another top-level package is of a lower one; the failure lists each
    import against the order with its file and line."""
    wrong = [str(imp) for imp in against_the_order(case.id)]
    assert not wrong, f"{case.id} (level {case.level}) imports above it:\n" + "\n".join(wrong)


def test_every_top_level_python_package_has_a_level() -> None:
    """A new top-level package is placed in the order before anything may import it."""
    found = {
        d.name
        for d in ROOT.iterdir()
        if d.is_dir() and d.name[0] not in "._" and next(d.rglob("*.py"), None) is not None
    }
    assert found == set(LEVEL), f"not placed: {found - set(LEVEL)}; gone: {set(LEVEL) - found}"


def test_the_scan_sees_an_import_against_the_order() -> None:
    """The check can fail: a benchmark importing a test module, as one did, is found."""
    probe = ROOT / "benchmarks" / "probe.py"
    found = [
        i
        for i in imports(probe, "from tests.e2e.test_scenarios import service\n")
        if LEVEL.get(i.module.split(".")[0], -1) > LEVEL["benchmarks"]
    ]
    assert [i.module for i in found] == ["tests.e2e.test_scenarios"]
