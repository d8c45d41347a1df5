"""The engine's import graph (issue 21, item 4): type detection needs nothing from a sanitizer,
and no two engine modules need each other.

The graph is read from the source (every `import` and `from ... import`, also those inside
functions, which hide a cycle from Python but not from a reader), not from what happens to be
imported at run time. Imports under `if TYPE_CHECKING:` are left out: they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sanitas.engine
from sanitas.engine import formats

PACKAGE = "sanitas.engine"
ROOT = Path(sanitas.engine.__file__).parent

# The package itself is the dispatcher (`sanitize_detected`): a sanitizer that finds a file
# inside a file (an archive member, an embedded object, a PDF attachment) hands it back to it.
# That recursion is the design; an edge *into* the dispatcher is not a dependency of one
# module on another and is left out of the cycle check.
DISPATCHER = PACKAGE


def _with_parents(importer: str, targets: set[str]) -> set[str]:
    """Importing `pkg.sub` runs `pkg/__init__.py` first: an import from outside a subpackage
    depends on the subpackage itself (the engine package, the dispatcher, is left out)."""
    found = set(targets)
    for target in targets:
        parent = target.rpartition(".")[0]
        while parent.startswith(f"{PACKAGE}.") and not importer.startswith(f"{parent}."):
            found.add(parent)
            parent = parent.rpartition(".")[0]
    return found


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                skipped.update(id(inner) for inner in ast.walk(statement))
    return skipped


def import_graph() -> dict[str, set[str]]:
    """Engine module -> the engine modules it imports (relative imports resolved; `from pkg
    import name` is an edge to the submodule `pkg.name` when there is one, else to `pkg`)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skipped = _type_checking_only(tree)
        package = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                submodules = {f"{source}.{alias.name}" for alias in node.names
                              if f"{source}.{alias.name}" in modules}
                targets |= submodules
                if len(submodules) < len(node.names):
                    targets.add(source)
        targets = _with_parents(name, targets)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    # pdf.py imports nested only inside the function that cleans attachments
    assert f"{PACKAGE}.nested" in graph[f"{PACKAGE}.pdf"]
    assert f"{PACKAGE}.report" in graph[f"{PACKAGE}.detect"]
    # a module of a subpackage pulls in the subpackage, unless the importer is inside it
    assert _with_parents(f"{PACKAGE}.detect", {f"{PACKAGE}.ooxml.state"}) == {
        f"{PACKAGE}.ooxml.state", f"{PACKAGE}.ooxml"}
    assert _with_parents(f"{PACKAGE}.ooxml.parts", {f"{PACKAGE}.ooxml.state"}) == {
        f"{PACKAGE}.ooxml.state"}
    assert f"{PACKAGE}.ooxml.state" in graph[f"{PACKAGE}.ooxml.parts"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_detection_imports_no_sanitizer() -> None:
    sanitizers = {family.module for family in formats.FAMILIES.values()}
    assert f"{PACKAGE}.ooxml" in sanitizers and f"{PACKAGE}.pdf" in sanitizers
    needed = _reachable(import_graph(), f"{PACKAGE}.detect")
    assert not needed & (sanitizers | {DISPATCHER}), sorted(needed & (sanitizers | {DISPATCHER}))


def test_no_import_cycle_among_engine_modules() -> None:
    graph = {name: targets - {DISPATCHER} for name, targets in import_graph().items()}
    assert _cycles(graph) == []


def test_engine_names_are_imported_under_their_own_name() -> None:
    """One name for one thing: a class, function or constant of the engine keeps its name
    wherever it is imported (no `Action as Decision`). A module may be bound to another name
    (`pdf as pdf_family` beside a function called `pdf`); `X as X` marks a re-export."""
    modules = _modules()
    renamed = []
    for name, (path, _is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                    PACKAGE):
                continue
            for alias in node.names:
                if alias.asname in (None, alias.name) or \
                        f"{node.module}.{alias.name}" in modules:
                    continue
                renamed.append(f"{name}: {alias.name} as {alias.asname}")
    assert renamed == []

