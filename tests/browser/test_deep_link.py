"""A deep link as the first request to a freshly started server: Streamlit runs the page file
under pages/ on its own, and the page hands over to the app's entry point, so the user sees the
page with the app's sidebar. Also "/" opens the Datasets page at /datasets, and /datasets works."""
from __future__ import annotations

from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from app_pages.navigation import PAGES
from tests.browser.conftest import _prepare_workspace
from tests.streamlit_server import start_server

pytestmark = pytest.mark.browser


def wait_rendered(page) -> None:
    page.wait_for_selector("h1", timeout=60_000)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


@pytest.mark.parametrize("first", ["/errors?run=1", "/runs"])
def test_a_deep_link_as_the_first_request_shows_the_page_in_the_app(first, tmp_path, browser, output_dir):
    db = tmp_path / "ws.duckdb"
    _prepare_workspace(db)
    proc, url = start_server(db, tmp_path / "log.txt")
    try:
        page = browser.new_page()
        page.goto(url + first)          # nothing has been requested from this server before
        wait_rendered(page)
        title = first.strip("/").split("?")[0].capitalize()
        assert page.locator("h1").first.inner_text() == title
        sidebar = page.locator('[data-testid="stSidebar"]')
        # expect() waits a little: the page's elements and the sidebar's arrive in separate messages
        # every page's link: the local user (no sign-in configured) is an admin, who sees Admin too
        expect(sidebar.locator('[data-testid="stPageLink-NavLink"]')).to_have_count(len(PAGES))
        assert "Datasets" in sidebar.inner_text()
        assert page.locator('[data-testid="stException"]').count() == 0
        if "run=1" in first:
            assert "run=1" in page.url
        page.screenshot(path=str(output_dir / f"deep_link_{title.lower()}.png"), full_page=True)
        # the root opens the Datasets page at its own URL, which a link can reach too
        page.goto(url + "/")
        wait_rendered(page)
        assert urlparse(page.url).path == "/datasets" and page.locator("h1").first.inner_text() == "Datasets"
        page.goto(url + "/datasets")
        wait_rendered(page)
        assert page.locator("h1").first.inner_text() == "Datasets"
        assert "Page not found" not in page.inner_text("body")
        page.close()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
