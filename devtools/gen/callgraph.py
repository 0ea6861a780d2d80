"""The path a reader follows from a composer through function/: modules crossed, returns made.

`python -m devtools.gen.callgraph [function.module.name]` (default
`function.compose.service.compose_service`) prints the functions reached, in the order read, and
two figures, counted over the modules under `--scope` (default `function.compose`, the
composers' own; `--scope function` counts every layer):

- modules: the distinct modules those functions live in;
- returns: how often the reading order goes back to a module it has already left (a module
  read in one stretch counts none; each time it is re-entered after another counts one).
  Functions outside the scope are leaves the reader looks up and comes back from: they are
  skipped, so going out to one and back is no return.

`--root` reads another checkout's function/ (the same figures before and after a change).

How it counts (static and approximate, the same way every time):

- Functions are the module-level `def`s and the methods of classes in function/; a nested
  function or lambda belongs to the function it is written in.
- A call is followed when its target resolves statically within function/: a name defined in
  the module or imported from function/ (`from function.x import f`, relative imports and
  re-exports too), an attribute of an imported module (`mod.f`), a class's method (`Class.m`,
  `Class.MEMBER.m` for an enum member, `self.m`, `cls.m`), and a method called on a value whose
  class of function/ it can see: a parameter's annotation, a local assigned once from a call
  (the called function's return annotation, `tuple[A, B]` unpacked too, or the class called), a
  call's result, or an annotated field of such a value (`parts.lora.reported()`); `X | None`
  counts as `X`. Anything else (methods of values whose class it cannot see, functions passed
  as values, calls into libraries) is not followed.
- From the start, functions are read depth first, each one once, its calls in source order
  (by line, then column: an outer call before the calls in its arguments); a class called is
  not a function and is not entered (its `__post_init__` and validators are left out).
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from devtools.tools import ROOT

PACKAGE = ROOT / "function"
START = "function.compose.service.compose_service"
SCOPE = "function.compose"


@dataclass
class Module:
    """One module of function/: its functions, classes and the names it imports."""

    name: str
    path: Path
    tree: ast.Module
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    imported: dict[str, str] = field(default_factory=dict)
    """Local name -> the dotted name it stands for (a module, or a module's attribute)."""


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def load(root: Path = PACKAGE) -> dict[str, Module]:
    """Every module under `root`, by dotted name."""
    out: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        name = _module_name(path, root)
        module = Module(name, path, ast.parse(path.read_text(), str(path)))
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                module.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                module.classes[node.name] = node
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        module.imported = dict(_imported(module.tree, package))
        out[name] = module
    return out


def _imported(tree: ast.Module, package: str) -> Iterator[tuple[str, str]]:
    """Each name an import binds in the module, and the dotted name it stands for."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    yield alias.asname, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{up}.{base}" if base else up
            for alias in node.names:
                yield alias.asname or alias.name, f"{base}.{alias.name}"


@dataclass(frozen=True)
class Graph:
    """The static call graph of function/ (see the module docstring for what it follows)."""

    modules: dict[str, Module]

    def definition(self, dotted: str) -> tuple[str, str | None, str] | None:
        """(module, class or None, name) of a function `dotted` names; None if it names none.

        Re-exports are followed: `function.compose.service.plan_wake` is `...wake.plan_wake`.
        """
        for _ in range(10):  # a chain of re-exports, never a cycle in practice
            module, _, name = dotted.rpartition(".")
            found = self.modules.get(module)
            if found is None:
                return None
            if name in found.functions:
                return module, None, name
            target = found.imported.get(name)
            if target is None:
                return None
            dotted = target
        return None

    def class_of(self, module: Module, name: str) -> tuple[Module, ast.ClassDef] | None:
        """The class a name stands for in `module` (defined there or imported from function/).

        A dotted name (`adapters.AdapterOutcome`) is a class of a module `module` imports.
        """
        if "." in name:
            alias, _, attr = name.partition(".")
            imported = self.modules.get(module.imported.get(alias, ""))
            return self.class_of(imported, attr) if imported is not None else None
        if name in module.classes:
            return module, module.classes[name]
        target = module.imported.get(name)
        for _ in range(10):
            if target is None:
                return None
            owner, _, attr = target.rpartition(".")
            found = self.modules.get(owner)
            if found is None:
                return None
            if attr in found.classes:
                return found, found.classes[attr]
            target = found.imported.get(attr)
        return None

    def method(self, module: Module, class_name: str, name: str) -> str | None:
        """`owner.Class.name` when the class `class_name` names in `module` defines the method."""
        found = self.class_of(module, class_name)
        return _method_in(found, name) if found is not None else None

    def function(self, dotted: str) -> tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef]:
        """The module and definition of a function key (`mod.f` or `mod.Class.m`)."""
        for module_name in sorted(self.modules, key=len, reverse=True):
            if not dotted.startswith(module_name + "."):
                continue
            rest = dotted[len(module_name) + 1 :].split(".")
            module = self.modules[module_name]
            if len(rest) == 1 and rest[0] in module.functions:
                return module, module.functions[rest[0]]
            if len(rest) == 2 and rest[0] in module.classes:  # noqa: PLR2004 - Class.method
                for node in module.classes[rest[0]].body:
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        node.name == rest[1]
                    ):
                        return module, node
        msg = f"no function {dotted} in function/"
        raise KeyError(msg)

    def calls(self, dotted: str) -> list[str]:
        """The functions `dotted` calls that resolve, in source order, each once."""
        module, node = self.function(dotted)
        enclosing = dotted.rsplit(".", 2)[-2] if dotted.count(".") else None
        in_class = enclosing if enclosing in module.classes else None
        types = _local_types(self, module, node)
        seen: list[str] = []
        for call in sorted(_calls_in(node), key=lambda c: (c.lineno, c.col_offset)):
            target = self._resolve(module, call.func, types, in_class)
            if target is not None and target != dotted and target not in seen:
                seen.append(target)
        return seen

    def _resolve(
        self, module: Module, func: ast.expr, types: Types, in_class: str | None
    ) -> str | None:
        """The function a call's target names, as the module docstring says; None if unseen."""
        if isinstance(func, ast.Name):
            return self._named(module, func.id)
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, ast.Name):
            return self._attribute(module, receiver.id, func.attr, types, in_class)
        found: Class | None = None
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
            owner = receiver.value.id
            if owner in types:  # a field of a typed local: `parts.lora.reported()`
                found = _field_class(self, types[owner], receiver.attr)
            else:  # an enum member's method: `ConditionType.MODEL_READY.pending(...)`
                found = self.class_of(module, owner)
        elif isinstance(receiver, ast.Call):
            returned = _returned_classes(self, module, receiver.func)
            found = returned[0] if len(returned) == 1 else None
        return _method_in(found, func.attr) if found is not None else None

    def _named(self, module: Module, name: str) -> str | None:
        """A bare name called: a function of the module, or one imported from function/."""
        if name in module.functions:
            return f"{module.name}.{name}"
        target = module.imported.get(name)
        found = self.definition(target) if target else None
        return ".".join(p for p in found if p) if found else None

    def _attribute(
        self,
        module: Module,
        receiver: str,
        attr: str,
        types: Types,
        in_class: str | None,
    ) -> str | None:
        """`receiver.attr(...)`: a method of self, of a typed local, of a class, or a module's."""
        if receiver in {"self", "cls"} and in_class is not None:
            return self.method(module, in_class, attr)
        if receiver in types:
            return _method_in(types[receiver], attr)
        if self.class_of(module, receiver) is not None:
            return self.method(module, receiver, attr)
        target = module.imported.get(receiver)
        if target is None or target not in self.modules:
            return None
        found = self.definition(f"{target}.{attr}")
        return ".".join(p for p in found if p) if found else None


