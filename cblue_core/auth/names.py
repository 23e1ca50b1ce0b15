"""The one rule for a user name, whoever gives it: the trusted proxy, an OpenID Connect token,
``users add`` / ``set-role`` and the Admin page all ask here, so that a name one of them accepts
is never refused by another (a proxy user who could never be given a role) and a name is
compared in one form everywhere.

A fit name is in Unicode normal form NFC (a decomposed ``josé`` from one source must meet the
composed ``josé`` another stored), at most :data:`MAX_NAME_LENGTH` characters, holds no control,
format (bidi overrides, zero-width characters) or line/paragraph separator character, and
neither begins nor ends with a space: such a name is refused, saying why, never trimmed, since a
trimmed ``" ann"`` would silently act as ``ann``.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final

# Long enough for any e-mail address (254) an OpenID Connect provider sends as the name.
MAX_NAME_LENGTH: Final = 256

# Cc: C0/C1 controls (newline, NUL, ESC); Cf: format characters (U+202E, U+200B); Zl/Zp: the
# line and paragraph separators. Each would forge a line of the audit trail or reorder what a
# reader sees.
REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp"})


@dataclass(frozen=True)
class UnfitName:
    """Why a name cannot be a user's: ``problem`` completes "the name ..." ("is empty")."""

    problem: str


class NameRefused(ValueError):
    """A name :func:`checked_name` refuses; the message says why."""


def canonical_name(name: str) -> str:
    """The form in which names are compared and stored (NFC)."""
    return unicodedata.normalize("NFC", name)


def name_problem(name: str) -> str:
    """What makes ``name`` unfit to be a user's ('' when it is fit), on its NFC form."""
    name = canonical_name(name)
    if not name.strip():
        return "is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is longer than {MAX_NAME_LENGTH} characters ({len(name):,})"
    bad = next((c for c in name if unicodedata.category(c) in REFUSED_CATEGORIES), None)
    if bad is not None:
        return f"contains {character(bad)}, a control, format or line-separator character"
    if name[0].isspace():
        return f"begins with a space ({character(name[0])})"
    if name[-1].isspace():
        return f"ends with a space ({character(name[-1])})"
    return ""


def fit_name(name: str) -> str | UnfitName:
    """``name`` in its canonical form, or why it is unfit."""
    problem = name_problem(name)
    return UnfitName(problem) if problem else canonical_name(name)


def checked_name(name: str) -> str:
    """``name`` in its canonical form; raises :class:`NameRefused` ("a user name is empty")."""
    found = fit_name(name or "")
    if isinstance(found, UnfitName):
        raise NameRefused(f"a user name {found.problem}")
    return found


def character(c: str) -> str:
    """``c`` as a reader can identify it without it acting: ``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    label = unicodedata.name(c, "")
    return f"U+{ord(c):04X}" + (f" {label}" if label else "")
