"""The DuckDB workspace: one database handle shared by the stores that own its tables.

One database file per workspace. DuckDB lets a single process open a file read-write and then
no other process at all, so the app holds one connection per process and hands each session
its own cursor (:meth:`Workspace.cursor`); the CLI opens the file only when the app is not
running and says so plainly when it is locked (:class:`WorkspaceLocked`).

Every handle acts for one user (:mod:`cblue_core.store.access`): :func:`connect` binds the
process's OS account as the file's owner (source "cli", an admin: it holds the file and could
write it with any DuckDB client), unless told otherwise; the app opens its connection for
nobody and binds each session's cursor to its signed-in user (:meth:`Workspace.cursor`,
:meth:`Workspace.acting_as`).
"""
from __future__ import annotations

import enum
import os
from collections.abc import Hashable
from pathlib import Path

import duckdb

from ..auth.roles import Role
from ..auth.user import User, local_user
from ..io.errors import short_error
from .access import Access
from .annotations import AnnotationStore
from .audit import AuditStore
from .blind_pass import BlindPassStore
from .database import Database
from .datasets import DatasetStore
from .derived import DerivedStore
from .endpoint_calls import EndpointCallStore
from .errors import WorkspaceError, WorkspaceLocked
from .lockdown import locked_config
from .own_copies import OwnCopyStore
from .resources import ResourceStore
from .responses import ResponseStore
from .runs import RunStore
from .slices import SliceStore
from .users import UserStore
from .versioning import prepare_workspace

ENV_DB = "CBLUE_STUDIO_DB"

__all__ = ["ENV_DB", "Workspace", "WorkspaceError", "WorkspaceLocked", "connect", "default_db_path"]


def default_db_path() -> Path:
    """``$CBLUE_STUDIO_DB``, else ``workspace/cblue_studio.duckdb`` under the working directory."""
    env = os.environ.get(ENV_DB)
    return Path(env) if env else Path.cwd() / "workspace" / "cblue_studio.duckdb"


class Owner(enum.Enum):
    """The default actor of :func:`connect`: the OS account holding the file (source "cli")."""
    OF_FILE = "owner"


class Keep(enum.Enum):
    """The default actor of :meth:`Workspace.cursor`: the same as the handle's."""
    SAME = "same"


def connect(path: str | Path | None = None, read_only: bool = False, *,
            actor: User | None | Owner = Owner.OF_FILE) -> Workspace:
    """Open (creating if needed) the workspace database at ``path``: by default the one
    :func:`default_db_path` names; ``":memory:"`` for a throwaway in-memory workspace.

    The connection can reach no file but this one, loads no extension and keeps its settings
    (:mod:`cblue_core.store.lockdown`). A file that is not a CBLUE Studio workspace, or holds
    objects the studio did not create, is refused untouched; an older workspace is
    migrated (see :mod:`cblue_core.store.versioning`). ``read_only`` opens an existing,
    current workspace without writing anything, and refuses a missing file. ``actor``: who
    the returned handle acts for (by default the OS account, as the file's owner; None: nobody,
    so that every write is refused until :meth:`Workspace.acting_as` binds someone)."""
    if path is None:
        path = default_db_path()
    target = Path(path) if path != ":memory:" else None
    if target is not None and read_only and not target.is_file():
        raise WorkspaceError(f"no workspace at {target} (read-only mode opens an existing one only)")
    if target is not None and not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # Locked from the first statement: a view or default in a visitor's file must not reach
        # a server file, the network or an extension, not even while the file is being checked.
        con = duckdb.connect(str(target) if target else ":memory:", read_only=read_only,
                             config=locked_config())
    except duckdb.IOException as exc:
        msg = str(exc)
        if "lock" in msg.lower():
            raise WorkspaceLocked(
                f"The workspace {target} is open in another process (the app or another command). "
                "DuckDB allows only one process to open it: stop that process, or use another "
                f"workspace with --db or ${ENV_DB}.") from None
        raise WorkspaceError(f"cannot open the workspace {target}: {msg}") from None
    except duckdb.Error as exc:   # e.g. a type from an extension that may not be loaded
        raise WorkspaceError(f"cannot open the workspace {target}: {short_error(exc)}") from None
    db = Database(con, target)
    try:
        prepare_workspace(db, where=str(target or "the in-memory workspace"), read_only=read_only)
    except BaseException:
        db.close()
        raise
    return Workspace(db, read_only=read_only, actor=local_user("cli") if isinstance(actor, Owner) else actor)


class Workspace:
    """A workspace database and its stores, all on one connection (or one session's cursor)."""

    def __init__(self, db: Database, *, read_only: bool = False, actor: User | None = None) -> None:
        self.db = db
        self.read_only = read_only
        self.access = access = Access(actor, read_only)
        self.datasets = DatasetStore(db, access)
        self.resources = ResourceStore(db, access)
        self.runs = RunStore(db, access)
        self.derived = DerivedStore(db)
        self.slices = SliceStore(db, self.datasets, access)
        self.blind = BlindPassStore(db, self.datasets, access)
        self.annotations = AnnotationStore(db, self.datasets, self.resources, access, self.blind)
        self.own = OwnCopyStore(db, self.annotations, self.blind, access)
        self.responses = ResponseStore(db, access)
        self.users = UserStore(db, access)
        self.audit = AuditStore(db)
        self.endpoint_calls = EndpointCallStore(db, access)

    @property
    def actor(self) -> User | None:
        return self.access.actor

    def role(self) -> Role | None:
        """The acting user's role now (None when nobody is bound)."""
        return self.access.role(self.db)

    def acting_as(self, actor: User | None) -> Workspace:
        """The same handle (same cursor) acting for ``actor``."""
        return Workspace(self.db, read_only=self.read_only, actor=actor)

    @property
    def path(self) -> Path | None:
        return self.db.path

    def cursor(self, session: Hashable | None = None, *, actor: User | None | Keep = Keep.SAME) -> Workspace:
        """The same workspace on its own cursor (one per session or thread); ``session`` names
        the app session it serves, so that its filters run one at a time; ``actor`` whom it acts
        for (by default the same as this handle)."""
        return Workspace(self.db.cursor(session), read_only=self.read_only,
                         actor=self.actor if isinstance(actor, Keep) else actor)

    def close(self) -> None:
        self.db.close()
