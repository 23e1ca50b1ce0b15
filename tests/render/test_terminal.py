"""terminal_text: what acts on a terminal comes out as a visible escape, the rest as it is."""
from __future__ import annotations

import time

import numpy as np
import pytest

from cblue_core.render.terminal import terminal_cell, terminal_text


@pytest.mark.parametrize(("value", "shown"), [
    ("李伟 josé O'Brien", "李伟 josé O'Brien"),
    ("a\u3000b\u00a0c", "a\u3000b\u00a0c"),            # spaces other than ASCII's are kept
    ("C:\\models\\new", "C:\\models\\new"),             # a backslash is kept: paths stay readable
    ("a\nb\r\tc", "a\\nb\\r\\tc"),
    ("\x00\x1b[2J\x7f\x85", "\\x00\\x1b[2J\\x7f\\x85"),
    ("abc\u202edef\u2066\u200b\ufeff", "abc\\u202edef\\u2066\\u200b\\ufeff"),
    ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
    ("tag\U000e0041", "tag\\U000e0041"),
    ("\ud800", "\\ud800"),                               # a lone surrogate, which print() cannot encode
    (42, "42"),
])
def test_what_acts_on_a_terminal_is_escaped(value, shown):
    assert terminal_text(value) == shown
    assert terminal_text(value).isprintable() or "\u3000" in shown or "\u00a0" in shown


def test_cells_of_a_table_are_escaped_lists_included():
    assert terminal_cell("a\nb") == "a\\nb"
    assert terminal_cell(["x\u202e", 3]) == ["x\\u202e", 3]
    assert terminal_cell(np.array(["y\x1b"])) == ["y\\x1b"]
    assert terminal_cell(None) is None and terminal_cell(1.5) == 1.5


def test_linear_in_the_length():
    start = time.process_time()
    out = terminal_text("\u202e\n" * 200_000)
    assert len(out) == 1_600_000 and time.process_time() - start < 5
