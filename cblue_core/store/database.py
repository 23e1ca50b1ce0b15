"""The one typed handle on a workspace's DuckDB connection that every store shares."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

# Each Arrow table handed to DuckDB gets a name no other session's insert is using.
_view_names = itertools.count()


class Database:
    """A DuckDB connection (or one session's cursor on it) and the file it opened.

    ``session`` names the app session the cursor serves (None outside the app): user filters
    run one at a time per session (:mod:`cblue_core.store.session_gate`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path | None,
                 session: Hashable | None = None) -> None:
        self.con = con
        self.path = path
        self.session = session
        self._before_commit: list[Callable[[Database], None]] = []

    def cursor(self, session: Hashable | None = None) -> Database:
        """The same database on its own cursor: one per session or thread (``session`` names
        it; by default the one of this handle)."""
        return Database(self.con.cursor(), self.path, self.session if session is None else session)

    def close(self) -> None:
        self.con.close()

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> duckdb.DuckDBPyConnection:
        return self.con.execute(sql, params) if params is not None else self.con.execute(sql)

    def one(self, sql: str, params: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        """The first row of a query, or None. The result is read to its end: DuckDB refuses
        other work on a connection whose last result is unfinished."""
        rows = self.execute(sql, params).fetchmany(2)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """The first column of the first row; the query must return a row."""
        row = self.one(sql, params)
        if row is None:
            raise LookupError(f"no row for: {sql}")
        return row[0]

    def rows(self, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return self.execute(sql, params).fetchall()

    def arrow(self, sql: str, params: Sequence[Any] = ()) -> pa.Table:
        return self.con.sql(sql, params=list(params)).to_arrow_table()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Commit when the block ends normally, roll back when it raises."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
            hooks, self._before_commit = self._before_commit, []
            for hook in hooks:
                hook(self)
        except BaseException:
            self.rollback_quietly()
            raise
        self.con.execute("COMMIT")

    def before_commit(self, hook: Callable[[Database], None]) -> Callable[[Database], None]:
        """Run ``hook`` inside the next transaction of this handle, just before it commits (the
        audit event of a write goes with the write); returns it, for :meth:`drop_before_commit`."""
        self._before_commit.append(hook)
        return hook

    def drop_before_commit(self, hook: Callable[[Database], None]) -> bool:
        """Forget a hook no transaction ran; True when it was still waiting."""
        if any(h is hook for h in self._before_commit):
            self._before_commit = [h for h in self._before_commit if h is not hook]
            return True
        return False

    def rollback_quietly(self) -> None:
        try:
            self.con.execute("ROLLBACK")
        except duckdb.Error:
            pass  # DuckDB already rolled a failed commit back

    def insert_arrow(self, table: str, data: pa.Table, *, prefix_sql: str = "",
                     params: Sequence[Any] = ()) -> None:
        """``INSERT INTO table BY NAME SELECT {prefix_sql} * FROM data``; ``prefix_sql`` adds
        constant columns (e.g. ``"? AS run_id,"`` with ``params``). The table is registered under
        a fresh name rather than found by DuckDB's scan of the caller's local variables, which
        linters and type checkers cannot see."""
        if data.num_rows == 0:
            return
        view = f"_arrow_{next(_view_names)}"
        self.con.register(view, data)
        try:
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT {prefix_sql} * FROM {view}", list(params))
        finally:
            self.con.unregister(view)
