"""Data and user strings made inert for Streamlit's Markdown: one module that every page and
helper imports (the identity gate too, which runs before the rest of the common helpers)."""
from __future__ import annotations

import re

from cblue_core.render.bidi import isolate

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
# What GFM's autolink extension starts a link at: a scheme, "www." or the "@" of an address.
_AUTOLINK = re.compile(r"(?i)(?:https?|ftp|mailto|xmpp)(?=:)|www(?=\.)|@(?=\w)")


def md(value) -> str:
    """Any data or user string made inert for Streamlit's Markdown (messages, captions, labels):
    every ASCII punctuation character backslash-escaped, so no link, image, HTML, code, LaTeX or
    colour directive can come from data; and a zero-width space inside ``http``/``www``/``@``,
    because GitHub-flavoured Markdown turns bare URLs and e-mail addresses into links even when
    their punctuation is escaped. Its direction is isolated (:func:`cblue_core.render.bidi.isolate`):
    a U+202E in a file name does not reverse the rest of the message."""
    text = isolate("" if value is None else str(value))
    text = _AUTOLINK.sub(lambda m: m.group(0)[:1] + "\u200b" + m.group(0)[1:], text)
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


# Letters and digits (any script) joined by single `_`, `.` or `-`: an `_` between two letters
# opens no emphasis, and without `:`, `@`, `/`, `<`, `[` or `www.` no link forms.
_MD_NAME = re.compile(r"[^\W_]+(?:[_.\-][^\W_]+)*")


def md_name(value) -> str:
    """A file or identifier-like name (``CMeEE_test.json``) shown as it is when Markdown can give
    it no meaning; anything else goes through :func:`md`. Safe for any value, like ``md``."""
    text = "" if value is None else str(value)
    if _MD_NAME.fullmatch(text) and "www." not in text.lower():
        return isolate(text)
    return md(text)
