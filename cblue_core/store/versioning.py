"""Which database files are CBLUE Studio workspaces, and bringing older ones up to date.

A workspace carries a marker in its ``meta`` table: ``app = 'cblue-studio'`` and the
``schema_version`` its tables follow. Opening a file:

* an empty file (no tables) becomes a new workspace;
* a file with the marker at the current version opens as it is;
* a file with the marker at an older version is migrated in one transaction;
* a file without the marker is adopted (marker written) only when its tables are exactly the
  current schema's (a workspace written before the marker existed); any other DuckDB file is
  refused untouched, so the app never adds its tables to another program's database.

Before any of that reads a table, a file holding an object the schema does not create (a view,
macro, extra table, ...: :mod:`cblue_core.store.catalog`) is refused untouched, naming them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from ..io.errors import short_error
from .annotations import ANNOTATION_DDL
from .catalog import create_schema, expected_catalog, foreign_objects, read_catalog
from .database import Database
from .errors import WorkspaceError
from .schema import ACCESS_DDL, BLIND_DDL, DDL, DEFAULT_DATASETS_DDL, RUN_DERIVED_DDL, SCHEMA_VERSION
from .training_sets import TRAINING_SET_TABLES, backfill_from_metrics

APP_MARKER = "cblue-studio"


@dataclass(frozen=True)
class SchemaState:
    tables: frozenset[str]
    app: str | None
    version: int | None


def schema_state(db: Database) -> SchemaState:
    tables = frozenset(str(r[0]) for r in db.rows(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"))
    app = version = None
    if "meta" in tables:
        marks = {str(k): str(v) for k, v in db.rows("SELECT key, value FROM meta")}
        app = marks.get("app")
        raw = marks.get("schema_version")
        version = int(raw) if raw is not None and raw.isdigit() else None
    return SchemaState(tables, app, version)


def expected_columns() -> dict[str, list[tuple[str, str]]]:
    """The current schema's tables and their (column, type), from a scratch in-memory database."""
    return {table.removeprefix("main."): [(column[0], column[1]) for column in columns]
            for table, columns in expected_catalog().tables.items()}


def table_columns(db: Database) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in db.rows(
            "SELECT table_name, column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"):
        out.setdefault(str(table), []).append((str(column), str(dtype)))
    return out


def create_workspace(db: Database) -> None:
    """The current schema, marked as a workspace of its version."""
    create_schema(db)
    _write_marker(db, SCHEMA_VERSION)


def _write_marker(db: Database, version: int) -> None:
    db.execute("INSERT OR REPLACE INTO meta VALUES ('app', ?)", [APP_MARKER])
    db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(version)])


def _v1_to_v2(db: Database) -> None:
    """Version 2 names the application in the marker; the tables are unchanged."""
    db.execute("INSERT OR REPLACE INTO meta VALUES ('app', ?)", [APP_MARKER])


def _v2_to_v3(db: Database) -> None:
    """Version 3 records each dataset's line ending (NULL for datasets ingested before it: their
    exports use LF, as before)."""
    db.execute("ALTER TABLE datasets ADD COLUMN IF NOT EXISTS line_ending VARCHAR")


def _v3_to_v4(db: Database) -> None:
    """Version 4 stores which dataset of a task split opens by default: the first ingested one
    (before, the most recent one opened, so one upload changed what every visitor saw)."""
    db.execute(DEFAULT_DATASETS_DDL)
    db.execute("INSERT OR IGNORE INTO default_datasets (task, split, dataset_id) "
               "SELECT task, split, min(dataset_id) FROM datasets GROUP BY task, split")


def _v4_to_v5(db: Database) -> None:
    """Version 5 stores which examples of a run its model was trained on. Runs whose metrics
    carry ``training_overlap`` (and imported runs: no model) are settled here; older model runs
    are settled at first need, from their model's folder (cblue_core.runs.seen_split)."""
    db.execute(DDL)      # the new tables
    backfill_from_metrics(db)


