"""What pages derive from a whole run, kept in the workspace (table ``run_derived``): payloads
as text, keyed by run, kind and the version of the code and inputs that produced them. What a
payload means and how it is versioned is :mod:`cblue_core.runs.derived`'s business; this store
only keeps the rows."""
from __future__ import annotations

import duckdb

from .access import writes_for_system
from .database import Database


class DerivedStore:
    READS = ("get", "kinds")

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, run_id: int, kind: str, version: str) -> str | None:
        """The payload of ``kind`` for the run at ``version``; None when absent or stale."""
        row = self.db.one("SELECT payload FROM run_derived WHERE run_id=? AND kind=? AND version=?",
                          [run_id, kind, version])
        return None if row is None else str(row[0])

    @writes_for_system("derived.put")
    def put(self, run_id: int, kind: str, version: str, payload: str) -> bool:
        """Keep a payload in place of any older one of the kind. False, having changed nothing,
        when the run no longer exists or another session wrote the kind at the same moment
        (DuckDB refuses the second of two concurrent writes to the same rows)."""
        try:
            with self.db.transaction():
                self.db.execute("DELETE FROM run_derived WHERE run_id=? AND kind=?", [run_id, kind])
                written = self.db.rows(
                    "INSERT INTO run_derived (run_id, kind, version, payload)"
                    " SELECT run_id, ?, ?, ? FROM runs WHERE run_id=? RETURNING run_id",
                    [kind, version, payload, run_id])
        except duckdb.TransactionException:
            return False
        return bool(written)

    def kinds(self, run_id: int) -> dict[str, str]:
        """{kind: version} of the payloads kept for the run."""
        return {str(k): str(v) for k, v in self.db.rows(
            "SELECT kind, version FROM run_derived WHERE run_id=? ORDER BY kind", [run_id])}
