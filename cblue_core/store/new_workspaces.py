"""How many workspace files visitors may create from the sidebar, and how deep.

A workspace file named in the sidebar that does not exist yet is created (with its folders)
and filled with the sample data: about 3.7 MB and half a second each. Without a bound one
visitor created 20 in 9.8 s (74.6 MB), one of them 300 folders deep. So a new file must lie at
most MAX_FOLDER_DEPTH folders below its allowed root, each session may create MAX_PER_SESSION
files and the whole server MAX_PER_SERVER (counted in this process; opening an existing file
counts nothing). Sessions are easy to make anew, so the server's bound is the one that holds.
"""
from __future__ import annotations

import threading
from pathlib import Path

from .errors import WorkspaceError

MAX_FOLDER_DEPTH = 3
MAX_PER_SESSION = 3
MAX_PER_SERVER = 20


def folder_depth(path: Path, roots: list[Path]) -> int:
    """How many folders ``path`` (resolved) lies below the nearest allowed root containing it."""
    depths = [len(path.relative_to(r).parts) - 1 for r in roots if path.is_relative_to(r)]
    return min(depths) if depths else len(path.parts)


class NewWorkspaceQuota:
    """Workspace files created so far, per session and in all; thread-safe."""

    def __init__(self, *, per_session: int = MAX_PER_SESSION, per_server: int = MAX_PER_SERVER,
                 max_depth: int = MAX_FOLDER_DEPTH) -> None:
        self.per_session, self.per_server, self.max_depth = per_session, per_server, max_depth
        self._lock = threading.Lock()
        self._by_session: dict[str, set[Path]] = {}
        self._all: set[Path] = set()

    def admit(self, session: str, path: Path, roots: list[Path]) -> None:
        """Count ``path``, a workspace file that ``session`` is about to create, or raise
        WorkspaceError saying which bound it would pass (nothing is counted then). A file
        already counted is admitted again without counting twice."""
        depth = folder_depth(path, roots)
        if depth > self.max_depth:
            raise WorkspaceError(f"a new workspace file may lie at most {self.max_depth} folders below its "
                                 f"allowed root, not {depth}")
        with self._lock:
            if path in self._all:
                return
            mine = self._by_session.get(session, set())
            if len(mine) >= self.per_session:
                raise WorkspaceError(f"this session has created {len(mine)} workspace files, the most one "
                                     "session may: open an existing one")
            if len(self._all) >= self.per_server:
                raise WorkspaceError(f"this server has created {len(self._all)} workspace files from the "
                                     "sidebar, the most it allows until it restarts: open an existing one")
            self._by_session.setdefault(session, set()).add(path)
            self._all.add(path)

    def created(self, session: str | None = None) -> int:
        """How many files were admitted (by ``session``, or in all)."""
        with self._lock:
            return len(self._all) if session is None else len(self._by_session.get(session, ()))