def _calls_in(node: ast.AST) -> Iterator[ast.Call]:
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            yield child


def _method_in(found: tuple[Module, ast.ClassDef], name: str) -> str | None:
    owner, cls = found
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return f"{owner.name}.{cls.name}.{name}"
    return None


def _field_class(graph: Graph, found: Class, name: str) -> Class | None:
    """The class of a class's annotated field `name` (a dataclass's), where it can be seen."""
    owner, cls = found
    for node in cls.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            annotated = _annotation_class(node.annotation)
            return graph.class_of(owner, annotated) if annotated is not None else None
    return None


def _annotation_names(annotation: ast.expr | None) -> list[str | None]:
    """The class names an annotation gives, one per value returned.

    `X` and `X | None` give X, `tuple[X, Y]` X and Y; None stands for a part that is no class.
    """
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            return _annotation_names(ast.parse(annotation.value, mode="eval").body)
        except SyntaxError:
            return [None]
    if (
        isinstance(annotation, ast.Subscript)
        and isinstance(annotation.value, ast.Name)
        and annotation.value.id == "tuple"
    ):
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
        return [_annotation_class(part) for part in parts]
    return [_annotation_class(annotation)]


def _annotation_class(annotation: ast.expr | None) -> str | None:
    """`X`, `mod.X`, `X | None` or `None | X` as the class name X; None for anything else."""
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Attribute) and isinstance(annotation.value, ast.Name):
        return f"{annotation.value.id}.{annotation.attr}"
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        named = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(named) == 1:
            return _annotation_class(named[0])
    return None


