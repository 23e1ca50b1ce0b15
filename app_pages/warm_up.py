"""What a freshly started server imports before its first visitor: every page's modules.

The first page a fresh server shows used to import numpy, pyarrow, DuckDB, pandas and Plotly
on the visitor's time (0.8 s of CPU, several seconds on a loaded machine); ``serve.py`` calls
:func:`import_pages` while the server starts, before it answers any request. The modules are
read from the page files themselves (``from app_pages.x import render``), so a new page needs
no entry here. Models (torch) are not imported: the Live page loads them on its first
prediction, as before.
"""
from __future__ import annotations

import ast
import importlib
import logging

from app_pages.navigation import PAGES, ROOT
from cblue_core.logs import log_exception

log = logging.getLogger("cblue_studio.pages")


def page_modules() -> list[str]:
    """The ``app_pages`` modules the page files import, in page order."""
    names: list[str] = []
    for spec in PAGES:
        tree = ast.parse((ROOT / spec.file).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module and module.startswith("app_pages") and module not in names:
                names.append(module)
    return names


def import_pages() -> list[str]:
    """Import every page's modules; returns those imported. A module that fails is logged (the
    error log beside the workspace) and skipped: its page shows the failure when visited, and
    the server still starts."""
    done = []
    for name in page_modules():
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a page's failure is its own, shown when visited
            try:
                log_exception(f"warm-up: importing {name}", exc)
            except OSError:
                log.error("warm-up: importing %s failed (%s)", name, type(exc).__name__)
            continue
        done.append(name)
    return done
