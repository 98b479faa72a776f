"""The layers stay apart: no import cycles, engines without Django, planner never reaching
into interview, and no private Django names outside the tests."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("accounts", "authoring", "config", "interview", "planner", "questionbank", "bench")
DJANGO_FREE = ("planner/engine", "grading", "questionbank")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path) -> list[str]:
    """Every module named by an import anywhere in the file, top level or inside functions;
    relative imports are resolved against the file's package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = parts[:-1]
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names]
    return names


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        targets = {t for t in _imports(path) if t in modules and t != name}
        # A package's own __init__ importing its submodules is how packages are built; a
        # submodule importing its package's __init__ back is the cycle we look for.
        graph[name] = {t for t in targets if not (name.startswith(t + ".") and t != name)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def test_no_import_cycle_between_modules():
    assert _cycles(_graph()) == []


def test_planner_never_imports_interview():
    offenders = [
        f"{name} -> {target}"
        for name, targets in _graph().items()
        if name.startswith("planner")
        for target in targets
        if target.startswith("interview")
    ]
    assert offenders == []


def test_engines_import_nothing_from_django():
    offenders = []
    for name, path in _modules().items():
        if any(str(path.relative_to(ROOT)).startswith(prefix) for prefix in DJANGO_FREE):
            offenders += [f"{name} -> {t}" for t in _imports(path) if t.startswith("django")]
    assert offenders == []


def test_no_private_django_names_outside_tests():
    offenders = []
    for name, path in _modules().items():
        for target in _imports(path):
            parts = target.split(".")
            if target.startswith("django.db.models.sql") or (
                parts[0] == "django" and any(p.startswith("_") for p in parts)
            ):
                offenders.append(f"{name} -> {target}")
    assert offenders == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
