"""Stored values as plain terminal text: what the command line prints of a name, a reason, a
slice or a dataset goes through :func:`terminal_text`, so that a value cannot start a line of its
own (a forged audit event), move the cursor or recolour the screen (an ESC sequence), or reorder
what the reader sees (a bidi override).

Control (Cc: newlines, ESC, NUL, the C1 range), format (Cf: bidi, zero-width) and line or
paragraph separator (Zl, Zp) characters come out as the visible escapes Python writes them with
(``\\n``, ``\\x1b``, ``\\u202e``). A backslash is left as it is: Windows paths stay readable,
and a literal ``\\n`` in a value still cannot break a line.
"""
from __future__ import annotations

import unicodedata
from typing import Final

# Cs: a lone surrogate cannot even be encoded for printing.
ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
SHORT_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def terminal_text(value: object) -> str:
    """``value`` (a ``str``, or anything ``str()`` makes one of) with every character that would
    act on the terminal written as an escape; linear in its length.

    >>> terminal_text("ok\\n2026-12-04 09:00:00 root done")
    'ok\\\\n2026-12-04 09:00:00 root done'
    >>> terminal_text("abc\\u202edef")
    'abc\\\\u202edef'
    """
    text = value if isinstance(value, str) else str(value)
    # isprintable() is False for every escaped category (and a few kept ones, such as U+3000):
    # most values take this test only, in C.
    if text.isprintable():
        return text
    return "".join(map(_escaped, text))


def terminal_cell(value: object) -> object:
    """A table cell for ``DataFrame.to_string``, which escapes newlines but not ESC or bidi
    characters, in cells and in the strings of list cells alike: a string escaped, a list's
    (or array's) strings escaped, a number or None as it is."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, (list, tuple)):
        return [terminal_cell(v) for v in value]
    if getattr(value, "ndim", 0) == 1:     # a numpy array, as DuckDB hands a LIST column over
        return terminal_cell(value.tolist())  # type: ignore[attr-defined]
    return value


def _escaped(c: str) -> str:
    if unicodedata.category(c) not in ESCAPED_CATEGORIES:
        return c
    if c in SHORT_ESCAPES:
        return SHORT_ESCAPES[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
