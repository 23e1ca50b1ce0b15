"""Who the studio believes the visitor is: configuration, the proxy's headers, OIDC claims."""
from __future__ import annotations

import unicodedata

import pytest

from cblue_core.auth.identity import (
    IdentityConfig,
    IdentityConfigError,
    Refusal,
    identity_config,
    oidc_user,
    proxy_user,
)
from cblue_core.auth.user import User

SECRET = "s3cret-shared-with-nginx"
PROXY = IdentityConfig("proxy", "X-Remote-User", SECRET)


def test_nothing_set_is_local_mode():
    assert identity_config({}).mode == "local"
    assert identity_config({"CBLUE_STUDIO_AUTH": " OIDC "}).mode == "oidc"


def test_proxy_mode_reads_header_and_secret():
    config = identity_config({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": "X-Remote-User",
                              "CBLUE_STUDIO_PROXY_SECRET": SECRET})
    assert config == PROXY
    assert SECRET not in repr(config)


@pytest.mark.parametrize(("env", "names"), [
    ({"CBLUE_STUDIO_AUTH": "ldap"}, "CBLUE_STUDIO_AUTH"),
    ({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_PROXY_SECRET": SECRET}, "CBLUE_STUDIO_USER_HEADER"),
    ({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": "X-Remote-User"}, "CBLUE_STUDIO_PROXY_SECRET"),
    ({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": "X-Remote-User",
      "CBLUE_STUDIO_PROXY_SECRET": "short"}, "at least 16"),
    ({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": "X Remote: User",
      "CBLUE_STUDIO_PROXY_SECRET": SECRET}, "header name"),
    ({"CBLUE_STUDIO_AUTH": "proxy", "CBLUE_STUDIO_USER_HEADER": "x-proxy-secret",
      "CBLUE_STUDIO_PROXY_SECRET": SECRET}, "carries the secret"),
])
def test_a_bad_configuration_is_a_clear_error(env, names):
    with pytest.raises(IdentityConfigError, match=names):
        identity_config(env)


def wire(text: str) -> str:
    """``text`` sent as UTF-8, as the server hands a header value over: one Latin-1 character a byte."""
    return text.encode("utf-8").decode("latin-1")


def test_the_proxy_names_the_user_whatever_the_header_case():
    assert proxy_user({"x-remote-user": "li.wei", "X-PROXY-SECRET": SECRET}, PROXY) == User("li.wei", "proxy")
    assert proxy_user([("X-Remote-User", wire("王芳")), ("x-proxy-secret", SECRET)], PROXY) == User("王芳", "proxy")


@pytest.mark.parametrize("name", ["李伟", "josé", "Ådne Ødegård", "محمد"])
def test_a_utf8_name_from_the_proxy_is_decoded(name):
    assert proxy_user({"X-Remote-User": wire(name), "X-Proxy-Secret": SECRET}, PROXY) == User(name, "proxy")


def test_a_decomposed_name_from_the_proxy_arrives_composed():
    decomposed = unicodedata.normalize("NFD", "josé")
    assert proxy_user({"X-Remote-User": wire(decomposed), "X-Proxy-Secret": SECRET}, PROXY) == User("josé", "proxy")


def test_a_non_ascii_secret_is_compared_as_utf8():
    config = IdentityConfig("proxy", "X-Remote-User", "秘密-shared-with-nginx")
    assert proxy_user({"X-Remote-User": "li.wei", "X-Proxy-Secret": wire("秘密-shared-with-nginx")},
                      config) == User("li.wei", "proxy")


@pytest.mark.parametrize(("headers", "reason"), [
    ({"X-Remote-User": "admin"}, "did not come through"),                              # forged, no secret
    ({"X-Remote-User": "admin", "X-Proxy-Secret": SECRET[:-1] + "!"}, "does not match"),  # wrong secret
    ({"X-Remote-User": "admin", "X-Proxy-Secret": ""}, "does not match"),
    ([("X-Remote-User", "admin"), ("X-Proxy-Secret", SECRET), ("X-Proxy-Secret", "x")], "does not match"),
    ({"X-Proxy-Secret": SECRET}, "no X-Remote-User"),
    ({"X-Remote-User": "  ", "X-Proxy-Secret": SECRET}, "is empty"),
    ({"X-Remote-User": "li\nwei", "X-Proxy-Secret": SECRET}, "contains U+000A, a control"),
    ({"X-Remote-User": "li\x00wei", "X-Proxy-Secret": SECRET}, "contains U+0000, a control"),
    ({"X-Remote-User": wire("li\u202ewei"), "X-Proxy-Secret": SECRET}, "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ({"X-Remote-User": wire("li\u2028wei"), "X-Proxy-Secret": SECRET}, "U+2028 LINE SEPARATOR"),
    ({"X-Remote-User": "x" * 257, "X-Proxy-Secret": SECRET}, "longer than 256"),
    ({"X-Remote-User": " li.wei", "X-Proxy-Secret": SECRET}, "begins with a space"),
    ({"X-Remote-User": "li.wei ", "X-Proxy-Secret": SECRET}, "ends with a space"),
    # josé sent as Latin-1 bytes, and a name cut inside a UTF-8 sequence: refused, not guessed at
    ({"X-Remote-User": "jos\xe9", "X-Proxy-Secret": SECRET}, "is not UTF-8 text"),
    ({"X-Remote-User": wire("李伟")[:-1], "X-Proxy-Secret": SECRET}, "is not UTF-8 text"),
    ({"X-Remote-User": "王芳", "X-Proxy-Secret": SECRET}, "beyond Latin-1"),
    ({"X-Remote-User": "li.wei", "X-Proxy-Secret": SECRET + "秘"}, "does not match"),
    ([("X-Remote-User", "a"), ("x-remote-user", "b"), ("X-Proxy-Secret", SECRET)], "2 times"),
])
def test_the_proxy_refuses(headers, reason):
    result = proxy_user(headers, PROXY)
    assert isinstance(result, Refusal)
    assert reason in result.reason


def test_oidc_user_is_the_email_else_the_sub():
    assert oidc_user({"email": "li@example.org", "sub": "123"}) == User("li@example.org", "oidc")
    assert oidc_user({"email": "", "sub": "123"}) == User("123", "oidc")
    assert isinstance(oidc_user({"is_logged_in": True}), Refusal)
    refused = oidc_user({"email": "li@example.org\r\nX: y"})
    assert isinstance(refused, Refusal) and "email claim contains U+000D, a control" in refused.reason


def test_oidc_names_follow_the_same_rule():
    assert oidc_user({"email": "李伟@example.cn"}) == User("李伟@example.cn", "oidc")
    assert oidc_user({"sub": unicodedata.normalize("NFD", "josé")}) == User("josé", "oidc")
    for claims, reason in (({"email": " li@example.org"}, "email claim begins with a space"),
                           ({"email": "x" * 300}, "email claim is longer than 256"),
                           ({"sub": "li\u202e"}, "sub claim contains U+202E")):
        refused = oidc_user(claims)
        assert isinstance(refused, Refusal) and reason in refused.reason, claims
