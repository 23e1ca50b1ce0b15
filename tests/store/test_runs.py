"""RunStore queries list rows in one total order: pages map clicks back by position."""
from __future__ import annotations

import random

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.runs import error_table
from cblue_core.store.workspace import connect


@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    yield w
    w.close()


def run_with(ws, cmeee_file, rows):
    ingest_file(ws, cmeee_file)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    return ws.runs.create(did, "r", source="test", predictions=[], metrics={}, errors=error_table(rows))


def test_counts_break_ties_by_name(ws, cmeee_file):
    rows = [{"idx": 0, "category": c, "tags": [t]} for c, t in
            [("spurious", "b"), ("missed", "a"), ("missed", "c"), ("boundary", "c"), ("spurious", "a")]]
    run_id = run_with(ws, cmeee_file, rows)
    assert list(ws.runs.error_counts(run_id).items()) == [("missed", 2), ("spurious", 2), ("boundary", 1)]
    assert list(ws.runs.tag_counts(run_id).items()) == [("a", 2), ("c", 2), ("b", 1)]


def text(v) -> str:
    return v if isinstance(v, str) else ""


def test_error_rows_order_is_total_whatever_the_insert_order(ws, cmeee_file):
    rows = [
        {"idx": 1, "category": "spurious", "pred_label": "dis", "pred_start": 5, "pred_end": 6},
        {"idx": 1, "category": "spurious", "pred_label": "sym", "pred_start": 2, "pred_end": 3},
        {"idx": 1, "category": "missed", "gold_label": "dru", "gold_start": 4, "gold_end": 7},
        {"idx": 1, "category": "correct", "gold_label": "sym", "pred_label": "sym", "gold_start": 9,
         "gold_end": 10, "pred_start": 9, "pred_end": 10},
        {"idx": 0, "category": "missed", "gold_label": "bod", "gold_start": 0, "gold_end": 2},
        {"idx": 0, "category": "spurious", "pred_label": "bod", "pred_start": 0, "pred_end": 2},
    ]
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    run_id = run_with(ws, cmeee_file, shuffled * 50)   # many rows: several threads aggregate
    listed = ws.runs.error_rows(run_id, limit=1000)
    first = [(r.idx, r.category, text(r.gold_label), text(r.pred_label))
             for r in listed.itertuples()][::50]
    assert first == [(0, "missed", "bod", ""), (0, "spurious", "", "bod"), (1, "spurious", "", "sym"),
                     (1, "missed", "dru", ""), (1, "spurious", "", "dis"), (1, "correct", "sym", "sym")]
    assert listed.equals(ws.runs.error_rows(run_id, limit=1000))


def test_rows_differing_only_in_tags_keep_one_order(ws, cmeee_file):
    rows = [{"idx": 0, "category": "spurious", "pred_label": "x", "tags": [t]} for t in ("nested", "b", "a")]
    run_id = run_with(ws, cmeee_file, rows * 40)
    assert [list(t) for t in ws.runs.error_rows(run_id, limit=1000)["tags"]][::40] == [["a"], ["b"], ["nested"]]
