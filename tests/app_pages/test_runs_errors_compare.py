"""Runs, Errors and Compare pages under AppTest, on a workspace with two CMeEE runs."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP, html_of, matrix_click, taxonomy_click
from tests.conftest import SAMPLE_DATA


@pytest.fixture
def open_page(runs_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(runs_db["db"]))

    def open_page(path: str, query: dict | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.run()
        at.switch_page(path)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        return at.run()
    return open_page


def test_runs_page_lists_runs_with_intervals(open_page, runs_db):
    at = open_page("pages/runs.py")
    assert not at.exception and at.title[0].value == "Runs"
    table = at.dataframe[0].value
    assert set(table["name"]) == {"model A", "model B"}
    row = table[table["name"] == "model A"].iloc[0]
    assert row["metric"] == "f1" and row["95% CI low"] <= row["value"] <= row["95% CI high"]
    assert any(b.label.startswith("Export CMeEE_dev_predictions.json") for b in at.get("download_button"))


def test_confusion_cell_clicks_through_to_examples(open_page, runs_db):
    gold, pred = runs_db["cell"]
    at = open_page("pages/errors.py", {"run": str(runs_db["a"]), "tab": "matrix"})
    assert not at.exception
    # what a click on the (gold, pred) square sends back
    key, click = matrix_click(at, "CMeEE", gold, pred)
    at.session_state[key] = click
    at.run()
    assert not at.exception
    rows = at.dataframe(key="err_rows").value
    assert len(rows) >= 1 and set(rows["gold_label"]) == {gold} and set(rows["pred_label"]) == {pred}
    # clicking a listed row opens the example with gold and prediction together
    at.session_state["err_rows"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    body = html_of(at)
    assert rows.iloc[0]["gold_text"] in body
    assert at.query_params["example"] == str(int(rows.iloc[0]["idx"]))


def test_sigma_row_selects_a_whole_gold_label(open_page, runs_db):
    gold, _ = runs_db["cell"]
    at = open_page("pages/errors.py", {"run": str(runs_db["a"]), "tab": "matrix"})
    key, click = matrix_click(at, "CMeEE", gold, None)
    at.session_state[key] = click
    at.run()
    rows = at.dataframe(key="err_rows").value
    assert set(rows["gold_label"]) == {gold} and len(set(rows["pred_label"])) >= 1


def test_taxonomy_bar_clicks_through(open_page, runs_db):
    at = open_page("pages/errors.py", {"run": str(runs_db["a"]), "tab": "taxonomy"})
    at.session_state["err_tax"] = taxonomy_click(at, "missed")
    at.run()
    assert not at.exception, at.exception
    shown = [c.value for c in at.caption] + [i.value for i in at.info]
    assert any(c == "Filter: category = missed" for c in shown), shown
    rows = at.dataframe(key="err_rows").value
    assert len(rows) and set(rows["category"]) == {"missed"}


def test_deep_link_reopens_run_and_example(open_page, runs_db):
    at = open_page("pages/errors.py", {"run": str(runs_db["b"]), "example": "2"})
    assert not at.exception
    assert at.selectbox(key="err_run").value == runs_db["b"]
    assert "Example 2" in " ".join(m.value for m in at.markdown)


def test_save_slice_and_see_its_score(open_page, runs_db):
    at = open_page("pages/errors.py", {"run": str(runs_db["a"]), "tab": "slices"})
    at.text_input(key="err_slice_name").input("nested")
    at.text_input(key="err_slice_pred").input("nesting_depth >= 2")
    at.button(key="err_slice_save").click().run()
    assert not at.exception and any("Saved slice" in s.value for s in at.success)
    slices = next(d for d in at.dataframe if "slice" in d.value.columns).value
    assert list(slices["slice"]) == ["nested"] and slices["examples"][0] > 0
    at.text_input(key="err_slice_name").input("broken")
    at.text_input(key="err_slice_pred").input("no_such_column > 1")
    at.button(key="err_slice_save").click().run()
    assert any("Not saved" in e.value for e in at.error)


def test_compare_page(open_page, runs_db):
    at = open_page("pages/compare.py", {"a": str(runs_db["a"]), "b": str(runs_db["b"])})
    assert not at.exception
    table = at.dataframe[0].value
    overall = table.iloc[0]
    assert overall["slice"] == "all examples"
    assert overall["CI low"] <= overall["B − A"] <= overall["CI high"]
    assert re.fullmatch(r"p (< 0\.001|= [01]\.\d{3})", overall["p"])
    # the whole interval is on the page, not cut off in a metric tile
    line = next(m.value for m in at.markdown if m.value.startswith("**B − A**"))
    assert f"95% CI [{overall['CI low']:+.4f}, {overall['CI high']:+.4f}]" in line
    assert any(r.key == "cmp_list" for r in at.radio)
    at.radio(key="cmp_list").set_value("both wrong").run()
    assert not at.exception
    # gold and both predictions carry error marks (the marks' legend names the categories)
    blocks = [e.proto.body for e in at.get("html")]
    assert len(blocks) == 3 and sum("cbr-m-" in b for b in blocks) >= 2


def test_corrected_gold_shows_errors_that_disappear(tmp_path, monkeypatch):
    """Correct the gold of one example so that run A's spurious entity becomes right: the
    Errors page's Corrected gold tab shows the score change and the error that disappears."""
    from cblue_core.annotation.model import Annotation

    db = tmp_path / "gold.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    run = import_run(ws, did, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", name="A").run_id
    spurious = ws.runs.error_rows(run, category="spurious").iloc[0]
    idx = int(spurious.idx)
    current, revision = ws.annotations.current(did, idx)
    from cblue_core.records import Span
    added = Span(int(spurious.pred_start), int(spurious.pred_end), spurious.pred_label, spurious.pred_text)
    ws.annotations.save(did, idx, Annotation(spans=current.spans + (added,)), author="tester",
                       reason="the model was right", base_revision=revision)
    ws.close()
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/errors.py")
    at.query_params["run"] = str(run)
    at.query_params["tab"] = "gold"
    at.run()
    assert not at.exception
    deltas = [m for m in at.metric if m.label.startswith("f1 on current")]
    assert deltas and deltas[0].delta.startswith("+")
    fixed = [d.value for d in at.dataframe if "category" in d.value.columns and len(d.value)]
    assert any((f["category"] == "spurious").any() and (f["idx"] == idx).any() for f in fixed)


def test_compare_reads_the_kept_evaluations(open_page, runs_db, monkeypatch):
    """A first Compare re-scored both runs (1.7 s of 1.9 s for two real-size CMeEE runs): it now
    reads the evaluations the workspace keeps for them, as the Errors page does."""
    import cblue_core.runs.record
    from app_pages.common import run_evaluation_cached
    from app_pages.compare import _comparison
    from cblue_core.runs.derived import run_evaluation_kept
    from tests.app_pages.conftest import count_calls

    ws = connect(runs_db["db"])
    for run_id in (runs_db["a"], runs_db["b"]):
        run_evaluation_kept(ws, run_id)
    ws.close()
    _comparison.clear()                 # nothing from the tests before: this open is a first one
    run_evaluation_cached.clear()
    scoring = count_calls(monkeypatch, cblue_core.runs.record, "evaluate")
    at = open_page("pages/compare.py", {"a": str(runs_db["a"]), "b": str(runs_db["b"])})
    assert not at.exception, at.exception
    assert at.dataframe[0].value.iloc[0]["slice"] == "all examples"
    assert scoring["n"] == 0
