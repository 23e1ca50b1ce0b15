"""The ``--db`` workspace of the ``run`` commands (models and endpoints alike)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..store.workspace import Workspace, WorkspaceError, WorkspaceLocked, connect, default_db_path


def open_existing(db: str | None, err: Callable[[str], None]) -> Workspace | int:
    """The workspace at ``db`` (default ``$CBLUE_STUDIO_DB``), or the exit code after ``err``
    said why: 1 when there is no file (a mistyped ``--db`` must not leave an empty workspace
    behind), 2 when it is locked or not a workspace."""
    path = Path(db) if db else default_db_path()
    if not path.is_file():
        err(f"no workspace at {path} (create one with `ingest`, or start the app)")
        return 1
    try:
        return connect(path)
    except (WorkspaceLocked, WorkspaceError) as exc:
        err(str(exc))
        return 2