def _v5_to_v6(db: Database) -> None:
    """Version 6 keeps what pages derive from a run (``run_derived``); older runs have no rows
    and derive theirs at first need."""
    db.execute(RUN_DERIVED_DDL)


def _v6_to_v7(db: Database) -> None:
    """Version 7 adds the response cache of LLM endpoints (empty: nothing was cached before)."""
    db.execute(DDL)   # CREATE ... IF NOT EXISTS: only response_cache is new


def _v7_to_v8(db: Database) -> None:
    """Version 8 records with each annotation event the suggestions it accepted (NULL for the
    events saved before: they were made by hand)."""
    db.execute("ALTER TABLE annotation_events ADD COLUMN IF NOT EXISTS provenance JSON")


def _v8_to_v9(db: Database) -> None:
    """Version 9 adds roles and the audit trail (both empty: a workspace without stored roles
    has only its local, command-line and $CBLUE_STUDIO_ADMINS admins) and who stored each run
    and slice (unknown, NULL, for the older ones)."""
    db.execute(ACCESS_DDL)
    db.execute("ALTER TABLE runs ADD COLUMN IF NOT EXISTS created_by VARCHAR")
    db.execute("ALTER TABLE slices ADD COLUMN IF NOT EXISTS created_by VARCHAR")


def _v9_to_v10(db: Database) -> None:
    """Version 10 adds blind double annotation: no dataset is in a blind pass yet, and no one
    has an own copy (every earlier save is in the gold)."""
    db.execute(BLIND_DDL)


def _v10_to_v11(db: Database) -> None:
    """Version 11 keys cached answers by the endpoint's address too (two servers may serve one
    model name). The older rows were keyed without it and cannot be re-keyed (they never recorded
    which server answered), so they are dropped: a rerun sends those prompts again once."""
    db.execute("DELETE FROM response_cache")


