"""A deep link as the first request to a freshly started server: Streamlit runs the page file
under pages/ on its own, and the page hands over to the app's entry point, so the user sees the
page with the app's sidebar. Also "/" opens the Datasets page at /datasets, and /datasets works."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from app_pages.navigation import PAGES
from tests.browser.conftest import ROOT, _free_port, _prepare_workspace

pytestmark = pytest.mark.browser


def start_server(db, log_path, script: str = "app.py") -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env["CBLUE_STUDIO_DB"] = str(db)
    log = open(log_path, "w")  # noqa: SIM115 - open for the server's lifetime
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.headless=true",
                             f"--server.port={port}", "--server.address=127.0.0.1"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("streamlit did not start")


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
