"""function/'s layers: each package imports only the packages below it (function/__init__.py).

Read with `ast` over every module, so an import inside a function or an `if TYPE_CHECKING:` block
counts the same as one at the top: a lazy import still makes the lower layer depend on the higher.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import function
from tests.cases import Case, table
from tests.unit.imports import Import, imports

ROOT = Path(function.__file__).parent


@dataclass(frozen=True)
class Layer(Case):
    """A package (or top-level module) of function/ and its level: it may import lower levels."""

    level: int


LAYERS = [
    Layer(
        "api",
        "the AIM API's types are what everything else reads and writes; they know nothing of "
        "how objects are composed, so the XRDs generated from them cannot drift with the code",
        0,
    ),
    Layer(
        "rules",
        "the AIM rules are pure functions of API values (naming, selection, merging, conditions), "
        "testable without a request, a registry or a cluster",
        1,
    ),
    Layer(
        "errors",
        "the user-facing errors name a spec field; rules return values instead, so only the "
        "layers that read specs and registries raise them",
        2,
    ),
    Layer(
        "settings",
        "the command-line settings are a plain value the layers that act on the cluster read",
        2,
    ),
    Layer(
        "build",
        "builders turn decided values into manifests; they apply rules, never look anything up",
        3,
    ),
    Layer(
        "registry",
        "the registry client asks registries questions the composers phrased; it may use the "
        "rules (semver, JSON text) and manifests (pull secrets), never the composer contract",
        4,
    ),
    Layer(
        "kube",
        "the Kubernetes side of a call (observed objects, lookups, Jobs, transitions) carries "
        "registry questions and answers between the composers and the server",
        5,
    ),
    Layer(
        "compose",
        "composers decide what one AIM object composes, from everything below",
        6,
    ),
    Layer(
        "server",
        "the gRPC server dispatches calls to composers, asks registries, and counts metrics: the "
        "top, imported by nothing in function/",
        7,
    ),
    Layer(
        "responder",
        "the wake responder is a program of its own that ships in the same image (the 503 a "
        "request held past its wake timeout gets); it needs nothing of the function's, and "
        "nothing imports it",
        7,
    ),
]
LEVEL = {layer.id: layer.level for layer in LAYERS}


@dataclass(frozen=True)
class Allowed(Case):
    """A third-party module the rules may import."""


RULES_THIRD_PARTY = [
    Allowed("pydantic", "the API's types are pydantic models, and JSON values are its JsonValue"),
    Allowed(
        "jsonpath_ng",
        "a route path template is Kubernetes-style JSONPath; the parser is pure computation",
    ),
]


def layer_of(module: str) -> str | None:
    """The layer `function.x.y` belongs to (`x`); None for modules outside function/."""
    parts = module.split(".")
    if parts[0] != "function" or len(parts) < 2:
        return None
    return parts[1]


def modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def own_layer(path: Path) -> str | None:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return None if parts == ("__init__",) else parts[0]


def against_the_order() -> list[Import]:
    """Imports of a package at the same or a higher level than the importing one."""
    found = []
    for path in modules():
        mine = own_layer(path)
        if mine is None:
            continue
        for imp in imports(path):
            theirs = layer_of(imp.module)
            if theirs is None or theirs == mine:
                continue
            if LEVEL.get(theirs, sys.maxsize) >= LEVEL.get(mine, -1):
                found.append(imp)
    return found


def cycles() -> list[tuple[str, str]]:
    """Pairs of packages that import each other, directly or through others."""
    edges: dict[str, set[str]] = {}
    for path in modules():
        mine = own_layer(path)
        for imp in imports(path):
            theirs = layer_of(imp.module)
            if mine is not None and theirs is not None and theirs != mine:
                edges.setdefault(mine, set()).add(theirs)

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reachable = {p: reach(p) for p in edges}
    return sorted(
        (a, b) for a in edges for b in reachable[a] if a < b and a in reachable.get(b, ())
    )


@table(LAYERS)
def test_a_layer_imports_only_the_layers_below_it(case: Layer) -> None:
    """A layer that imports its own level or above can no longer be read, tested or changed
    without the one it imports; the failure lists each such import with its file and line."""
    wrong = [str(imp) for imp in against_the_order() if own_layer(imp.source) == case.id]
    assert not wrong, f"{case.id} (level {case.level}) imports its level or above:\n" + "\n".join(
        wrong
    )


def test_no_two_packages_import_each_other() -> None:
    """Two packages that reach each other (directly or through others) are one package in two
    folders, and importing either may fail half-initialised."""
    assert not cycles(), f"package cycles: {cycles()}"


def test_every_package_has_a_level() -> None:
    """A new package must be placed in the order (and the docstring) before it can be used."""
    found = {own_layer(p) for p in modules()} - {None}
    assert found == set(LEVEL), f"not in LAYERS: {found - set(LEVEL)}; gone: {set(LEVEL) - found}"


def test_the_docstring_states_the_same_order() -> None:
    """function/__init__.py tells a reader the order this test enforces."""
    doc = function.__doc__ or ""
    levels = sorted(set(LEVEL.values()))
    stated = " < ".join(
        ", ".join(layer.id for layer in LAYERS if layer.level == level) for level in levels
    )
    assert stated in doc, f"function/__init__.py should state: {stated}"


def test_the_rules_import_only_the_api_the_standard_library_and_pure_libraries() -> None:
    """The rules stay pure: nothing of Crossplane, protobuf, Kubernetes or the network, so each
    is tested by calling it with API values."""
    allowed = {a.id for a in RULES_THIRD_PARTY}
    wrong = []
    for path in sorted((ROOT / "rules").rglob("*.py")):
        for imp in imports(path):
            top = imp.module.split(".")[0]
            if top == "function":
                if layer_of(imp.module) not in {"api", "rules"}:
                    wrong.append(str(imp))
            elif top not in sys.stdlib_module_names and top not in allowed:
                wrong.append(str(imp))
    assert not wrong, "function/rules/ must stay pure:\n" + "\n".join(wrong)


@dataclass(frozen=True)
class Probe(Case):
    """A module's text that imports function.server one way or another."""

    code: str


PROBES = [
    Probe("top-level", "the plain import", "from function.server import fn\n"),
    Probe(
        "in-a-function",
        "a lazy import still makes the module depend on the server",
        "def f():\n    from function.server import fn\n",
    ),
    Probe(
        "type-checking",
        "a type-only import still ties the layers together (and is one step from a real one)",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import function.server.fn\n",
    ),
    Probe("relative", "a relative import names the same module", "from ...server import fn\n"),
    Probe(
        "from-the-package",
        "importing the module from its package names only `function` in the statement",
        "from function import server\n",
    ),
    Probe(
        "relative-from-the-package",
        "the same from the package, relatively",
        "from ... import server\n",
    ),
]


@table(PROBES)
def test_every_kind_of_import_is_seen(case: Probe) -> None:
    """A lazy or type-only import is still a dependency; the scan must not miss one."""
    found = [
        imp.module
        for imp in imports(ROOT / "rules" / "probe.py", case.code)
        if layer_of(imp.module) == "server"
    ]
    assert found, f"the scan missed the import in:\n{case.code}"


def test_the_server_imports_no_composer_but_the_dispatch_table() -> None:
    """Composers report what the server counts (`Composition.counted`), so the server needs none
    of their internals: a composer's module can change without the server noticing."""
    wrong = [
        str(imp)
        for path in sorted((ROOT / "server").rglob("*.py"))
        for imp in imports(path)
        if layer_of(imp.module) == "compose" and imp.module != "function.compose"
    ]
    assert not wrong, "\n".join(wrong)
