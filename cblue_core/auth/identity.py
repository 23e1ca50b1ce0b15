"""How the studio learns who the visitor is, chosen by the environment:

- ``local`` (nothing set): one user, the OS account running the server;
- ``proxy`` (``CBLUE_STUDIO_AUTH=proxy``): the name a reverse proxy that authenticated the visitor
  put in ``$CBLUE_STUDIO_USER_HEADER``, believed only beside the shared secret
  ``$CBLUE_STUDIO_PROXY_SECRET`` in ``X-Proxy-Secret``;
- ``oidc`` (``CBLUE_STUDIO_AUTH=oidc``): the claims of an OpenID Connect token (Streamlit's
  ``st.login``), the user being the ``email`` claim, else ``sub``.

Pure functions over mappings: the pages hand in the request headers or ``st.user``.
"""
from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .names import UnfitName, fit_name
from .user import User

Mode = Literal["local", "proxy", "oidc"]
MODES: tuple[Mode, ...] = ("local", "proxy", "oidc")

MODE_VAR = "CBLUE_STUDIO_AUTH"
HEADER_VAR = "CBLUE_STUDIO_USER_HEADER"
SECRET_VAR = "CBLUE_STUDIO_PROXY_SECRET"
SECRET_HEADER = "X-Proxy-Secret"

# Guessable secrets make the check decorative: anyone reaching the port could send one.
MIN_SECRET_LENGTH = 16


class IdentityConfigError(ValueError):
    """The identity settings in the environment are unusable; the message names the variable."""


@dataclass(frozen=True)
class IdentityConfig:
    mode: Mode
    user_header: str = ""       # proxy mode only
    proxy_secret: str = ""      # proxy mode only

    def __repr__(self) -> str:  # never print the secret (logs, tracebacks)
        return f"IdentityConfig(mode={self.mode!r}, user_header={self.user_header!r})"


@dataclass(frozen=True)
class Refusal:
    """Why a request names no user the studio may believe."""

    reason: str


def identity_config(environ: Mapping[str, str]) -> IdentityConfig:
    """The configuration from ``environ`` (``os.environ``); raises :class:`IdentityConfigError`."""
    raw = environ.get(MODE_VAR, "").strip().lower() or "local"
    if raw not in MODES:
        raise IdentityConfigError(f"${MODE_VAR} is {raw!r}; expected one of {', '.join(MODES)} "
                                  "(unset means local)")
    mode: Mode = raw  # type: ignore[assignment]  # checked against MODES just above
    if mode != "proxy":
        return IdentityConfig(mode)
    header = environ.get(HEADER_VAR, "").strip()
    secret = environ.get(SECRET_VAR, "")
    if not header:
        raise IdentityConfigError(f"${MODE_VAR}=proxy needs ${HEADER_VAR}: the header in which the "
                                  "proxy names the user (e.g. X-Remote-User)")
    if not _is_token(header):
        raise IdentityConfigError(f"${HEADER_VAR} is {header!r}; expected a header name "
                                  "(letters, digits and '-')")
    if header.lower() == SECRET_HEADER.lower():
        raise IdentityConfigError(f"${HEADER_VAR} cannot be {SECRET_HEADER}, which carries the secret")
    if len(secret) < MIN_SECRET_LENGTH:
        raise IdentityConfigError(f"${MODE_VAR}=proxy needs ${SECRET_VAR}, at least {MIN_SECRET_LENGTH} "
                                  f"characters, which the proxy sends in {SECRET_HEADER}")
    return IdentityConfig(mode, header, secret)


def proxy_user(headers: Mapping[str, str] | Iterable[tuple[str, str]],
               config: IdentityConfig) -> User | Refusal:
    """The user a request from the trusted proxy names, or why it is refused.

    ``headers`` is a mapping or the request's (name, value) pairs, each value as the HTTP server
    hands it over: Starlette (Streamlit 1.67's server), Tornado and WSGI servers all decode
    header bytes as Latin-1, one character a byte, while a proxy sends a name's UTF-8 bytes
    (nginx's ``$remote_user`` is the bytes the browser put in its Basic credentials), so the
    name is decoded here as UTF-8, and a value that is not UTF-8 is refused, never guessed at.
    Names are matched without regard to case (HTTP says they are case-insensitive, and the
    servers in between change their case); a secret or user header sent twice is refused, since
    which copy a server keeps varies."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    seen: dict[str, list[str]] = {}
    for k, v in pairs:
        seen.setdefault(str(k).lower(), []).append(str(v))
    secret = seen.get(SECRET_HEADER.lower(), [])
    if not secret:
        return Refusal(f"the request did not come through the studio's proxy (no {SECRET_HEADER} header)")
    sent = wire_bytes(secret[0])
    if len(secret) > 1 or sent is None or not hmac.compare_digest(sent, config.proxy_secret.encode()):
        return Refusal(f"the request's {SECRET_HEADER} does not match the studio's proxy secret")
    names = seen.get(config.user_header.lower(), [])
    if not names:
        return Refusal(f"the proxy sent no {config.user_header} header naming the user")
    if len(names) > 1:
        return Refusal(f"the proxy sent {config.user_header} {len(names)} times")
    if wire_bytes(names[0]) is None:
        return Refusal(f"the {config.user_header} header holds characters beyond Latin-1, which no HTTP "
                       "server hands over for the bytes it received")
    name = header_text(names[0])
    if name is None:
        return Refusal(f"the proxy's {config.user_header} header is not UTF-8 text (a proxy must send "
                       "the user's name as UTF-8)")
    found = fit_name(name)
    if isinstance(found, UnfitName):
        return Refusal(f"the proxy's {config.user_header} header {found.problem}")
    return User(found, "proxy")


def wire_bytes(value: str) -> bytes | None:
    """The bytes of a header value as the HTTP server handed it (one Latin-1 character a byte);
    None for a character beyond Latin-1, which no server hands over for a received byte."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return None


def header_text(value: str) -> str | None:
    """A header value as received, decoded as UTF-8 (None: it is not UTF-8)."""
    raw = wire_bytes(value)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def oidc_user(claims: Mapping[str, object]) -> User | Refusal:
    """The user of an OpenID Connect token's claims (``st.user``): ``email``, else ``sub``.

    The claims come decoded from the token's JSON, so a name is already text."""
    for claim in ("email", "sub"):
        value = claims.get(claim)
        if isinstance(value, str) and value:
            found = fit_name(value)
            if isinstance(found, UnfitName):
                return Refusal(f"the token's {claim} claim {found.problem}")
            return User(found, "oidc")
    return Refusal("the token carries neither an email nor a sub claim")


def _is_token(name: str) -> bool:
    return all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
