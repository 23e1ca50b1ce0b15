"""Errors the store raises for the user to read (as a message, never a traceback)."""
from __future__ import annotations


class WorkspaceLocked(RuntimeError):
    """Another process holds the database file."""


class WorkspaceError(RuntimeError):
    """A database problem worth showing to the user as a message."""
