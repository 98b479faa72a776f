"""The layers stay apart: no import cycles, dependencies between the top-level packages only
along the allowed arrows (engines import no app, practice knows nothing of the features built
on it), engines without Django, and no private Django names outside the tests."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "accounts", "authoring", "bench", "config", "diagrams", "drills", "grading", "mocks", "planner",
    "practice", "questionbank", "questions", "rate_limits", "review", "simulator",
)  # fmt: skip
DJANGO_FREE = (
    "planner/engine", "grading", "questionbank", "drills/engine.py", "simulator/engine", "diagrams",
)  # fmt: skip

# Who may import whom, between top-level packages ("planner.engine" counted apart from the
# planner's Django layer). Engines first: they import no Django app. Then the apps, each on
# the ones below it: practice on question content, and the features built on practice (mock
# interviews, review, authoring) on practice, never the other way round.
ENGINES = {"planner.engine", "questionbank", "grading", "simulator.engine", "diagrams"}
ALLOWED = {
    "planner.engine": set(),
    # Architecture diagrams: Mermaid text read and laid out; question files and both graders
    # read them, and every app that shows an answer draws them.
    "diagrams": set(),
    "questionbank": {"planner.engine", "diagrams"},
    "grading": {"planner.engine", "questionbank", "diagrams"},
    # The load simulator's engine runs the planner's step times.
    "simulator.engine": {"planner.engine"},
    "rate_limits": set(),
    "accounts": {"rate_limits"},
    "planner": {"planner.engine", "questionbank", "questions", "rate_limits"},
    "questions": {"questionbank", "grading", "diagrams"},
    "practice": {
        "questions",
        "questionbank",
        "grading",
        "planner.engine",
        "rate_limits",
        "diagrams",
    },  # fmt: skip
    "mocks": {"practice", "questions", "questionbank", "grading", "rate_limits", "diagrams"},
    "review": {
        "practice",
        "questions",
        "questionbank",
        "grading",
        "accounts",
        "rate_limits",
        "diagrams",
    },  # fmt: skip
    # Drills and progress: built on the planner's engine and on practice's verdicts (read);
    # the drill command refuses bad input by the planner's command contract.
    "drills": {
        "accounts",
        "planner",
        "planner.engine",
        "practice",
        "questions",
        "questionbank",
        "rate_limits",
    },  # fmt: skip
    # The load simulator's pages: the planner's form and charts, a panel hooked into practice.
    "simulator": {
        "simulator.engine",
        "planner",
        "planner.engine",
        "practice",
        "questions",
        "questionbank",
        "rate_limits",
    },  # fmt: skip
    "authoring": {
        "practice",
        "questions",
        "questionbank",
        "grading",
        "accounts",
        "rate_limits",
        "diagrams",
    },  # fmt: skip
}  # config and bench put the site together: they may import anything.


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        folder = ROOT / package
        for path in folder.rglob("*.py") if folder.is_dir() else [ROOT / f"{package}.py"]:
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


def _package(module: str) -> str:
    for engine in ("planner.engine", "simulator.engine"):  # counted apart from their apps
        if module.startswith(engine):
            return engine
    return module.split(".")[0]


def _arrows_not_allowed(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{name} -> {target}"
        for name, targets in graph.items()
        if _package(name) in ALLOWED
        for target in targets
        if _package(target) != _package(name) and _package(target) not in ALLOWED[_package(name)]
    ]


def test_packages_import_only_along_the_allowed_arrows():
    assert _arrows_not_allowed(_graph()) == []


def test_practice_imports_nothing_of_mock_interviews_and_engines_no_app():
    graph = _graph()
    assert not any(
        _package(t) == "mocks" for n, ts in graph.items() if _package(n) == "practice" for t in ts
    )
    apps = {"questions", "practice", "mocks", "review", "authoring", "accounts", "planner"}
    assert not any(
        _package(t) in apps for n, ts in graph.items() if _package(n) in ENGINES for t in ts
    )


def test_the_arrow_check_refuses_practice_importing_mocks():
    assert _arrows_not_allowed({"practice.services": {"mocks.log"}}) == [
        "practice.services -> mocks.log"
    ]
    assert _arrows_not_allowed({"grading.llm": {"practice.models"}}) == [
        "grading.llm -> practice.models"
    ]


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
