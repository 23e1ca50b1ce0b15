"""Where a checked filter runs: a locked in-memory DuckDB holding one split's example columns.

:class:`PredicateSandbox` runs a predicate rebuilt by :func:`cblue_core.store.user_sql.parse_predicate`
(and a regular expression, bound as a parameter) on its own locked in-memory database that holds
nothing but the current split's examples (an Arrow table), with a memory cap, at most two
threads, no spilling to disk, and a wall-clock timeout enforced with ``interrupt()``. Even if the
allow-list had a hole, that database cannot read a file, reach the network, load an extension or
see the workspace.

``interrupt()`` is only looked at between chunks of rows, so a filter that is expensive per row
(twenty ORed regular expressions) ran 121 s past a 3 s limit: the app therefore runs the sandbox in
a worker process that is killed at the limit (:mod:`cblue_core.store.filter_worker`).
"""
from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Self

import duckdb
import pyarrow as pa

from .lockdown import locked_connection
from .user_sql import MAX_STRING_LENGTH, PredicateRefused, SafePredicate, one_line_error, parse_predicate

__all__ = [
    "DEFAULT_TIMEOUT",
    "TIMEOUT_ENV",
    "ExampleFilter",
    "PredicateSandbox",
    "PredicateTimeout",
    "filter_indices",
    "time_limit",
    "timeout_from_env",
]

TIMEOUT_ENV: Final = "CBLUE_STUDIO_SQL_TIMEOUT"
DEFAULT_TIMEOUT: Final = 3.0
# Longer limits are cut to this: waits on a worker's pipe overflow past about 10^6 s.
MAX_TIMEOUT: Final = 3600.0
# The same bound as a string constant in a predicate: RE2's work per row grows with the pattern.
MAX_REGEX_LENGTH: Final = MAX_STRING_LENGTH


class PredicateTimeout(PredicateRefused):
    """The filter ran longer than its time limit and was stopped."""


def timeout_from_env() -> float:
    """Seconds a filter may run: ``$CBLUE_STUDIO_SQL_TIMEOUT``, else (or if unusable) 3.0."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if math.isfinite(value) and value > 0 else DEFAULT_TIMEOUT


def time_limit(timeout: float | None) -> float:
    """Seconds a filter may run: ``timeout``, else :func:`timeout_from_env`; at most
    :data:`MAX_TIMEOUT`. :class:`PredicateRefused` for a value that is not a positive number."""
    if timeout is None:
        return min(timeout_from_env(), MAX_TIMEOUT)
    value = float(timeout)
    if not math.isfinite(value) or value <= 0:
        raise PredicateRefused(f"the time limit must be a number of seconds above 0, not {timeout!r}")
    return min(value, MAX_TIMEOUT)


@dataclass(frozen=True)
class ExampleFilter:
    """The user-typed part of a search: a checked predicate, a regular expression matched against
    ``text`` and ``text2``, or both (rows must match both)."""

    predicate: SafePredicate | None = None
    regex: str = ""

    def __post_init__(self) -> None:
        if len(self.regex) > MAX_REGEX_LENGTH:
            raise PredicateRefused(f"the regular expression is longer than {MAX_REGEX_LENGTH:,} characters")
        if "\x00" in self.regex:
            raise PredicateRefused("the regular expression contains a NUL character")

    def where(self) -> tuple[str, list[Any]]:
        """The WHERE clause and its parameters; the pattern travels as a parameter, never as SQL."""
        parts: list[str] = []
        params: list[Any] = []
        if self.regex:
            parts.append("(regexp_matches(text, ?) OR regexp_matches(coalesce(text2, ''), ?))")
            params += [self.regex, self.regex]
        if self.predicate is not None:
            parts.append(f"({self.predicate.sql})")
        return " AND ".join(parts) or "TRUE", params


class PredicateSandbox:
    """A locked, in-memory DuckDB holding only the current split's examples, for running filters.

    ``table`` is registered as the view ``examples``; it must have an ``idx`` column. Each call
    works on its own cursor (a connection to the same database), so several Streamlit sessions
    can share one sandbox and a timeout interrupts only the query it belongs to.
    """

    def __init__(self, table: pa.Table, *, memory_limit: str = "512MB", threads: int = 2) -> None:
        if "idx" not in table.column_names:
            raise ValueError("the examples table needs an 'idx' column")
        self.table = table
        self.connection = locked_connection({
            "memory_limit": memory_limit,
            "threads": max(1, min(int(threads), 2)),
            # An in-memory database would otherwise spill to a directory on the server.
            "temp_directory": "",
            "max_temp_directory_size": "0B",
        })
        self.connection.register("examples", table)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def matching_indices(self, pred: SafePredicate | ExampleFilter, *, timeout: float | None = None) -> list[int]:
        """The sorted ``idx`` of the rows that ``pred`` keeps."""
        where, params = _as_filter(pred).where()
        rows = self._run(f"SELECT idx FROM examples WHERE {where} ORDER BY idx", params, timeout)
        return [int(r[0]) for r in rows]

    def count(self, pred: SafePredicate | ExampleFilter, *, timeout: float | None = None) -> int:
        """How many rows ``pred`` keeps."""
        where, params = _as_filter(pred).where()
        rows = self._run(f"SELECT count(*) FROM examples WHERE {where}", params, timeout)
        return int(rows[0][0]) if rows else 0

    def _run(self, sql: str, params: list[Any], timeout: float | None) -> list[tuple[Any, ...]]:
        limit = timeout_from_env() if timeout is None else float(timeout)
        cursor = self.connection.cursor()
        try:
            # Registrations are per connection, so each cursor registers the (zero-copy) table.
            cursor.register("examples", self.table)
            done = threading.Event()
            fired = threading.Event()
            guard = threading.Lock()

            def watchdog() -> None:
                if done.wait(limit):
                    return
                fired.set()
                # Repeat: an interrupt that lands just before the query starts is forgotten.
                while True:
                    with guard:
                        if done.is_set():
                            return
                        cursor.interrupt()
                    if done.wait(0.05):
                        return

            thread = threading.Thread(target=watchdog, name="cblue-sql-timeout", daemon=True)
            thread.start()
            try:
                return cursor.execute(sql, params).fetchall()
            except duckdb.Error as exc:
                if fired.is_set() or isinstance(exc, duckdb.InterruptException):
                    raise PredicateTimeout(
                        f"the filter ran longer than {limit:g} s and was stopped") from None
                raise PredicateRefused(f"SQL error: {one_line_error(exc)}") from None
            finally:
                with guard:
                    done.set()
                thread.join()
        finally:
            cursor.close()


def filter_indices(table: pa.Table, text: str, columns: Mapping[str, str],
                   timeout: float | None = None) -> list[int]:
    """Parse ``text``, then return the sorted ``idx`` of the rows of ``table`` it keeps."""
    predicate = parse_predicate(text, columns)
    with PredicateSandbox(table) as sandbox:
        return sandbox.matching_indices(predicate, timeout=timeout)


def _as_filter(pred: SafePredicate | ExampleFilter) -> ExampleFilter:
    return pred if isinstance(pred, ExampleFilter) else ExampleFilter(predicate=pred)
