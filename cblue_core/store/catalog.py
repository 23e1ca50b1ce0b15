"""Which objects of a workspace file the studio did not create.

A workspace is a file a visitor can bring. One whose ``datasets`` table had been replaced by a
view over ``read_text('/proc/self/environ')`` opened, and its datasets list printed the server's
environment. A file is therefore compared, before anything reads its tables, with what the
schema's own DDL creates in a scratch database: every view, macro, sequence, index, type, schema
and attached database must be one of those, and every table one of the schema's tables with its
columns (name, type, default or generated expression, nullability) in order. Older schemas lack
the columns that later migrations appended, so a table's columns may stop early; tables the file
lacks are created when it is opened. The set is derived, not listed, so a table added to the DDL
is allowed with no second list to keep in step.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import duckdb

from .annotations import ANNOTATION_DDL
from .database import Database
from .schema import DDL

# (name, type, default or generated expression, nullable)
Column = tuple[str, str, str | None, bool]

# kind -> the query giving (qualified name, definition) of the objects of that kind that are not
# DuckDB's own. The definition is compared too, so that a same-named index on other columns or a
# macro with another body is not taken for ours.
_OBJECT_QUERIES = {
    "view": "SELECT schema_name || '.' || view_name, sql FROM duckdb_views() WHERE NOT internal",
    "macro": "SELECT DISTINCT schema_name || '.' || function_name, coalesce(macro_definition, '')"
             " FROM duckdb_functions() WHERE NOT internal",
    # Not the sequence's SQL text: DuckDB writes the value it has reached into it.
    "sequence": "SELECT schema_name || '.' || sequence_name, increment_by || ' ' || cycle FROM duckdb_sequences()",
    "index": "SELECT schema_name || '.' || index_name, sql FROM duckdb_indexes()",
    "type": "SELECT schema_name || '.' || type_name, logical_type FROM duckdb_types() WHERE NOT internal",
    "schema": "SELECT schema_name, '' FROM duckdb_schemas() WHERE NOT internal",
    "attached database": "SELECT database_name, type FROM duckdb_databases()"
                         " WHERE NOT internal AND database_name <> current_database()",
    "secret": "SELECT name, type FROM duckdb_secrets()",
}


@dataclass(frozen=True)
class Catalog:
    """What a database holds: its tables' columns and constraints, and its other objects."""

    tables: dict[str, tuple[Column, ...]]
    constraints: dict[str, frozenset[str]]
    objects: frozenset[tuple[str, str, str]]   # (kind, qualified name, definition)


def read_catalog(db: Database) -> Catalog:
    """The catalog of the database ``db`` is connected to (its temporary objects too)."""
    tables: dict[str, list[Column]] = {}
    for schema, table, column, dtype, default, nullable in db.rows(
            "SELECT schema_name, table_name, column_name, data_type, column_default, is_nullable"
            " FROM duckdb_columns() WHERE table_oid IN (SELECT table_oid FROM duckdb_tables() WHERE NOT internal)"
            " ORDER BY schema_name, table_name, column_index"):
        tables.setdefault(f"{schema}.{table}", []).append(
            (str(column), str(dtype), None if default is None else str(default), bool(nullable)))
    for schema, table in db.rows("SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT internal"):
        tables.setdefault(f"{schema}.{table}", [])   # a table without columns is still a table
    constraints: dict[str, set[str]] = {}
    for schema, table, kind, text, expression in db.rows(
            "SELECT schema_name, table_name, constraint_type, constraint_text, expression"
            " FROM duckdb_constraints()"):
        constraints.setdefault(f"{schema}.{table}", set()).add(f"{kind} {text} {expression or ''}".strip())
    objects = frozenset((kind, str(name), str(definition or ""))
                        for kind, sql in _OBJECT_QUERIES.items() for name, definition in db.rows(sql))
    return Catalog({t: tuple(c) for t, c in tables.items()},
                   {t: frozenset(c) for t, c in constraints.items()}, objects)


def create_schema(db: Database) -> None:
    """Every table, sequence and index of the current schema (a new workspace, or the scratch
    database the expected catalogue is read from)."""
    db.execute(DDL)
    db.execute(ANNOTATION_DDL)


@lru_cache(maxsize=1)
def expected_catalog() -> Catalog:
    """What the schema's DDL creates in an empty database."""
    scratch = Database(duckdb.connect(":memory:"), None)
    try:
        create_schema(scratch)
        return read_catalog(scratch)
    finally:
        scratch.close()


def _short(qualified: str) -> str:
    return qualified.removeprefix("main.")


def foreign_objects(found: Catalog, expected: Catalog) -> list[str]:
    """What ``found`` holds that ``expected`` does not, each as ``"<kind> <name>"`` (sorted)."""
    out = [f"{kind} {_short(name)}" for kind, name, definition in found.objects
           if (kind, name, definition) not in expected.objects]
    for table, columns in found.tables.items():
        ours = expected.tables.get(table)
        if ours is None:
            out.append(f"table {_short(table)}")
        elif not columns or columns != ours[:len(columns)]:
            out.append(f"table {_short(table)} (other columns)")
        elif not found.constraints.get(table, frozenset()) <= expected.constraints.get(table, frozenset()):
            out.append(f"table {_short(table)} (other constraints)")
    return sorted(out)
