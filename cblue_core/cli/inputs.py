"""What the ``run`` and ``predict`` commands read, for models and endpoints alike: the ``--db``
workspace and the ``--input`` file."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from ..io.errors import FileRefused
from ..io.validate import LoadedDataset, load
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


def read_input(input_path: str, spec, err: Callable[[str], None]) -> LoadedDataset | None:
    """The official input file, or None after saying why it was refused (20 defects at most)."""
    try:
        return load(input_path, spec)
    except FileRefused as refused:
        err(f"input file refused: {input_path}")
        for d in refused.defects[:20]:
            print(f"  {d}", file=sys.stderr)
        if len(refused.defects) > 20:
            print(f"  ... {len(refused.defects) - 20} more", file=sys.stderr)
        return None
