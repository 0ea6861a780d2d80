"""Every import a Python file makes, read with `ast`, for the layering tests.

Imports inside functions and `if TYPE_CHECKING:` blocks count as much as those at the top, and
relative imports are resolved to the module they name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from devtools.tools import ROOT as REPO


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it is."""

    source: Path
    line: int
    module: str

    def __str__(self) -> str:
        return f"{self.source.relative_to(REPO)}:{self.line}: imports {self.module}"


def imports(path: Path, text: str | None = None) -> Iterator[Import]:
    """Every module `path` imports, wherever the statement is (functions, TYPE_CHECKING too).

    `text` stands for the file's content (the scan's own test).
    """
    package = ".".join(path.relative_to(REPO).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text() if text is None else text, str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            yield Import(path, node.lineno, module)
            # `from function import server` imports the module function.server, not only the
            # package: a scan that saw only `function` would miss which layer it reached.
            for alias in node.names:
                if _is_module(f"{module}.{alias.name}"):
                    yield Import(path, node.lineno, f"{module}.{alias.name}")


def _is_module(dotted: str) -> bool:
    """Whether `dotted` names a module or package of this repository."""
    where = REPO.joinpath(*dotted.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()