Class = tuple[Module, ast.ClassDef]
Types = dict[str, Class]


def _returned_classes(graph: Graph, module: Module, func: ast.expr) -> list[Class | None]:
    """The classes a call of `func` returns, one per value, where they can be seen.

    A class called returns itself; a function its return annotation's classes, looked up in the
    module that defines the function.
    """
    if isinstance(func, ast.Name):
        called = graph.class_of(module, func.id)
        if called is not None:
            return [called]
    target = graph._resolve(module, func, {}, None)  # noqa: SLF001 - the same resolution
    if target is None:
        return []
    owner, definition = graph.function(target)
    return [
        graph.class_of(owner, name) if name is not None else None
        for name in _annotation_names(definition.returns)
    ]


def _local_types(
    graph: Graph, module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef
) -> Types:
    """Parameters and once-assigned locals whose class can be seen (see `_returned_classes`)."""
    types: Types = {}
    for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        name = _annotation_class(arg.annotation)
        found = graph.class_of(module, name) if name is not None else None
        if found is not None:
            types[arg.arg] = found
    assigned: dict[str, int] = {}
    for child in ast.walk(node):
        if isinstance(child, ast.Assign):
            for target in child.targets:
                for local, found in _assigned(graph, module, target, child.value):
                    assigned[local] = assigned.get(local, 0) + 1
                    if found is not None:
                        types.setdefault(local, found)
    return {k: v for k, v in types.items() if assigned.get(k, 0) <= 1}


def _assigned(
    graph: Graph, module: Module, target: ast.expr, value: ast.expr
) -> Iterator[tuple[str, Class | None]]:
    """Each name `target = value` binds, with its class where the call's result shows it."""
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    returned = _returned_classes(graph, module, value.func) if isinstance(value, ast.Call) else []
    if len(returned) != len(names):
        returned = [None] * len(names)
    for name, found in zip(names, returned, strict=True):
        if isinstance(name, ast.Name):
            yield name.id, found


@dataclass(frozen=True)
class Reading:
    """The functions read from a start, in order, and the two figures."""

    functions: list[str]
    module_of: dict[str, str]

    def within(self, scope: str) -> Reading:
        """The same reading with only the functions of modules under `scope` (a dotted prefix).

        What lies outside is read as a leaf and skipped: leaving the scope and coming back to
        the module left is no return.
        """
        inside = [
            f
            for f in self.functions
            if self.module_of[f] == scope or self.module_of[f].startswith(scope + ".")
        ]
        return Reading(inside, self.module_of)

    @property
    def modules(self) -> list[str]:
        """Distinct modules, in the order first entered."""
        return list(dict.fromkeys(self.module_of[f] for f in self.functions))

    @property
    def returns(self) -> int:
        """Times the reading order re-enters a module it had left."""
        count, seen, last = 0, set[str](), None
        for f in self.functions:
            module = self.module_of[f]
            if module != last and module in seen:
                count += 1
            seen.add(module)
            last = module
        return count


def walk(graph: Graph, start: str) -> Reading:
    """Depth first from `start`, each function once, calls in source order."""
    order: list[str] = []
    module_of: dict[str, str] = {}

    def visit(dotted: str) -> None:
        order.append(dotted)
        module_of[dotted] = graph.function(dotted)[0].name
        for callee in graph.calls(dotted):
            if callee not in module_of:
                visit(callee)

    visit(start)
    return Reading(order, module_of)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the path from a function and its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("start", nargs="?", default=START, help="a function of function/")
    parser.add_argument(
        "--scope",
        default=SCOPE,
        help=f"count only modules under this dotted prefix (default {SCOPE}; `function` for all)",
    )
    parser.add_argument(
        "--root", type=Path, default=PACKAGE, help="the function/ tree to read (another checkout)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="only the figures")
    args = parser.parse_args(argv)
    whole = walk(Graph(load(args.root)), args.start)
    path = whole.within(args.scope)
    if not args.quiet:
        last = None
        for f in path.functions:
            module = path.module_of[f]
            if module != last:
                print(module)
                last = module
            print(f"    {f[len(module) + 1 :]}")
    print(f"scope: {args.scope}")
    print(f"functions: {len(path.functions)} (of {len(whole.functions)} reached)")
    print(f"modules: {len(path.modules)}")
    print(f"returns: {path.returns}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
