"""A workspace file typed in the sidebar that cannot be opened (outside the allowed roots, or held
by a command that is still running) leaves the page working on the server's own workspace, with
the reason and the way to start the app on that file in the sidebar."""
from __future__ import annotations

import subprocess
import sys

from streamlit.testing.v1 import AppTest

from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP


def _open(db, monkeypatch) -> AppTest:
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    return at


def _plain(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.sidebar.error]


def test_a_file_outside_the_roots_keeps_the_page(tmp_path, monkeypatch):
    at = _open(tmp_path / "ws" / "workspace.duckdb", monkeypatch)
    at.text_input(key="db_path").input(str(tmp_path / "ingested.duckdb")).run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Datasets"]                 # the page is still drawn
    errors = _plain(at)
    assert len(errors) == 1 and "may only be opened under" in errors[0]
    assert "CBLUE_STUDIO_DB=path/to/file.duckdb streamlit run app.py" in errors[0]
    assert at.selectbox(key="ds_task").options                        # on the server's workspace


def test_a_file_held_by_another_process_keeps_the_page(tmp_path, monkeypatch):
    at = _open(tmp_path / "ws" / "workspace.duckdb", monkeypatch)
    held = tmp_path / "ws" / "cli.duckdb"
    connect(held).close()
    # Another process holds it, as a running `ingest --db` does. A plain interpreter, not
    # multiprocessing: a spawned child re-imports the parent's __main__, which an AppTest run
    # makes the app's script (the child then opened the page's workspace and died on its lock).
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(held)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        at.text_input(key="db_path").input(str(held)).run()
        assert not at.exception
        assert [t.value for t in at.title] == ["Datasets"]
        assert any("open in another process" in e for e in _plain(at))
    finally:
        proc.communicate("", timeout=30)


HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
con.close()
"""
