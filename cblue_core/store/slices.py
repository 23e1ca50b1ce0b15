"""Saved slices: a name and a SQL predicate over the example columns, reusable across runs.

A predicate is checked when it is saved and again whenever it is used (a slice saved by an
older version, or written into the file by hand, gets no trust): both go through the same
allow-list, sandbox and time bound as the Datasets filter (:meth:`DatasetStore.filtered`).
"""
from __future__ import annotations

from dataclasses import dataclass

from .database import Database
from .datasets import DatasetStore
from .user_sql import PredicateRefused

MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class Slice:
    name: str
    task: str | None
    predicate: str


class SliceError(ValueError):
    """A slice that cannot be saved or used; the message says why."""


class SliceStore:
    def __init__(self, db: Database, datasets: DatasetStore) -> None:
        self.db = db
        self.datasets = datasets

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
        self.db.execute("INSERT OR REPLACE INTO slices (name, task, predicate) VALUES (?,?,?)",
                        [name, task, predicate])
        return Slice(name, task, predicate)

    def all(self, task: str | None = None) -> list[Slice]:
        rows = self.db.rows("SELECT name, task, predicate FROM slices WHERE task IS NULL OR task = ?"
                            " OR ? IS NULL ORDER BY name", [task, task])
        return [Slice(*r) for r in rows]

    def delete(self, name: str) -> None:
        self.db.execute("DELETE FROM slices WHERE name = ?", [name])

    def indices(self, dataset_id: int, predicate: str) -> list[int]:
        """Record numbers of a dataset's examples that satisfy the predicate."""
        try:
            return self.datasets.matching(dataset_id, predicate)
        except PredicateRefused as exc:
            raise SliceError(str(exc)) from None
