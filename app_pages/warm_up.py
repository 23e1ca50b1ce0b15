"""What a freshly started server imports before its first visitor: every page's modules.

The first page a fresh server shows used to import numpy, pyarrow, DuckDB, pandas and Plotly
on the visitor's time (0.8 s of CPU, several seconds on a loaded machine); ``serve.py`` calls
:func:`import_pages` while the server starts, before it answers any request. The modules are
read from the page files themselves (``from app_pages.x import render``), so a new page needs
no entry here. Models (torch) are not imported: the Live page loads them on its first
prediction, as before.

Then :func:`open_workspace` opens the server's workspace (the default file) into the same shared
handle the pages use: the connection, its lockdown, the schema check and the sample data were
0.35 s of CPU on the first visitor's time at real size; and :func:`prepare_caches` builds the
per-process tables every page needs: the direction-isolation table (0.15 s) and DuckDB's first
pandas result (DuckDB imports its pandas and NumPy bindings then: 0.5 s).
"""
from __future__ import annotations

import ast
import importlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from app_pages.navigation import PAGES, ROOT
from cblue_core.io.logs import log_exception
from cblue_core.store.workspace import WorkspaceError, WorkspaceLocked

log = logging.getLogger("cblue_studio.pages")


@contextmanager
def outside_a_script_run() -> Iterator[None]:
    """Streamlit calls made while the server starts (a component declared at import, the cached
    opener's spinner) look for a script run, which there is not yet, and Streamlit logs a warning
    at each look: expected here, so kept out of the server's log."""
    quiet = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        yield
    finally:
        quiet.setLevel(level)


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
            with outside_a_script_run():
                importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a page's failure is its own, shown when visited
            try:
                log_exception(f"warm-up: importing {name}", exc)
            except OSError:
                log.error("warm-up: importing %s failed (%s)", name, type(exc).__name__)
            continue
        done.append(name)
    return done


def open_workspace() -> bool:
    """Open the server's workspace into the pages' shared handle; False when it cannot be opened
    (locked by a command, not a workspace...): logged, and the first visitor is told why, as
    without the warm-up."""
    from app_pages.common import default_db_path, shared_workspace
    try:
        with outside_a_script_run():
            shared_workspace(str(default_db_path()))
    except (WorkspaceError, WorkspaceLocked) as exc:
        log.warning("warm-up: the workspace was not opened: %s", exc)
        return False
    return True


def prepare_caches() -> None:
    """Build the per-process tables the first page would otherwise build on its visitor's time."""
    from contextlib import closing

    from cblue_core.render import bidi
    from cblue_core.store.lockdown import locked_connection
    bidi.prepare()
    with closing(locked_connection()) as con:      # private, in memory: nothing of a visitor's
        con.execute("SELECT 1 AS one").df()
