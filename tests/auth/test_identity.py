"""Who the studio believes the visitor is: configuration, the proxy's headers, OIDC claims."""
from __future__ import annotations

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


def test_the_proxy_names_the_user_whatever_the_header_case():
    assert proxy_user({"x-remote-user": "li.wei", "X-PROXY-SECRET": SECRET}, PROXY) == User("li.wei", "proxy")
    assert proxy_user([("X-Remote-User", "王芳"), ("x-proxy-secret", SECRET)], PROXY) == User("王芳", "proxy")


@pytest.mark.parametrize(("headers", "reason"), [
    ({"X-Remote-User": "admin"}, "did not come through"),                              # forged, no secret
    ({"X-Remote-User": "admin", "X-Proxy-Secret": SECRET[:-1] + "!"}, "does not match"),  # wrong secret
    ({"X-Remote-User": "admin", "X-Proxy-Secret": ""}, "does not match"),
    ([("X-Remote-User", "admin"), ("X-Proxy-Secret", SECRET), ("X-Proxy-Secret", "x")], "does not match"),
    ({"X-Proxy-Secret": SECRET}, "no X-Remote-User"),
    ({"X-Remote-User": "  ", "X-Proxy-Secret": SECRET}, "is empty"),
    ({"X-Remote-User": "li\nwei", "X-Proxy-Secret": SECRET}, "control characters"),
    ({"X-Remote-User": "li\x00wei", "X-Proxy-Secret": SECRET}, "control characters"),
    ({"X-Remote-User": "li\u202ewei", "X-Proxy-Secret": SECRET}, "control characters"),
    ({"X-Remote-User": "x" * 257, "X-Proxy-Secret": SECRET}, "longer than 256"),
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
    assert isinstance(refused, Refusal) and "email claim contains control" in refused.reason
