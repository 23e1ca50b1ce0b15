"""Once a workspace is open, its connection (and every session's cursor on it) reaches no file
but its own, no extension and no setting."""
from __future__ import annotations

import duckdb
import pytest

from cblue_core.store.workspace import connect


@pytest.fixture
def ws(tmp_path):
    workspace = connect(tmp_path / "ws.duckdb")
    yield workspace
    workspace.close()


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_blob('/proc/self/environ')",
    "SELECT * FROM glob('/*')",
    "COPY (SELECT 1) TO '{tmp}/copied.csv'",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT '1.2.3.4'::INET",
    "SET enable_external_access = true",
    "SET autoload_known_extensions = true",
])
def test_workspace_connection_cannot_reach_out(ws, tmp_path, sql):
    for db in (ws.db, ws.cursor().db):
        with pytest.raises(duckdb.Error):
            db.execute(sql.format(tmp=tmp_path))
    assert not (tmp_path / "copied.csv").exists() and not (tmp_path / "other.duckdb").exists()


def test_arrow_inserts_still_work(ws, cmeee_file):
    from cblue_core.store.ingest import ingest_file

    ingest_file(ws, cmeee_file)
    assert ws.datasets.all()[0].records == 3
