"""The one user-name rule the proxy, OIDC, the store and the command line share."""
from __future__ import annotations

import unicodedata

import pytest

from cblue_core.auth.names import (
    MAX_NAME_LENGTH,
    NameRefused,
    UnfitName,
    checked_name,
    fit_name,
    name_problem,
)


@pytest.mark.parametrize("name", ["李伟", "josé", "li.wei", "O'Brien", "王 芳", "x" * MAX_NAME_LENGTH,
                                  "a\u3000b", "li@example.org"])
def test_fit_names_come_back_as_they_are(name):
    assert name_problem(name) == "" and fit_name(name) == name and checked_name(name) == name


@pytest.mark.parametrize(("name", "problem"), [
    ("", "is empty"),
    ("  ", "is empty"),
    ("x" * (MAX_NAME_LENGTH + 1), f"is longer than {MAX_NAME_LENGTH} characters"),
    ("li\nwei", "contains U+000A, a control"),
    ("li\u2028wei", "contains U+2028 LINE SEPARATOR"),
    ("li\u2029wei", "contains U+2029 PARAGRAPH SEPARATOR"),
    ("li\u202ewei", "contains U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("li\u200bwei", "contains U+200B ZERO WIDTH SPACE"),
    ("li\x85wei", "contains U+0085"),
    ("li\x1b[2Jwei", "contains U+001B"),
    (" ann", "begins with a space (U+0020 SPACE)"),
    ("ann ", "ends with a space"),
    ("ann\u3000", "ends with a space (U+3000 IDEOGRAPHIC SPACE)"),
])
def test_unfit_names_are_refused_saying_why_never_trimmed(name, problem):
    assert problem in name_problem(name)
    assert fit_name(name) == UnfitName(name_problem(name))
    with pytest.raises(NameRefused, match="a user name " + name_problem(name)[:10]):
        checked_name(name)


def test_a_decomposed_name_is_compared_composed():
    decomposed = unicodedata.normalize("NFD", "josé")
    assert decomposed != "josé" and checked_name(decomposed) == "josé"


def test_the_length_limit_counts_the_composed_form():
    name = unicodedata.normalize("NFD", "é") * MAX_NAME_LENGTH     # 512 code points, 256 composed
    assert checked_name(name) == "é" * MAX_NAME_LENGTH
