"""`streamlit run serve.py` (the app with its pages imported while the server starts) serves the
same app: a deep link to an Errors tab as the very first request shows that tab, in the app,
with nothing logged as failed."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app_pages.navigation import PAGES
from tests.browser.conftest import _prepare_workspace
from tests.browser.test_deep_link import wait_rendered
from tests.streamlit_server import start_server

pytestmark = pytest.mark.browser


def test_serve_py_answers_a_first_deep_link_with_the_tab(tmp_path, browser, output_dir):
    db = tmp_path / "ws.duckdb"
    _prepare_workspace(db)
    log = tmp_path / "log.txt"
    proc, url = start_server(db, log, script="serve.py")
    try:
        page = browser.new_page()
        page.goto(url + "/errors?run=1&tab=buckets")
        wait_rendered(page)
        assert page.locator("h1").first.inner_text() == "Errors"
        expect(page.get_by_text("per bucket with 95% bootstrap intervals")).to_be_visible(timeout=60_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        # every page's link: the local user (no sign-in configured) is an admin, who sees Admin too
        expect(sidebar.locator('[data-testid="stPageLink-NavLink"]')).to_have_count(len(PAGES))
        assert not page.locator('[data-testid="stException"]').count()
        page.screenshot(path=str(output_dir / "serve_errors_buckets.png"), full_page=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "Traceback" not in log.read_text()
    assert not (db.parent / "cblue_studio.log").exists()      # the warm-up logged no failure


def test_serve_py_shows_the_span_editor(tmp_path, browser):
    # the editor is a custom component whose module serve.py imports before any script run: it
    # once showed "Component not found" there, while app.py showed it
    db = tmp_path / "ws.duckdb"
    _prepare_workspace(db)
    proc, url = start_server(db, tmp_path / "log.txt", script="serve.py")
    try:
        page = browser.new_page()
        page.goto(url + "/annotate?task=CMeEE&split=dev&example=0")
        wait_rendered(page)
        editor = page.frame_locator('iframe[title*="span_editor"]')
        expect(editor.get_by_text("疾病").first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Component not found")).to_have_count(0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
