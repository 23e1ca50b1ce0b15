"""Which files the app opens as workspaces: new, current, older (migrated), unmarked but ours
(adopted), anybody else's (refused untouched); and read-only mode."""
from __future__ import annotations

import duckdb
import pytest

from cblue_core.ingest import ingest_file
from cblue_core.store.errors import WorkspaceError
from cblue_core.store.schema import SCHEMA_VERSION
from cblue_core.store.versioning import APP_MARKER
from cblue_core.store.workspace import connect


def marker(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()


def file_bytes(path):
    return path.read_bytes()


def test_new_file_gets_the_marker(tmp_path):
    path = tmp_path / "new.duckdb"
    connect(path).close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_1_workspace_is_migrated_keeping_its_data(tmp_path, cmeee_file):
    path = tmp_path / "old.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    # what version 1 wrote: no app marker, schema_version 1
    ws.db.execute("DELETE FROM meta WHERE key = 'app'")
    ws.db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    ws.close()
    ws = connect(path)
    assert [d.records for d in ws.datasets.all()] == [3]
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_2_workspace_gains_the_line_ending_column(tmp_path, cmeee_file):
    path = tmp_path / "v2.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    # what version 2 wrote: no datasets.line_ending
    ws.db.execute("ALTER TABLE datasets DROP COLUMN line_ending")
    ws.db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    ws.close()
    with pytest.raises(WorkspaceError, match="older schema 2"):
        connect(path, read_only=True)
    ws = connect(path)
    did = ws.datasets.all()[0].dataset_id
    assert [d.records for d in ws.datasets.all()] == [3]
    assert ws.datasets.line_ending(did) is None          # unknown for a dataset ingested before
    ingest_file(ws, cmeee_file, split="train")         # new ingests record it
    assert [ws.datasets.line_ending(d.dataset_id) for d in ws.datasets.all()][-1] == "lf"
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_3_workspace_gains_the_response_cache(tmp_path, cmeee_file):
    path = tmp_path / "v3.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    # what version 3 wrote: no response_cache table
    ws.db.execute("DROP TABLE response_cache")
    ws.db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    ws.close()
    with pytest.raises(WorkspaceError, match="older schema 3"):
        connect(path, read_only=True)
    ws = connect(path)
    assert [d.records for d in ws.datasets.all()] == [3]
    assert ws.responses.count() == 0
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": "4"} and SCHEMA_VERSION == 4


def test_unmarked_workspace_with_our_tables_is_adopted(tmp_path):
    path = tmp_path / "unmarked.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta")
    con.close()
    connect(path).close()
    assert marker(path)["app"] == APP_MARKER


def test_unmarked_workspace_with_the_older_tables_is_adopted_and_migrated(tmp_path):
    """A workspace written before the marker existed has the tables of schema 1 (no
    datasets.line_ending): adopted, then migrated."""
    path = tmp_path / "unmarked_v1.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta")
    con.execute("ALTER TABLE datasets DROP COLUMN line_ending")
    con.execute("DROP TABLE response_cache")
    con.close()
    with pytest.raises(WorkspaceError, match="older schema 2"):
        connect(path, read_only=True)
    connect(path).close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}
    con = duckdb.connect(str(path), read_only=True)
    assert ("line_ending",) in con.execute("SELECT column_name FROM information_schema.columns"
                                           " WHERE table_name = 'datasets'").fetchall()
    con.close()


def test_another_programs_database_is_refused_untouched(tmp_path):
    path = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE invoices (id INTEGER, amount DOUBLE)")
    con.execute("INSERT INTO invoices VALUES (1, 9.5)")
    con.execute("CHECKPOINT")
    con.close()
    before = file_bytes(path)
    with pytest.raises(WorkspaceError, match="not a CBLUE Studio workspace.*invoices"):
        connect(path)
    assert file_bytes(path) == before
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"invoices"}


def test_a_foreign_marker_or_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "w.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    with pytest.raises(WorkspaceError, match="newer CBLUE Studio"):
        connect(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = 'other-app' WHERE key = 'app'")
    con.close()
    with pytest.raises(WorkspaceError, match="not a CBLUE Studio workspace"):
        connect(path)


def test_read_only_opens_an_existing_workspace_and_writes_nothing(tmp_path, cmeee_file):
    path = tmp_path / "w.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    ws.close()
    ro = connect(path, read_only=True)
    assert ro.read_only and ro.cursor().read_only
    assert [d.task for d in ro.datasets.all()] == ["CMeEE"]
    with pytest.raises(duckdb.Error):
        ro.slices.save("s", "idx > 0")
    ro.close()
    with pytest.raises(WorkspaceError, match="read-only mode opens an existing one only"):
        connect(tmp_path / "missing.duckdb", read_only=True)
    assert not (tmp_path / "missing.duckdb").exists()
