"""The warm-up imports every page's modules (read from the page files, so a new page needs no
entry), without the models' torch; a page whose import fails is logged and skipped."""
from __future__ import annotations

import json
import re
import subprocess
import sys

from app_pages import warm_up
from app_pages.navigation import PAGES, ROOT
from tests.streamlit_server import start_server


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh Python in the project root; it must succeed."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out


def test_the_modules_are_those_the_page_files_import():
    expected = []
    for spec in PAGES:
        for name in re.findall(r"^from (app_pages\.[\w.]+) import", (ROOT / spec.file).read_text(),
                               re.MULTILINE):
            expected += [] if name in expected else [name]
    assert warm_up.page_modules() == expected
    assert {"app_pages.errors_tabs", "app_pages.datasets", "app_pages.runs"} <= set(expected)


def test_a_fresh_process_imports_the_pages_but_not_torch():
    code = ("import json, sys\nfrom app_pages.warm_up import import_pages\ndone = import_pages()\n"
            "print(json.dumps({'done': done, 'mods': [m for m in ('app_pages.errors_tabs', 'plotly', "
            "'pandas', 'torch') if m in sys.modules]}))")
    out = run_python(code)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["done"] == warm_up.page_modules()
    assert got["mods"] == ["app_pages.errors_tabs", "plotly", "pandas"]


def test_a_failing_page_is_logged_and_skipped(monkeypatch, tmp_path):
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(tmp_path / "log.txt"))
    monkeypatch.setattr(warm_up, "page_modules", lambda: ["app_pages.no_such_page", "app_pages.keys"])
    assert warm_up.import_pages() == ["app_pages.keys"]
    assert "warm-up: importing app_pages.no_such_page" in (tmp_path / "log.txt").read_text()


def test_the_workspace_is_opened_into_the_pages_shared_handle(monkeypatch, tmp_path):
    from app_pages import common
    db = tmp_path / "ws.duckdb"
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    opened = []
    real = common.connect
    monkeypatch.setattr(common, "connect", lambda *a, **k: opened.append(a) or real(*a, **k))
    common._open_workspace.clear()
    try:
        assert warm_up.open_workspace() is True
        assert len(opened) == 1 and db.is_file()
        handle = common.shared_workspace(str(db))       # what the first visitor's page asks for
        assert len(opened) == 1                         # no second connection: the warm one
        assert handle.runs.all() is not None
    finally:
        common._open_workspace.clear()


def test_a_workspace_that_cannot_open_is_logged_and_the_server_starts(monkeypatch, tmp_path, caplog):
    from app_pages import common
    bad = tmp_path / "not-a-workspace.duckdb"
    bad.write_bytes(b"this is no database")
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(bad))
    common._open_workspace.clear()
    try:
        with caplog.at_level("WARNING", logger="cblue_studio.pages"):
            assert warm_up.open_workspace() is False
        assert "the workspace was not opened" in caplog.text and str(bad) in caplog.text
        assert bad.read_bytes() == b"this is no database"
    finally:
        common._open_workspace.clear()


def test_the_direction_table_is_built_before_the_first_page():
    code = ("from app_pages.warm_up import prepare_caches\nfrom cblue_core.render import bidi\n"
            "prepare_caches()\nbidi.isolate('\\u202eabc')\ninfo = bidi._moves_neighbours.cache_info()\n"
            "print(info.misses, info.hits)")
    out = run_python(code)
    assert out.stdout.split() == ["1", "1"]      # built by the warm-up, reused by the page


def test_duckdb_pandas_results_are_ready_before_the_first_page():
    # DuckDB imports its pandas bindings on a process's first .df(): the warm-up pays that
    code = ("import sys\nfrom app_pages.warm_up import prepare_caches\nbefore = set(sys.modules)\n"
            "prepare_caches()\nprint(sorted(m for m in set(sys.modules) - before if m.startswith('pandas'))[:3])")
    out = run_python(code)
    assert out.stdout.strip() != "[]"


def test_a_served_app_starts_with_its_workspace_open_and_a_quiet_log(tmp_path):
    db, log = tmp_path / "ws.duckdb", tmp_path / "server.log"
    server, _url = start_server(db, log, script="serve.py")
    try:
        assert db.is_file()                     # opened (and created) before any visitor
        text = log.read_text()
        assert "missing ScriptRunContext" not in text and "Traceback" not in text, text[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=20)
