"""Saved slices: a name and a SQL predicate over the example columns, reusable across runs
."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb

from ..io.errors import short_error
from .database import Database
from .datasets import check_predicate


@dataclass(frozen=True)
class Slice:
    name: str
    task: str | None
    predicate: str


class SliceError(ValueError):
    """A slice predicate that cannot be used; the message says why."""


class SliceStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, name: str, predicate: str, task: str | None = None) -> Slice:
        name = name.strip()
        if not name:
            raise SliceError("a slice needs a name")
        problem = check_predicate(self.db.con, predicate)
        if problem:
            raise SliceError(problem)
        self.db.execute("INSERT OR REPLACE INTO slices (name, task, predicate) VALUES (?,?,?)",
                         [name, task, predicate])
        return Slice(name, task, predicate)

    def all(self, task: str | None = None) -> list[Slice]:
        rows = self.db.execute("SELECT name, task, predicate FROM slices WHERE task IS NULL OR task = ?"
                                " OR ? IS NULL ORDER BY name", [task, task]).fetchall()
        return [Slice(*r) for r in rows]

    def delete(self, name: str) -> None:
        self.db.execute("DELETE FROM slices WHERE name = ?", [name])

    def indices(self, dataset_id: int, predicate: str) -> list[int]:
        """Record numbers of a dataset's examples that satisfy the predicate."""
        problem = check_predicate(self.db.con, predicate)
        if problem:
            raise SliceError(problem)
        try:
            rows = self.db.execute(f"SELECT idx FROM examples WHERE dataset_id = ? AND ({predicate})"
                                    " ORDER BY idx", [dataset_id]).fetchall()
        except duckdb.Error as exc:
            raise SliceError(short_error(exc)) from None
        return [r[0] for r in rows]
