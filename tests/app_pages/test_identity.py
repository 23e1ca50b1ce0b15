"""Who the visitor is, under AppTest: the name in the sidebar, and the page a visitor the studio
cannot name gets instead of any page (deep links too)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.auth.user import local_user
from tests.app_pages.conftest import APP

SECRET = "apptest-proxy-secret-0123"


@pytest.fixture
def env(workspace_file, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(workspace_file))
    for var in ("CBLUE_STUDIO_AUTH", "CBLUE_STUDIO_USER_HEADER", "CBLUE_STUDIO_PROXY_SECRET"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def proxy_mode(monkeypatch, headers: list[tuple[str, str]]) -> None:
    """Proxy mode with the websocket request's headers as given (AppTest has no request)."""
    monkeypatch.setenv("CBLUE_STUDIO_AUTH", "proxy")
    monkeypatch.setenv("CBLUE_STUDIO_USER_HEADER", "X-Remote-User")
    monkeypatch.setenv("CBLUE_STUDIO_PROXY_SECRET", SECRET)
    monkeypatch.setattr("app_pages.identity.request_headers", lambda: headers)


def sidebar_text(at: AppTest) -> str:
    """The sidebar's captions as read (md() escapes punctuation and breaks autolinks)."""
    return " ".join(c.value for c in at.sidebar.caption).replace("\\", "").replace("\u200b", "")


def refused(at: AppTest, title: str) -> str:
    """The refusal page: its title, no page and no sidebar; returns its message."""
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == [title]
    assert not at.sidebar.caption and not at.sidebar.text_input
    return " ".join(e.value for e in [*at.error, *at.info]).replace("\\", "")


def test_local_mode_names_the_os_account_and_has_no_name_box(env):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert f"Signed in as **{local_user().name}**" in sidebar_text(at)
    assert not [w for w in at.sidebar.text_input if "name" in w.label.lower()]
    assert at.title[0].value == "Datasets"


def test_proxy_mode_shows_the_proxys_user(env):
    proxy_mode(env, [("x-remote-user", "li.wei"), ("X-Proxy-Secret", SECRET)])
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "Signed in as **li.wei** (through the studio's proxy)" in sidebar_text(at)
    assert at.title[0].value == "Datasets"


def test_a_forged_user_header_without_the_secret_is_refused(env):
    proxy_mode(env, [("X-Remote-User", "admin")])
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["task"] = "CMeEE"
    at.run()
    assert "did not come through the studio's proxy" in refused(at, "Not signed in")


def test_a_wrong_secret_is_refused(env):
    proxy_mode(env, [("X-Remote-User", "admin"), ("X-Proxy-Secret", "guess-guess-guess-guess")])
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert "does not match" in refused(at, "Not signed in")


def test_oidc_visitor_signs_in_first(env):
    env.setenv("CBLUE_STUDIO_AUTH", "oidc")
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = {"is_logged_in": False}
    refused(at.run(), "Sign in")
    assert [b.label for b in at.button] == ["Sign in"]


def test_oidc_user_is_named_by_email_with_sign_out(env):
    env.setenv("CBLUE_STUDIO_AUTH", "oidc")
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = {"is_logged_in": True, "email": "wang.fang@example.org", "sub": "42"}
    at.run()
    assert not at.exception
    assert "Signed in as **wang.fang@example.org** (single sign-on)" in sidebar_text(at)
    assert [b.label for b in at.sidebar.button] == ["Sign out"]


def test_a_bad_mode_is_a_clear_page_not_a_traceback(env):
    env.setenv("CBLUE_STUDIO_AUTH", "ldap")
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert "CBLUE_STUDIO_AUTH is 'ldap'" in refused(at, "CBLUE Studio is misconfigured")


def wire(text: str) -> str:
    """``text`` as Streamlit's server hands a header a proxy sent as UTF-8: a Latin-1 character a byte."""
    return text.encode("utf-8").decode("latin-1")


def test_a_chinese_name_from_the_proxy_is_shown_as_it_was_sent(env):
    proxy_mode(env, [("X-Remote-User", wire("李伟")), ("X-Proxy-Secret", SECRET)])
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "Signed in as **李伟** (through the studio's proxy)" in sidebar_text(at)


def test_a_name_that_is_not_utf8_is_refused_saying_so(env):
    proxy_mode(env, [("X-Remote-User", "jos\xe9"), ("X-Proxy-Secret", SECRET)])    # Latin-1 bytes
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert "header is not UTF-8 text" in refused(at, "Not signed in")


def test_an_oidc_name_with_a_bidi_override_is_refused_naming_it(env):
    env.setenv("CBLUE_STUDIO_AUTH", "oidc")
    at = AppTest.from_file(APP, default_timeout=60)
    at.user = {"is_logged_in": True, "email": "ann\u202egro.elpmaxe@"}
    at.run()
    message = refused(at, "Not signed in")
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in message and "\u202e" not in message
