"""devtools/gen/callgraph.py: the path a reader follows from compose_service, counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.gen import callgraph


def _tree(root: Path, modules: dict[str, str]) -> Path:
    """A function/ package of `modules` (dotted name below function -> source)."""
    for name, source in modules.items():
        path = root / "function" / Path(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in [path.parent, *path.parent.parents]:
            if parent == root:
                break
            (parent / "__init__.py").touch()
        path.write_text(source)
    return root / "function"


def test_a_path_that_leaves_a_module_and_comes_back_counts_one_return(tmp_path: Path) -> None:
    """a.start calls b.helper, then a.finish: the reader goes a, b, a: two modules, one
    return; a call into a library is not followed."""
    package = _tree(
        tmp_path,
        {
            "compose.a": (
                "import json\nfrom function.compose.b import helper\n\n"
                "def start():\n    helper()\n    json.dumps({})\n    finish()\n\n"
                "def finish():\n    pass\n"
            ),
            "compose.b": "def helper():\n    pass\n",
        },
    )
    reading = callgraph.walk(callgraph.Graph(callgraph.load(package)), "function.compose.a.start")
    assert reading.functions == [
        "function.compose.a.start",
        "function.compose.b.helper",
        "function.compose.a.finish",
    ]
    assert (len(reading.modules), reading.returns) == (2, 1)


def test_functions_outside_the_scope_are_leaves(tmp_path: Path) -> None:
    """A rule of another layer called between two functions of one composer is looked up and
    left: within function.compose the reading stays in one module, no return."""
    package = _tree(
        tmp_path,
        {
            "compose.a": (
                "from function.rules.r import rule\n\n"
                "def start():\n    rule()\n    finish()\n\ndef finish():\n    pass\n"
            ),
            "rules.r": "def rule():\n    pass\n",
        },
    )
    whole = callgraph.walk(callgraph.Graph(callgraph.load(package)), "function.compose.a.start")
    assert whole.returns == 1
    inside = whole.within("function.compose")
    assert (inside.modules, inside.returns) == (["function.compose.a"], 0)


def test_the_services_path_stays_within_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """Following an AIMService's spec from compose_service crosses at most 23 modules of
    function/compose and goes back into one it had left at most 29 times: the composers read
    top to bottom (22 and 27 when this was written)."""
    assert callgraph.main(["-q"]) == 0
    figures = dict(
        line.split(": ", 1) for line in capsys.readouterr().out.splitlines() if ": " in line
    )
    assert int(figures["modules"]) <= 23, figures
    assert int(figures["returns"]) <= 29, figures
