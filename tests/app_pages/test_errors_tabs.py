"""The Errors page's Per label, Error taxonomy, Buckets and Corrected gold tabs: the tables keep
every column, the bars carry their numbers, "correct" stands apart from the error categories, and
bucket panels are titled (relation tasks included)."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.errors_tabs.gold import COLUMNS as GOLD_COLUMNS
from app_pages.errors_tabs.gold import changes_frame
from app_pages.errors_tabs.labels import COLUMNS, per_label_frame
from app_pages.errors_tabs.taxonomy import split_correct
from cblue_core.render.base import esc
from tests.app_pages.conftest import APP, sample_runs_db


def test_per_label_table_lists_scores_then_counts_and_adds_support():
    frame = per_label_frame({"a": {"tp": 3, "fp": 1, "fn": 2, "precision": 0.75, "recall": 0.6, "f1": 0.667,
                                   "extra": 1}}, display=str.upper)
    assert list(frame.columns) == [*COLUMNS, "extra"]
    assert frame.iloc[0]["label"] == "A" and frame.iloc[0]["support"] == 5


def test_correct_rows_stand_apart_from_the_error_categories():
    correct, errors = split_correct({"missed": 5, "correct": 9, "spurious": 2, "correct_term": 1})
    assert correct == {"correct": 9, "correct_term": 1} and list(errors) == ["missed", "spurious"]


def test_corrected_gold_table_keeps_its_columns_whatever_the_first_row():
    rows = [{"idx": 3, "category": "spurious", "pred_label": "dis", "pred_text": "头痛"},
            {"idx": 4, "category": "wrong_boundary", "gold_label": "sym", "pred_label": "sym",
             "gold_text": "头痛欲裂", "pred_text": "头痛"}]
    frame = changes_frame(rows)
    assert list(frame.columns) == list(GOLD_COLUMNS)
    assert frame.iloc[1]["gold_text"] == "头痛欲裂" and frame.iloc[1]["gold_label"] == "sym"


@pytest.fixture(scope="module")
def tabs_db(tmp_path_factory):
    return sample_runs_db(tmp_path_factory, ["CMeIE", "CHIP-CTC"])


@pytest.fixture
def open_tab(tabs_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(tabs_db["db"]))

    def open_tab(task: str, tab: str) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()
        at.switch_page("pages/errors.py")
        at.query_params["run"] = str(tabs_db[task])
        at.query_params["tab"] = tab
        at.run()
        assert not at.exception, at.exception
        return at
    return open_tab


def html_block(at: AppTest, text: str) -> str:
    return next(b for b in (e.proto.body for e in at.get("html")) if text in b)


def test_per_label_bars_carry_their_f1_and_the_table_every_column(open_tab):
    at = open_tab("CHIP-CTC", "labels")
    table = at.dataframe[0].value
    assert list(table.columns)[:len(COLUMNS)] == list(COLUMNS)
    assert not at.get("plotly_chart")        # the page's first tab needs no Plotly bundle
    bars = html_block(at, "F1 per label")
    assert bars.count('class="cbr-bars-r"') == len(table)
    for label, f1 in zip(table["label"], table["f1"]):
        assert f'<div class="cbr-bars-l">{esc(label)}</div>' in bars and f">{f1:.3f}<" in bars


def test_taxonomy_table_holds_errors_only_and_the_correct_rows_are_listed_apart(open_tab):
    at = open_tab("CMeIE", "taxonomy")
    assert not at.get("plotly_chart")             # no Plotly bundle for this tab
    table = at.dataframe(key="err_tax").value
    assert "correct" not in set(table["error category"]) and set(table["error category"]) <= {
        "wrong_predicate", "swapped", "argument_boundary", "missed", "spurious"}
    assert list(table["error rows"]) == sorted(table["error rows"], reverse=True)
    assert abs(table["share"].sum() - 1) < 1e-9
    assert "correct rows" in at.markdown[0].value
    at.button(key="err_tax_correct").click().run()
    rows = at.dataframe(key="err_rows").value
    assert len(rows) and set(rows["category"]) == {"correct"}


def test_relation_buckets_are_titled_panels(open_tab):
    at = open_tab("CMeIE", "buckets")
    assert not at.get("plotly_chart")
    panels = html_block(at, "cbr-bars-t")
    titles = set(re.findall(r'<div class="cbr-bars-t">([^<]*)</div>', panels))
    assert {"Triples per example", "Text length", "Argument nesting"} <= titles
    gold_items = [int(n.replace(",", "")) for n in re.findall(r"n=([\d,]+)", panels)]
    assert gold_items and min(gold_items) > 0
