"""The Errors rows list over the whole selection (caption, CSV of every row), and the
training-records filter on Errors, Compare and the Runs table, under AppTest."""
from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.common import md
from app_pages.errors_tabs.rows import selection_csv
from cblue_core.store.error_selection import ErrorSelection
from cblue_core.store.training_sets import TrainingSet
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import opened, taxonomy_click
from tests.store.many_errors import EXAMPLES, add_other_run, build, error_rows, inputs, seen, seen_by_other


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    db, run_id = build(tmp_path_factory.mktemp("errors_selection"))
    other = add_other_run(db)
    ws = connect(db)
    ws.slices.save("late", "idx >= 1200", "CMeEE")
    did = ws.runs.get(run_id).dataset_id
    imported = ws.runs.create(did, "imported", source="import", predictions=inputs(ws, did),
                              metrics={"headline": "f1", "metrics": {"f1": 0.5}}, training=TrainingSet(False))
    per_label = {"sym": {"tp": 3, "fp": 1, "fn": 1, "precision": 0.75, "recall": 0.75, "f1": 0.75, "support": 4}}
    ws.runs.save_training_set(other, TrainingSet(True, "n", 300, {"headline": "f1", "metrics": {"f1": 0.25},
                                                                  "per_label": per_label, "examples": 1200}),
                              [i for i in range(EXAMPLES) if seen_by_other(i)])
    ws.close()
    return {"db": db, "run": run_id, "other": other, "imported": imported}


@pytest.fixture
def open_page(many, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(many["db"]))
    return opened


def click_bar(at: AppTest, category: str) -> AppTest:
    """A click on the category's row of the taxonomy; "correct": the button that lists them."""
    if category == "correct":
        return at.button(key="err_tax_correct").click().run()
    at.session_state["err_tax"] = taxonomy_click(at, category)
    return at.run()


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def test_rows_caption_says_when_the_list_shows_part(open_page, many):
    at = click_bar(open_page("pages/errors.py", {"run": str(many["run"]), "tab": "taxonomy"}), "correct")
    assert not at.exception, at.exception
    assert "showing the first 2,000 of 3,000 rows in 1,500 examples" in captions(at)
    assert len(at.dataframe(key="err_rows").value) == 2000
    button = next(b for b in at.get("download_button") if "err_rows_csv" in b.proto.id)
    assert button.proto.label == "Download all 3,000 rows (CSV)"
    at = click_bar(at, "missed")
    assert "500 rows in 500 examples" in captions(at)      # all shown: no "showing"


def test_the_csv_holds_the_whole_selection(many):
    data = selection_csv(str(many["db"]), many["run"], ErrorSelection(category="correct"))
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    assert len(rows) == 3000 and {r["category"] for r in rows} == {"correct"}
    assert len({r["idx"] for r in rows}) == 1500 and rows[0]["tags"] == ""


def test_a_slice_beyond_the_first_2000_rows_lists_all_its_errors(open_page, many):
    at = open_page("pages/errors.py", {"run": str(many["run"]), "tab": "slices"})
    at.selectbox(key="err_slice").set_value("late").run()
    assert not at.exception, at.exception
    assert "300 rows in 300 examples" in captions(at) and "Filter: slice = late" in captions(at)
    listed = at.dataframe(key="err_rows").value
    assert len(listed) == 300 and listed["idx"].min() == 1200 and "correct" not in set(listed["category"])


def test_training_records_filter_reaches_tabs_and_rows(open_page, many):
    at = open_page("pages/errors.py", {"run": str(many["run"]), "tab": "taxonomy"})
    radio = at.radio(key="err_seen")
    assert not radio.disabled and radio.value == "all"
    radio.set_value("unseen only").run()
    assert not at.exception, at.exception
    unseen = sum(1 for i in range(EXAMPLES) if not seen(i))
    assert any(f"On the {unseen:,} unseen examples" in m.value for m in at.markdown)
    at = click_bar(at, "missed")
    missed = sum(1 for r in error_rows() if r["category"] == "missed" and not seen(r["idx"]))
    assert f"{missed} rows in {missed} examples" in captions(at)
    assert "Filter: category = missed, training records = unseen only" in captions(at)
    assert not any(seen(i) for i in at.dataframe(key="err_rows").value["idx"])
    table = at.dataframe(key="err_tax").value
    # the table holds the error categories; the correct rows are counted apart
    assert dict(zip(table["error category"], table["error rows"])) == Counter(
        r["category"] for r in error_rows() if not seen(r["idx"]) and r["category"] != "correct")


def test_training_records_filter_is_unknown_for_an_import(open_page, many):
    at = open_page("pages/errors.py", {"run": str(many["run"])})
    at.radio(key="err_seen").set_value("unseen only").run()
    at.selectbox(key="err_run").set_value(many["imported"]).run()
    assert not at.exception, at.exception
    assert at.radio(key="err_seen").disabled and at.radio(key="err_seen").value == "all"
    assert not any("unseen examples" in m.value for m in at.markdown)
    assert any("unknown" in c and "declares no training records" in c for c in captions(at))


def test_compare_keeps_the_examples_neither_model_saw(open_page, many):
    at = open_page("pages/compare.py", {"a": str(many["run"]), "b": str(many["other"])})
    assert not at.exception, at.exception
    assert at.dataframe[0].value.iloc[0]["examples"] == EXAMPLES
    at.radio(key="cmp_seen").set_value("unseen only").run()
    assert not at.exception, at.exception
    overall = at.dataframe[0].value.iloc[0]
    neither = sum(1 for i in range(EXAMPLES) if not seen(i) and not seen_by_other(i))
    assert overall["slice"] == "unseen examples" and overall["examples"] == neither
    assert any(md("either model's training records (m and n)") in c for c in captions(at))


def test_runs_table_shows_the_unseen_score(open_page, many):
    at = open_page("pages/runs.py")
    assert not at.exception, at.exception
    table = at.dataframe[0].value.set_index("run")
    assert table.loc[many["other"], "unseen score (n)"] == "0.2500 (1,200)"
    assert table.loc[many["imported"], "unseen score (n)"] == "unknown"


def test_the_unseen_scores_stored_with_the_run_are_shown_without_rescoring(open_page, many):
    at = open_page("pages/errors.py", {"run": str(many["other"]), "tab": "labels"})
    at.radio(key="err_seen").set_value("unseen only").run()
    assert not at.exception, at.exception
    assert any(m.value.startswith("**On the 1,200 unseen examples**: f1 = 0.2500") for m in at.markdown)
    table = next(d.value for d in at.dataframe if "label" in d.value.columns)
    assert len(table) == 1 and table["label"][0].endswith("(sym)") and list(table["f1"]) == [0.75]
