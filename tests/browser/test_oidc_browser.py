"""OpenID Connect sign-in with real parts: an OpenID Connect provider from npm
(oauth2-mock-server, pinned in tests/browser/oidc/package-lock.json) started by the test,
Streamlit in oidc mode with an ``[auth]`` section pointing at it, and Chromium going through
``st.login``: the sign-in page, the provider, Streamlit's callback, then the app with the
token's email in the sidebar; Sign out returns to the sign-in page."""
from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import expect

from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.browser.conftest import _free_port
from tests.browser.identity_servers import oidc_provider, streamlit
from tests.browser.test_deep_link import wait_rendered
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.browser

EMAIL = "wang.fang@hospital.example"


def auth_section(port: int, issuer: str) -> str:
    """``.streamlit/secrets.toml``'s ``[auth]``, as the README's recipe writes it."""
    return f"""[auth]
redirect_uri = "http://localhost:{port}/oauth2callback"
cookie_secret = "{secrets.token_hex(32)}"
client_id = "cblue-studio"
client_secret = "{secrets.token_hex(16)}"
server_metadata_url = "{issuer}/.well-known/openid-configuration"
"""


def test_sign_in_through_st_login_shows_the_tokens_email(tmp_path, browser, output_dir):
    db = tmp_path / "ws.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    ws.close()
    with oidc_provider(tmp_path, EMAIL) as issuer:
        port = _free_port()
        toml = tmp_path / "secrets.toml"
        toml.write_text(auth_section(port, issuer))
        with streamlit(db, tmp_path, {"CBLUE_STUDIO_AUTH": "oidc"}, f"--secrets.files={toml}",
                       port=port):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            try:
                page.goto(f"http://localhost:{port}/runs", timeout=60_000)
                wait_rendered(page)
                assert page.locator("h1").first.inner_text() == "Sign in"
                assert not page.locator('[data-testid="stPageLink-NavLink"]').count()
                page.get_by_role("button", name="Sign in").click()
                # provider -> /oauth2callback -> the app, now with Streamlit's signed cookie
                sidebar = page.locator('[data-testid="stSidebar"]')
                expect(sidebar).to_contain_text(f"Signed in as {EMAIL}", timeout=60_000)
                expect(page.locator("h1").first).to_have_text("Datasets")
                page.screenshot(path=str(output_dir / "oidc_signed_in.png"))

                sidebar.get_by_role("button", name="Sign out").click()
                expect(page.locator("h1").first).to_have_text("Sign in", timeout=60_000)
            finally:
                context.close()
