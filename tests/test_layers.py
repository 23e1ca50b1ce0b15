"""The core's layers import downwards only (docs/ARCHITECTURE.md): a file reader never reaches
the database, the store never reaches the models or the analyses, nothing reaches the pages."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "cblue_core"

# layer -> the layers it must never import
FORBIDDEN = {
    "records": {"io", "store", "metrics", "render", "analysis", "models", "annotation", "runs", "ingest",
                "evaluation", "scale", "cli"},
    "tasks": {"io", "store", "metrics", "render", "analysis", "models", "annotation", "runs", "ingest",
              "evaluation", "scale", "cli"},
    "io": {"store", "metrics", "render", "analysis", "models", "annotation", "runs", "ingest", "evaluation", "scale", "cli"},
    "metrics": {"store", "render", "analysis", "models", "annotation", "runs", "ingest", "evaluation", "scale", "cli"},
    "render": {"store", "metrics", "analysis", "models", "runs", "ingest", "evaluation", "scale", "cli"},
    "store": {"metrics", "render", "analysis", "models", "runs", "ingest", "evaluation", "scale", "cli"},
    "analysis": {"models", "runs", "ingest", "scale", "cli"},
    "models": {"analysis", "runs", "endpoint_runs", "ingest", "scale", "cli"},
    "scale": {"cli"},
    "auth": {"io", "store", "metrics", "render", "analysis", "models", "annotation", "runs", "ingest",
             "evaluation", "scale", "cli"},   # who acts and what a role allows: pure   # large jobs: over models, io and runs; under the command line
}
OUTSIDE = ("streamlit", "app_pages", "pages", "app")
# Modules that live beside their subject but belong to a higher layer.
LAYER_OF_MODULE = {"cblue_core.models.commands": "cli",   # train/predict/run subcommands
                   "cblue_core.models.endpoints.commands": "cli",   # the same for endpoint:NAME
                   "cblue_core.scale.commands": "cli",    # import-run
                   "cblue_core.errors_command": "cli",    # errors
                   "cblue_core.access_commands": "cli"}   # users, audit


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
