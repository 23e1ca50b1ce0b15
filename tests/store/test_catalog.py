"""A workspace file holding objects the studio did not create is refused untouched, naming them:
the attack was a `datasets` view over read_text('/etc/passwd') that the datasets list printed."""
from __future__ import annotations

import hashlib

import duckdb
import pytest

from cblue_core.store.errors import WorkspaceError
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def workspace_file(tmp_path, cmeee_file):
    path = tmp_path / "ws.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    ws.close()
    return path


def plant(path, *statements: str) -> None:
    con = duckdb.connect(str(path))
    try:
        for sql in statements:
            con.execute(sql)
        con.execute("CHECKPOINT")
    finally:
        con.close()


def test_an_untouched_workspace_opens(workspace_file):
    ws = connect(workspace_file)
    try:
        assert len(ws.datasets.all()) == 1
    finally:
        ws.close()


@pytest.mark.parametrize(("statements", "named"), [
    (["DROP TABLE datasets",
      ("CREATE VIEW datasets AS SELECT 1 AS dataset_id, 'CMeEE' AS task, 'dev' AS split,"
      " content AS name FROM read_text('/etc/passwd')")], ["view datasets"]),
    (["CREATE VIEW environ AS SELECT content FROM read_text('/proc/self/environ')"], ["view environ"]),
    (["CREATE MACRO secret() AS TABLE SELECT * FROM read_text('/etc/passwd')"], ["macro secret"]),
    (["CREATE TABLE extra (a INTEGER)", "CREATE SEQUENCE counter"], ["sequence counter", "table extra"]),
    (["CREATE INDEX by_text ON examples (text)"], ["index by_text"]),
    (["CREATE SCHEMA elsewhere", "CREATE TYPE mood AS ENUM ('a', 'b')"], ["schema elsewhere", "type mood"]),
    (["ALTER TABLE slices ADD COLUMN note VARCHAR"], ["table slices (other columns)"]),
    # A generated column is read with the table: same name and type, another definition.
    (["DROP TABLE meta", ("CREATE TABLE meta (key VARCHAR PRIMARY KEY,"
      " value VARCHAR GENERATED ALWAYS AS (upper(key)))")], ["table meta (other columns)"]),
])
def test_foreign_objects_are_refused_by_name_untouched(workspace_file, statements, named):
    plant(workspace_file, *statements)
    before = digest(workspace_file)
    with pytest.raises(WorkspaceError) as info:
        connect(workspace_file)
    message = str(info.value)
    assert "did not create" in message and "nothing was changed" in message
    for name in named:
        assert name in message
    assert "root:" not in message
    assert digest(workspace_file) == before
    with pytest.raises(WorkspaceError, match="did not create"):
        connect(workspace_file, read_only=True)
    assert digest(workspace_file) == before


def test_an_older_workspace_is_not_foreign(workspace_file):
    # Schema 2 had no datasets.line_ending: a prefix of today's columns is ours.
    plant(workspace_file, "ALTER TABLE datasets DROP COLUMN line_ending",
          "UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    ws = connect(workspace_file)
    try:
        assert len(ws.datasets.all()) == 1
    finally:
        ws.close()
