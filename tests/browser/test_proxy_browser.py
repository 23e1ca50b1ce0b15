"""Trusted-proxy sign-in with real parts: Debian's nginx serving docs/deploy/nginx-proxy.conf as
the README shows it (basic authentication, the user and the shared secret passed on), Streamlit
behind it in proxy mode, and Chromium signing in as users with ASCII, Latin-1 and Chinese names:
Chromium sends the Basic credentials as UTF-8, nginx passes ``$remote_user``'s bytes on as they
are, and Streamlit's server hands them over as Latin-1 characters, which the studio decodes."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from cblue_core.auth.roles import Role
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.browser.identity_servers import nginx, nginx_binary, streamlit
from tests.browser.test_deep_link import wait_rendered
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.browser

SECRET = "nginx-shares-this-0f3a9c2e71"
# name -> (role stored in the workspace, password)
USERS = {"li.wei": ("annotator", "pw-li-wei"), "zhang.min": ("viewer", "pw-zhang-min"),
         "李伟": ("annotator", "pw-李伟"), "josé": ("viewer", "pw-josé")}
ANNOTATORS = [n for n, (role, _) in USERS.items() if role == "annotator"]
EXAMPLE = "/annotate?task=KUAKE-QIC&split=dev&example=0"
ENV = {"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": "X-Remote-User",
       "CBLUE_STUDIO_PROXY_SECRET": SECRET}


def workspace_with_roles(folder):
    db = folder / "ws.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    for name, (role, _) in USERS.items():
        ws.users.set_role(name, Role.parse(role))
    ws.close()
    return db


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """nginx in front of Streamlit in proxy mode; yields (nginx URL, Streamlit's own URL)."""
    nginx_binary()
    folder = tmp_path_factory.mktemp("proxy")
    db = workspace_with_roles(folder)
    with streamlit(db, folder, ENV) as (direct, port), \
            nginx(folder, port, {name: pw for name, (_, pw) in USERS.items()}, SECRET) as proxied:
        yield proxied, direct


def signed_in_page(browser, name: str, **options):
    context = browser.new_context(http_credentials={"username": name, "password": USERS[name][1]},
                                  viewport={"width": 1400, "height": 1000}, **options)
    return context, context.new_page()


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def save_a_label(page, reason: str) -> None:
    """On the Annotate page of a classification example: pick another label, give a reason, Save."""
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Label").click()
    page.locator('[role="option"][aria-selected="false"]').first.click()
    reason_box = page.get_by_label("Reason for the edit (kept with it)")
    reason_box.fill(reason)
    reason_box.press("Enter")
    save = page.get_by_role("button", name="Save", exact=True)
    expect(save).to_be_enabled(timeout=30_000)
    save.click()


@pytest.mark.parametrize("name", list(USERS))
def test_each_user_sees_their_own_name_through_nginx(served, browser, name, output_dir):
    """李伟 was refused as "contains control characters" (its UTF-8 bytes read as Latin-1 hold C1
    controls) and josé shown as josÃ©, before the header was decoded as UTF-8."""
    proxied, _ = served
    # A header the browser sends is replaced by nginx's: it cannot pick another name.
    context, page = signed_in_page(browser, name, extra_http_headers={"X-Remote-User": "admin"})
    try:
        page.goto(proxied + "/datasets", timeout=60_000)
        wait_rendered(page)
        expect(sidebar(page)).to_contain_text(f"Signed in as {name}", timeout=30_000)
        assert "admin" not in sidebar(page).inner_text()
        assert page.locator("h1").first.inner_text() == "Datasets"
        page.screenshot(path=str(output_dir / f"proxy_signed_in_{list(USERS).index(name)}.png"))
    finally:
        context.close()


@pytest.mark.parametrize("name", ANNOTATORS)
def test_an_annotation_saved_through_nginx_carries_the_proxys_user(served, browser, name):
    """The annotator role granted to 李伟 applies to the 李伟 nginx names: the save is allowed."""
    proxied, _ = served
    reason = f"checked against the query by {name}"
    context, page = signed_in_page(browser, name)
    try:
        page.goto(proxied + EXAMPLE, timeout=60_000)
        wait_rendered(page)
        expect(page.get_by_text(f"Annotating as {name}")).to_be_visible(timeout=30_000)
        save_a_label(page, reason)
        expect(page.get_by_text("Saved example 0")).to_be_visible(timeout=30_000)
        # The history is read back from the workspace's annotation events: author, time, kind, reason.
        history = page.locator('[data-testid="stCaptionContainer"]').filter(has_text=reason)
        expect(history.first).to_contain_text(f"· {name} ·", timeout=30_000)
    finally:
        context.close()


def test_nginx_asks_for_a_password(served):
    proxied, _ = served
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(proxied + "/", timeout=10)
    assert refused.value.code == 401


def test_a_direct_request_with_a_forged_user_header_is_refused(served, browser, output_dir):
    _, direct = served
    context = browser.new_context(extra_http_headers={"X-Remote-User": "li.wei"})
    try:
        page = context.new_page()
        page.goto(direct + EXAMPLE, timeout=60_000)      # a deep link runs the page file on its own
        wait_rendered(page)
        assert page.locator("h1").first.inner_text() == "Not signed in"
        expect(page.get_by_text("did not come through the studio")).to_be_visible()
        assert "li.wei" not in page.inner_text("body")
        assert not page.locator('[data-testid="stPageLink-NavLink"]').count()
        page.screenshot(path=str(output_dir / "proxy_direct_refused.png"))
    finally:
        context.close()


def test_a_viewers_forged_save_is_refused_and_audited(tmp_path, browser, output_dir):
    """The viewer's editor is read-only, so the test forges what a hostile browser could send: the
    span editor's "save" value, posted from its frame. The store refuses it and records the attempt."""
    nginx_binary()
    db = workspace_with_roles(tmp_path)
    ws = connect(db)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    ws.close()
    viewer = next(n for n, (role, _) in USERS.items() if role == "viewer")
    with streamlit(db, tmp_path, ENV) as (_, port), \
            nginx(tmp_path, port, {name: pw for name, (_, pw) in USERS.items()}, SECRET) as proxied:
        context, page = signed_in_page(browser, viewer)
        try:
            page.goto(proxied + "/annotate?task=CMeEE&split=dev&example=0", timeout=60_000)
            wait_rendered(page)
            page.frame_locator('iframe[title*="span_editor"]').locator(".se-ch").first.wait_for(timeout=60_000)
            frame = next(f for f in page.frames if "span_editor" in f.url)
            frame.evaluate("""doc => window.parent.postMessage({isStreamlitMessage: true,
                type: "streamlit:setComponentValue", dataType: "json",
                value: {spans: [{start: 0, end: 1, type: "dis"}], action: "save", nonce: 9999, doc: doc,
                        browser: null, accepted: [], rejected: []}}, "*")""", f"{did}:0")
            refusal = page.get_by_text(f"gold.save refused for {viewer} (viewer)")
            expect(refusal.first).to_be_visible(timeout=30_000)
            page.screenshot(path=str(output_dir / "proxy_viewer_refused.png"))
        finally:
            context.close()
    ws = connect(db, read_only=True)
    try:
        assert ws.annotations.events(did) == []                      # nothing written
        refused = [e for e in ws.audit.events() if e.outcome == "refused"]
        assert [(e.user, e.source, e.action, e.target) for e in refused] == [
            (viewer, "proxy", "gold.save", f"dataset {did} example 0")]
    finally:
        ws.close()
