"""Saved slices: a name and a SQL predicate over the example columns, reusable across runs.

A predicate is checked when it is saved and again whenever it is used (a slice saved by an
older version, or written into the file by hand, gets no trust): both go through the same
allow-list, sandbox and time bound as the Datasets filter (:meth:`DatasetStore.filtered`).
"""
from __future__ import annotations

from dataclasses import dataclass

from .access import Access, writes
from .database import Database
from .datasets import DatasetStore
from .user_sql import PredicateRefused

MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class Slice:
    name: str
    task: str | None
    predicate: str
    created_by: str | None = None      # unknown for slices saved before schema 9


class SliceError(ValueError):
    """A slice that cannot be saved or used; the message says why."""


class SliceStore:
    READS = ("all", "indices")

    def __init__(self, db: Database, datasets: DatasetStore, access: Access | None = None) -> None:
        self.db = db
        self.datasets = datasets
        self.access = access or Access()

    @writes("slice.save", target=lambda a: f"slice {str(a.get('name') or '').strip()}",
            detail=lambda a: str(a.get("predicate") or ""))
    def save(self, name: str, predicate: str, task: str | None = None) -> Slice:
        name = name.strip()
        if not name:
            raise SliceError("a slice needs a name")
        if len(name) > MAX_NAME_LENGTH:
            raise SliceError(f"a slice name has at most {MAX_NAME_LENGTH} characters")
        try:
            self.datasets.check_predicate(predicate)
        except PredicateRefused as exc:
            raise SliceError(str(exc)) from None
        by = self.access.actor.name if self.access.actor else None
        with self.db.transaction():
            self.db.execute("INSERT OR REPLACE INTO slices (name, task, predicate, created_by) VALUES (?,?,?,?)",
                            [name, task, predicate, by])
        return Slice(name, task, predicate, by)

    def all(self, task: str | None = None) -> list[Slice]:
        rows = self.db.rows("SELECT name, task, predicate, created_by FROM slices WHERE task IS NULL OR task = ?"
                            " OR ? IS NULL ORDER BY name", [task, task])
        return [Slice(*r) for r in rows]

    @writes("slice.delete", target=lambda a: f"slice {a.get('name')}")
    def delete(self, name: str) -> None:
        with self.db.transaction():
            self.db.execute("DELETE FROM slices WHERE name = ?", [name])

    def indices(self, dataset_id: int, predicate: str) -> list[int]:
        """Record numbers of a dataset's examples that satisfy the predicate."""
        try:
            return self.datasets.matching(dataset_id, predicate)
        except PredicateRefused as exc:
            raise SliceError(str(exc)) from None