# from-version -> the step to the next version; each step runs inside the migration's transaction.
MIGRATIONS: dict[int, Callable[[Database], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4,
                                                      4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7,
                                                      7: _v7_to_v8, 8: _v8_to_v9, 9: _v9_to_v10,
                                                      10: _v10_to_v11}


def prepare_workspace(db: Database, *, where: str, read_only: bool = False) -> None:
    """Make ``db`` a current workspace, or raise :class:`WorkspaceError` having changed nothing."""
    refuse_foreign_objects(db, where)
    state = schema_state(db)
    if not state.tables:
        if read_only:
            raise WorkspaceError(f"{where} holds no workspace (read-only mode does not create one)")
        with db.transaction():
            create_workspace(db)
        return
    if state.app is None and state.version is None:
        _adopt(db, where, read_only)
        return
    if state.app not in (None, APP_MARKER) or state.version is None:
        raise WorkspaceError(f"{where} is not a CBLUE Studio workspace (its marker says "
                             f"{state.app or 'nothing'}); nothing was changed")
    if state.version > SCHEMA_VERSION:
        raise WorkspaceError(f"{where} was written by a newer CBLUE Studio (schema {state.version}, "
                             f"this one reads up to {SCHEMA_VERSION}); nothing was changed")
    if state.version == SCHEMA_VERSION and state.app == APP_MARKER:
        if not read_only:
            # Tables a newer build of this version added (CREATE ... IF NOT EXISTS) appear here.
            db.execute(DDL)
            db.execute(ANNOTATION_DDL)
        return
    if read_only:
        raise WorkspaceError(f"{where} uses the older schema {state.version}: open it once without "
                             "read-only mode to migrate it")
    migrate(db, state.version)


MAX_NAMED = 10


def refuse_foreign_objects(db: Database, where: str) -> None:
    """:class:`WorkspaceError` naming what ``db`` holds that the schema does not create."""
    try:
        found = read_catalog(db)
    except duckdb.Error as exc:
        raise WorkspaceError(f"{where} cannot be read as a workspace ({short_error(exc)}); "
                             "nothing was changed") from None
    foreign = foreign_objects(found, expected_catalog())
    if foreign:
        more = f" and {len(foreign) - MAX_NAMED} more" if len(foreign) > MAX_NAMED else ""
        raise WorkspaceError(f"{where} is not a CBLUE Studio workspace: it holds objects CBLUE Studio "
                             f"did not create ({', '.join(foreign[:MAX_NAMED])}{more}); nothing was changed")


def migrate(db: Database, from_version: int) -> None:
    """Every step from ``from_version`` to the current one, in one transaction."""
    with db.transaction():
        version = from_version
        while version < SCHEMA_VERSION:
            step = MIGRATIONS.get(version)
            if step is None:
                raise WorkspaceError(f"no migration from schema {version}")
            step(db)
            version += 1
        db.execute(DDL)
        db.execute(ANNOTATION_DDL)
        _write_marker(db, SCHEMA_VERSION)


def _before_v10(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 9: the current ones without the blind-pass tables."""
    return {t: c for t, c in columns.items() if t not in ("blind_datasets", "own_events")}


def _before_v9(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 8: schema 9's without the access tables and created_by."""
    out = {t: c for t, c in _before_v10(columns).items() if t not in ("workspace_users", "audit_events")}
    for table in ("runs", "slices"):
        out[table] = [c for c in columns.get(table, []) if c[0] != "created_by"]
    return out


def _before_v8(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 7: schema 8's without annotation_events.provenance."""
    out = _before_v9(columns)
    out["annotation_events"] = [c for c in columns.get("annotation_events", []) if c[0] != "provenance"]
    return out


def _before_v7(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 6: schema 7's without response_cache."""
    return {t: c for t, c in _before_v8(columns).items() if t != "response_cache"}


def _before_v6(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 5: schema 6's without run_derived."""
    return {t: c for t, c in _before_v7(columns).items() if t != "run_derived"}


def _before_v5(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 4: schema 5's without the training-set tables."""
    return {t: c for t, c in _before_v6(columns).items() if t not in TRAINING_SET_TABLES}


def _before_v4(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schema 3: schema 4's without default_datasets."""
    return {t: c for t, c in _before_v5(columns).items() if t != "default_datasets"}


def _before_v3(columns: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, str]]]:
    """The tables of schemas 1 and 2: schema 3's without datasets.line_ending."""
    out = _before_v4(columns)
    out["datasets"] = [c for c in columns.get("datasets", []) if c[0] != "line_ending"]
    return out


def _adopt(db: Database, where: str, read_only: bool) -> None:
    found = table_columns(db)
    expected = expected_columns()
    # Schemas 10 and 11 have the same tables; taken as 10, an unmarked file's cached answers
    # (keyed without the endpoint's address, maybe) are dropped by the step to 11.
    version = (10 if found == expected else 9 if found == _before_v10(expected)
               else 8 if found == _before_v9(expected)
               else 7 if found == _before_v8(expected)
               else 6 if found == _before_v7(expected)
               else 5 if found == _before_v6(expected)
               else 4 if found == _before_v5(expected) else 3 if found == _before_v4(expected)
               else 2 if found == _before_v3(expected) else None)
    if version is None:
        missing = sorted(set(expected) - set(found))
        differ = sorted(t for t in set(found) & set(expected) if found[t] != expected[t])
        detail = "; ".join(part for part in (
            f"tables missing: {', '.join(missing[:5])}" if missing else "",
            f"tables with other columns: {', '.join(differ[:5])}" if differ else "") if part)
        raise WorkspaceError(f"{where} is a DuckDB file but not a CBLUE Studio workspace ({detail}); "
                             "nothing was changed")
    if read_only:
        if version < SCHEMA_VERSION:
            raise WorkspaceError(f"{where} uses the older schema {version}: open it once without "
                                 "read-only mode to migrate it")
        return
    if version < SCHEMA_VERSION:
        migrate(db, version)   # the marker is written at its end
        return
    with db.transaction():
        _write_marker(db, SCHEMA_VERSION)
