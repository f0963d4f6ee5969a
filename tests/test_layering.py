"""Imports point one way: cli -> metrics -> core, adapters -> core, and no circle in the core.

Every import counts, a function's own included (an import inside a function is still a
dependency, only a later one); those under ``TYPE_CHECKING`` do not, since they never run.
They are read from the source, not by importing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "src" / "tracebridge"


def _module_name(path: Path) -> str:
    if path.is_relative_to(ROOT / "adapters"):
        inner = path.relative_to(ROOT / "adapters").with_suffix("").parts
        parts = ("tracebridge", "adapters", *inner)
    else:
        parts = ("tracebridge", *path.relative_to(CORE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Modules of tracebridge that ``path`` imports, anywhere but under ``TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.startswith("tracebridge"):
                names = [f"{target}.{alias.name}" for alias in node.names]
                found.update(names if node.module is None else [target])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("tracebridge"))
    return found


def _graph(paths: list[Path]) -> dict[str, set[str]]:
    return {_module_name(path): _imports(path) for path in paths}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_core_has_no_import_circle() -> None:
    graph = _graph(sorted(CORE.glob("*.py")))
    # A package's __init__ re-exports its modules; the circle that matters is between modules.
    del graph["tracebridge"]
    assert _cycle(graph) is None
    # messages renders with render.py, which names message classes for typing only; sample
    # hashes with hashing.py, which takes any conversation.
    assert "tracebridge.render" in graph["tracebridge.messages"]
    assert "tracebridge.messages" not in graph["tracebridge.render"]
    assert "tracebridge.sample" not in graph["tracebridge.hashing"]


def test_the_core_imports_no_adapter_and_no_metric() -> None:
    for path in sorted(CORE.glob("*.py")):
        if path.name == "cli.py":
            continue
        imported = _imports(path)
        assert not {m for m in imported if m.startswith("tracebridge.adapters")}, path.name
        assert not {m for m in imported if m.startswith("tracebridge.metrics")}, path.name


def test_metrics_never_import_the_command_line_or_an_adapter() -> None:
    for path in sorted((CORE / "metrics").glob("*.py")):
        imported = _imports(path)
        assert "tracebridge.cli" not in imported, path.name
        assert not {m for m in imported if m.startswith("tracebridge.adapters")}, path.name


def test_adapters_import_the_core_not_the_metrics_or_the_command_line() -> None:
    for path in sorted((ROOT / "adapters").rglob("*.py")):
        imported = _imports(path)
        assert not {m for m in imported if m.startswith(("tracebridge.metrics", "tracebridge.cli"))}
