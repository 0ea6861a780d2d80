"""devtools/'s groups import only the groups before them (devtools/__init__.py), and never tests.

Read with the same scan as function/'s layering test (tests/unit/imports.py: imports inside
functions and relative ones included): a harness that reached into the tests, or a generator
that needed the cluster, would make the smallest job (`make generate`, `make render`) carry the
largest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import devtools
from tests.cases import Case, table
from tests.unit.imports import imports

ROOT = Path(devtools.__file__).parent


@dataclass(frozen=True)
class Group(Case):
    """A group of devtools/ and its level: it may import groups of lower levels."""

    level: int


GROUPS = [
    Group("tools", "the shared base: the root, the Go-built tools, ports", 0),
    Group("gen", "generating XRDs and docs needs the models and the base, nothing running", 1),
    Group("render", "rendering runs the function and the crossplane CLI, no cluster", 2),
    Group("pkg", "packaging builds the image and the packages; a cluster may install them", 3),
    Group("cluster", "the end-to-end cluster installs packages and runs images", 4),
]
LEVEL = {g.id: g.level for g in GROUPS}


def group_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


MODULES = [p for p in sorted(ROOT.rglob("*.py")) if p.name != "__init__.py" or p.parent != ROOT]


def test_every_module_is_in_a_group() -> None:
    """A new module lands in one of the groups the package docstring names, not beside them."""
    assert {group_of(p) for p in MODULES} <= set(LEVEL)


@table(GROUPS)
def test_a_group_imports_only_groups_before_it(case: Group) -> None:
    """Each import of devtools.<group> in a module of this group is of a lower (or its own)
    group, and no module imports the tests."""
    wrong = []
    for path in (p for p in MODULES if group_of(p) == case.id):
        for imp in imports(path):
            line, module = imp.line, imp.module
            parts = module.split(".")
            if parts[0] == "tests" or (
                parts[0] == "devtools" and len(parts) > 1 and LEVEL.get(parts[1], 0) > case.level
            ):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, case.reason + "\n" + "\n".join(wrong)


def test_the_docstring_states_the_same_order() -> None:
    """The order documented for readers is the order this test enforces."""
    order = " < ".join(sorted(LEVEL, key=LEVEL.__getitem__))
    assert order in (devtools.__doc__ or "")
