"""The core's layers import downwards only (docs/ARCHITECTURE.md): a file reader never reaches
the database, the store never reaches the models or the analyses, nothing reaches the pages. No
module of the core or the app is in an import cycle or imports another module's private names;
every subcommand is declared in cblue_core/cli/; the architecture's diagram names the core's
packages as the tree has them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "cblue_core"

# layer -> the layers it must never import
FORBIDDEN = {
    "records": {"io", "store", "metrics", "render", "analysis", "models", "annotation", "runs", "scoring",
                "scale", "cli"},
    "tasks": {"io", "store", "metrics", "render", "analysis", "models", "annotation", "runs", "scoring",
              "scale", "cli"},
    "io": {"store", "metrics", "render", "analysis", "models", "annotation", "runs", "scoring", "scale", "cli"},
    "metrics": {"store", "render", "analysis", "models", "annotation", "runs", "scoring", "scale", "cli"},
    "render": {"store", "metrics", "analysis", "models", "runs", "scoring", "scale", "cli"},
    "store": {"metrics", "render", "analysis", "models", "runs", "scoring", "scale", "cli"},
    "analysis": {"models", "runs", "scale", "cli"},
    "scoring": {"store", "models", "annotation", "runs", "scale", "cli"},
    "models": {"analysis", "runs", "scale", "cli"},
    "runs": {"scale", "cli"},
    "scale": {"cli"},
    "auth": {"io", "store", "metrics", "render", "analysis", "models", "annotation", "runs", "scoring",
             "scale", "cli"},   # who acts and what a role allows: pure
}
OUTSIDE = ("streamlit", "app_pages", "pages", "app")
# The one scoring entry point sits in runs/ beside the runs it scores, but the trainers score their
# dev splits with it too: it imports only metrics, analysis, records and tasks (a layer of its own).
LAYER_OF_MODULE = {"cblue_core.runs.evaluation": "scoring"}


def layer_of(module: str) -> str:
    if module in LAYER_OF_MODULE:
        return LAYER_OF_MODULE[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def core_imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in a core file, relative ones resolved."""
    package = ["cblue_core", *path.relative_to(CORE).with_suffix("").parts]
    package = package[:-1]   # the file's own package
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
    return out


FILES = sorted(CORE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORE)))
def test_imports_go_down(path):
    mine = layer_of(".".join(["cblue_core", *path.relative_to(CORE).with_suffix("").parts]))
    bad = []
    for line, name in core_imports(path):
        top = name.split(".")[0]
        if top in OUTSIDE:
            bad.append(f"line {line}: {name} (the core never imports the app or Streamlit)")
        elif top == "cblue_core" and layer_of(name) in FORBIDDEN.get(mine, set()):
            bad.append(f"line {line}: {mine} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    fake = CORE / "io" / "probe_for_layers.py"   # resolved like a real io module, never written
    source = "from ..store.workspace import connect\nimport streamlit as st\n"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    found = {name for _, name in core_imports(fake)}
    assert found == {"cblue_core.store.workspace", "streamlit"}
    assert layer_of("cblue_core.store.workspace") in FORBIDDEN["io"]


# ---- the whole import graph of the core and the app -------------------------------------------

APP = CORE.parent / "app_pages"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def type_checking_nodes(tree: ast.AST) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``, which never run."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports_of(path: Path, modules: set[str]) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, names taken) of every import that runs (inside functions too),
    relative ones resolved; ``from pkg import mod`` counts as importing ``pkg.mod``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = type_checking_nodes(tree)
    me = module_name(path)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
                    if node.level else node.module or "")
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((node.lineno, sub, []) if sub in modules else (node.lineno, base, [a.name]))
    return out


GRAPH_FILES = sorted([*CORE.rglob("*.py"), *APP.rglob("*.py")])
MODULES = {module_name(p) for p in GRAPH_FILES}


def import_graph(files: list[Path]) -> dict[str, set[str]]:
    modules = {module_name(p) for p in files}
    graph: dict[str, set[str]] = {module_name(p): set() for p in files}
    for path in files:
        me = module_name(path)
        for _, target, _ in imports_of(path, modules):
            while target and target not in modules:      # a name inside a module: the module
                target = target.rpartition(".")[0]
            if target and target != me:
                graph[me].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(targets)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_in_the_core_or_the_app():
    found = cycles(import_graph(GRAPH_FILES))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_check_finds_a_planted_cycle(tmp_path, monkeypatch):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def private_imports(path: Path) -> list[str]:
    bad = []
    for line, module, names in imports_of(path, MODULES):
        taken = [n for n in names if n.startswith("_") and not n.startswith("__")]
        parts = [p for p in module.split(".") if p.startswith("_") and not p.startswith("__")]
        if taken or parts:
            bad.append(f"line {line}: {module} {', '.join(taken)}".strip())
    return bad


@pytest.mark.parametrize("path", GRAPH_FILES, ids=lambda p: str(p.relative_to(CORE.parent)))
def test_no_module_imports_another_modules_private_names(path):
    assert not private_imports(path)


def test_the_private_name_check_sees_one(tmp_path):
    probe = APP / "probe_for_private_names.py"     # resolved like an app module, never written
    source = "from cblue_core.cli.output import _hidden\ndef f():\n    from app_pages.common import _x\n"
    original = Path.read_text
    try:
        Path.read_text = lambda self, encoding=None: source if self == probe else original(self, encoding=encoding)
        assert len(private_imports(probe)) == 2
    finally:
        Path.read_text = original


def test_every_subcommand_is_declared_in_the_cli_package():
    outside = []
    for path in CORE.rglob("*.py"):
        if path.relative_to(CORE).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_parser":
                outside.append(f"{path.relative_to(CORE)}:{node.lineno}")
    assert not outside, f"add_parser outside cblue_core/cli/: {outside}"


def test_the_architecture_diagram_names_the_core_packages_one_to_one():
    doc = (CORE.parent / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    diagram = doc.split("```", 2)[1]
    named = set(re.findall(r"cblue_core/(\w+)/", diagram))
    packages = {p.parent.name for p in CORE.glob("*/__init__.py")}
    assert named == packages, f"diagram only: {sorted(named - packages)}; tree only: {sorted(packages - named)}"
    top = {p.name for p in CORE.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert top <= set(re.findall(r"(\w+\.py)", diagram)), f"top-level modules not in the diagram: {sorted(top)}"
