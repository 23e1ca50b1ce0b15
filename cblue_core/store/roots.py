"""Where the app may open workspace files: under the allowed roots only.

The sidebar's *Workspace file* field is typed by any visitor of a served app. Without a limit
it created folders and databases wherever the server's user could write, and added the app's
tables to other programs' DuckDB files. The command line's ``--db`` trusts its caller and does
not come here.
"""
from __future__ import annotations

import os
from pathlib import Path

from .errors import WorkspaceError
from .workspace import ENV_DB

ENV_ROOTS = "CBLUE_STUDIO_ROOTS"
SUFFIX = ".duckdb"
MAX_PATH_LENGTH = 1024


def allowed_roots() -> list[Path]:
    """``workspace/`` under the working directory, the folder of ``$CBLUE_STUDIO_DB``, and the
    folders listed in ``$CBLUE_STUDIO_ROOTS`` (``os.pathsep``-separated); resolved, no duplicates."""
    candidates = [Path.cwd() / "workspace"]
    if os.environ.get(ENV_DB):
        candidates.append(Path(os.environ[ENV_DB]).expanduser().parent)
    candidates += [Path(p).expanduser() for p in os.environ.get(ENV_ROOTS, "").split(os.pathsep) if p.strip()]
    out: list[Path] = []
    for c in candidates:
        resolved = c.resolve()
        if resolved not in out:
            out.append(resolved)
    return out


def check_workspace_path(text: str, roots: list[Path] | None = None) -> Path:
    """The workspace file ``text`` names, resolved, if it lies under an allowed root and ends in
    ``.duckdb``; else :class:`WorkspaceError` saying which roots are allowed. Relative paths are
    taken from the working directory; symbolic links are followed before the check."""
    roots = allowed_roots() if roots is None else roots
    text = text.strip()
    if not text or len(text) > MAX_PATH_LENGTH or "\x00" in text:
        raise WorkspaceError("give the path of a workspace file (.duckdb)")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    resolved = path.resolve()
    if resolved.suffix != SUFFIX:
        raise WorkspaceError(f"a workspace file ends in {SUFFIX}")
    if not any(resolved.is_relative_to(root) for root in roots):
        shown = ", ".join(str(r) for r in roots)
        raise WorkspaceError(f"workspace files may only be opened under {shown} "
                             f"(set ${ENV_ROOTS} on the server to allow more folders)")
    if resolved.exists() and not resolved.is_file():
        raise WorkspaceError("that path is not a file")
    return resolved
