"""The DuckDB settings that keep a connection inside its own database.

Every connection that can see user text or a visitor's file gets them before it runs anything:
the SQL parser and the filter sandbox (:mod:`cblue_core.store.user_sql`,
:mod:`cblue_core.store.sandbox`) and the workspace itself (:mod:`cblue_core.store.workspace`).
A workspace file is data a visitor can bring: a view in it may call ``read_text('/etc/passwd')``
or name a type whose extension DuckDB would fetch from the network.
"""
from __future__ import annotations

from typing import Final

import duckdb

Config = dict[str, str | bool | int | float | list[str]]

LOCKDOWN: Final[Config] = {
    # No file but the database itself: no read_text/read_csv/COPY/ATTACH/INSTALL, no network.
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    # Secrets stored under the server user's home would otherwise be loaded into every session.
    "allow_persistent_secrets": False,
    # A default connection lets a query name any pandas/Arrow variable of the calling Python
    # frame (DuckDB 2 already stops that when external access is off; 1.x may not).
    "python_enable_replacements": False,
}


def locked_config(extra: Config | None = None) -> Config:
    """:data:`LOCKDOWN` plus ``extra`` and a locked configuration, for ``duckdb.connect(config=...)``:
    nothing that runs on the connection can switch a setting back."""
    return {**LOCKDOWN, **(extra or {}), "lock_configuration": True}


def locked_connection(extra: Config | None = None, *, max_expression_depth: int | None = None,
                      ) -> duckdb.DuckDBPyConnection:
    """A private in-memory database under :data:`LOCKDOWN` (and ``extra``), configuration locked."""
    con = duckdb.connect(":memory:", config={**LOCKDOWN, **(extra or {})})
    if max_expression_depth is not None:
        # A session setting (DuckDB 1.x refuses it in the connect-time config).
        con.execute(f"SET max_expression_depth = {int(max_expression_depth)}")
    con.execute("SET lock_configuration = true")
    return con
