"""evaluation.error_row: the errors-table dict of each kind of taxonomy row (the store's errors
table and the Errors page read these keys)."""
from __future__ import annotations

from cblue_core.analysis.taxonomy import ErrorRow
from cblue_core.records import Span, Triple
from cblue_core.runs.evaluation import error_row


def test_span_row():
    row = ErrorRow(example=3, turn=1, category="wrong_type", tags=("x",),
                   gold=Span(0, 2, "sym", "头痛"), pred=Span(0, 2, "dis", "头痛"))
    assert error_row(row) == {"idx": 3, "turn": 1, "category": "wrong_type", "tags": ["x"],
                              "gold_label": "sym", "gold_start": 0, "gold_end": 2, "gold_text": "头痛",
                              "pred_label": "dis", "pred_start": 0, "pred_end": 2, "pred_text": "头痛"}


def test_relation_row_without_prediction():
    row = ErrorRow(example=0, category="missed", gold=Triple("肺炎", "临床表现", "发热"), pred=None)
    assert error_row(row) == {"idx": 0, "turn": -1, "category": "missed", "tags": [],
                              "gold_label": "临床表现", "gold_text": "肺炎 → 发热"}


def test_term_and_label_rows():
    term = ErrorRow(example=1, category="extra_term", gold=None, pred="高血压病", tags=("term_not_in_icd",))
    assert error_row(term) == {"idx": 1, "turn": -1, "category": "extra_term", "tags": ["term_not_in_icd"],
                               "pred_label": "高血压病", "pred_text": "高血压病"}
    label = ErrorRow(example=2, category="confusion", gold="0", pred="1")
    assert error_row(label) == {"idx": 2, "turn": -1, "category": "confusion", "tags": [],
                                "gold_label": "0", "gold_text": "0", "pred_label": "1", "pred_text": "1"}
    assert (label.cell, term.term) == ("0->1", "高血压病")
