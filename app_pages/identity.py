"""The visitor of this session as a :class:`cblue_core.auth.User`, in the mode the environment
chose (:mod:`cblue_core.auth.identity`): every page asks here, never a box the visitor types into.

:func:`require_user` runs before any page draws (``navigation.main``, which deep links reach
too): a visitor the studio cannot name gets a page saying why, and nothing else runs.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NoReturn

import streamlit as st

from app_pages.keys import SignIn
from app_pages.markdown import md
from cblue_core.auth.identity import IdentityConfigError, Refusal, identity_config, oidc_user, proxy_user
from cblue_core.auth.user import User, local_user


class SignInNeeded:
    """An OIDC visitor who has not signed in yet."""


def request_headers() -> Iterable[tuple[str, str]]:
    """The headers of the request that opened this session: Streamlit 1.67 keeps those of the
    websocket handshake (``st.context.headers``), which a proxy sends like any other request's.
    Values come as the server decoded them, a Latin-1 character a byte; :func:`proxy_user`
    decodes the name's UTF-8 from them, so they are handed on untouched."""
    headers = st.context.headers
    return [(name, value) for name in headers for value in headers.get_all(name)]


def resolve() -> User | Refusal | SignInNeeded:
    """Who the visitor is, or why the studio cannot say; raises IdentityConfigError."""
    config = identity_config(os.environ)
    if config.mode == "proxy":
        return proxy_user(request_headers(), config)
    if config.mode == "oidc":
        claims = st.user.to_dict()
        return oidc_user(claims) if claims.get("is_logged_in") else SignInNeeded()
    return local_user()


def require_user() -> User:
    """The visitor, or a page saying why there is none and ``st.stop()``."""
    try:
        found = resolve()
    except IdentityConfigError as e:
        _stop("CBLUE Studio is misconfigured", f"Its sign-in settings are unusable: {e}. "
              "Whoever runs the server must fix the environment and restart it.")
    if isinstance(found, SignInNeeded):
        _stop("Sign in", "CBLUE Studio needs to know who you are: sign in with your organisation's "
              "account.", sign_in=True)
    if isinstance(found, Refusal):
        _stop("Not signed in", f"CBLUE Studio cannot tell who you are: {found.reason}. Open the "
              "studio at the address your team was given.", sign_out=_oidc())
    return found


current_user = require_user     # the name the pages and the roles code call


def sidebar_identity() -> None:
    """The signed-in name in the sidebar (inside ``st.sidebar``), with Sign out under OIDC."""
    user = require_user()
    st.caption(f"Signed in as **{md(user.name)}** ({md(_SOURCE[user.source])})")
    if user.source == "oidc":
        st.button("Sign out", key=SignIn.SIGN_OUT, on_click=st.logout)


_SOURCE = {"local": "this computer's account", "proxy": "through the studio's proxy",
           "oidc": "single sign-on", "cli": "command line"}


def _oidc() -> bool:
    try:
        return identity_config(os.environ).mode == "oidc"
    except IdentityConfigError:
        return False


def _stop(title: str, message: str, *, sign_in: bool = False, sign_out: bool = False) -> NoReturn:
    st.title(md(title))
    (st.info if sign_in else st.error)(md(message))
    if sign_in:
        st.button("Sign in", key=SignIn.SIGN_IN, type="primary", on_click=st.login)
    if sign_out:
        st.button("Sign out", key=SignIn.SIGN_OUT, on_click=st.logout)
    st.stop()
    raise RuntimeError(f"{title}: {message}")   # st.stop() raises; outside a Streamlit run it cannot
