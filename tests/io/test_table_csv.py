"""A table as CSV for a spreadsheet: Chinese text readable, list cells joined, no cell that a
spreadsheet would run as a formula."""
from __future__ import annotations

import csv
import io

import pandas as pd

from cblue_core.io.table_csv import inert, table_csv


def test_formulas_become_text_and_lists_are_joined():
    frame = pd.DataFrame({"idx": [0, 1], "gold_text": ["=HYPERLINK(\"http://x\")", "头痛"],
                          "tags": [["nested", "x"], []], "pred_text": [None, "@SUM(A1)"]})
    data = table_csv(frame)
    assert data.startswith("\ufeff".encode())          # Excel reads UTF-8 with its mark
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert [r["gold_text"] for r in rows] == ["'=HYPERLINK(\"http://x\")", "头痛"]
    assert [r["tags"] for r in rows] == ["nested|x", ""]
    assert [r["pred_text"] for r in rows] == ["", "'@SUM(A1)"]
    assert [r["idx"] for r in rows] == ["0", "1"]


def test_inert_leaves_plain_values():
    assert inert(3) == 3 and inert(None) is None and inert("头痛") == "头痛"
    assert inert("-1") == "'-1" and inert("+x") == "'+x"
