"""House rule: ``st.cache_resource`` holds shared handles only (the workspace connection, loaded
models, the process's draft store and its count of new workspace files); everything derived
from data is ``st.cache_data``, so that each session gets its own copy. Checked on the source
of every page module."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED_HANDLES = {"_open_workspace", "_load_model", "draft_store", "new_workspace_quota"}


def cached_functions(kind: str) -> dict[str, str]:
    found = {}
    for path in sorted([*(ROOT / "app_pages").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if isinstance(target, ast.Attribute) and target.attr == kind:
                        found[node.name] = str(path.relative_to(ROOT))
    return found


def test_cache_resource_only_for_shared_handles():
    resources = cached_functions("cache_resource")
    assert set(resources) == SHARED_HANDLES, resources


def test_the_rule_sees_cache_data_too():          # the scan finds decorated functions at all
    assert {"run_evaluation_cached", "gold_changes"} <= set(cached_functions("cache_data"))
