"""The shape docs/ARCHITECTURE.md promises: no import cycle between trainwell's parts, and a
configuration that is checked before torch is imported."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import trainwell

SRC = Path(trainwell.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str | None:
    """The package or top-level module of trainwell a module belongs to (``trainwell.engine.trainer`` ->
    ``engine``); None for the root package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    return skipped


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[:len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def import_graph() -> dict[str, dict[str, list[str]]]:
    """part -> imported part -> ["importing.module -> imported.module", ...]; imports inside functions
    count, ``if TYPE_CHECKING:`` ones do not."""
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, dict[str, list[str]]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped or not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(module, path, node):
                if target not in modules:
                    continue
                a, b = _part(module), _part(target)
                if a and b and a != b:
                    graph.setdefault(a, {}).setdefault(b, []).append(f"{module} -> {target}")
    return graph


def cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected groups of more than one part (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(set(graph) | {w for targets in graph.values() for w in targets}):
        if v not in index:
            visit(v)
    return groups


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b": ["x"]}, "b": {"c": ["y"]}, "c": {"a": ["z"]}, "d": {"a": ["w"]}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": ["x"]}}) == []


def test_no_import_cycle_between_trainwell_parts() -> None:
    graph = import_graph()
    found = cycles(graph)
    detail = [f"{a} -> {b}: {graph[a][b][0]}" for group in found for a in group for b in group if b in graph.get(a, {})]
    assert not found, "import cycles between trainwell's parts:\n" + "\n".join(detail)


def test_the_graph_has_the_layers_the_architecture_names() -> None:
    graph = import_graph()
    assert "engine" in graph["app"] and "tasks" in graph["app"]  # the app wires engine and tasks...
    for lower in ("engine", "tasks", "doctor", "report", "data", "models", "config"):
        assert "app" not in graph.get(lower, {}), f"{lower} imports the app layer"
        assert "cli" not in graph.get(lower, {}), f"{lower} imports the command line"
    for part in ("tasks", "report", "doctor", "app"):
        assert part not in graph["engine"], f"the engine imports {part}"
    assert "data" not in graph.get("config", {}) and "models" not in graph.get("config", {})


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_config_errors_are_reported_before_torch_is_imported() -> None:
    done = _run("import sys\nfrom trainwell.cli import main\n"
                "code = main(['train', '--data', 'mnst', '--set', 'train.lr=-1'])\n"
                "print('torch' in sys.modules, code)")
    assert done.stdout.split() == ["False", "2"], done.stdout + done.stderr
    assert "Did you mean 'mnist'" in done.stderr and "train.lr" in done.stderr


def test_listing_datasets_and_models_needs_no_torch() -> None:
    done = _run("import sys\nfrom trainwell.cli import main\nmain(['datasets']); main(['models'])\n"
                "print('torch' in sys.modules)")
    assert done.stdout.strip().endswith("False"), done.stdout + done.stderr
    assert "snownlp-sentiment" in done.stdout and "lstm" in done.stdout
