"""The Annotate page's Review queue tab with a model run: the review reasons keep their place
(one run's "all runs wrong" ranked by the model's confidence, not all at 1), the run's "likely
gold errors" and "most uncertain" queues list their items in order with why, say how many
training records were left out, and open an item in the editor with the run's suggestions."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.store.workspace import connect
from tests.annotation.planted_qic import CLASSES, TIE, planted_run
from tests.app_pages.conftest import APP


@pytest.fixture(scope="module")
def review_db(tmp_path_factory):
    """KUAKE-QIC dev with three flipped labels and one model run (trained on record 17)."""
    folder = tmp_path_factory.mktemp("review")
    db = folder / "review.duckdb"
    ws = connect(db)
    try:
        _did, run_id = planted_run(ws, folder)
    finally:
        ws.close()
    return {"db": db, "run": run_id}


@pytest.fixture
def review_tab(review_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(review_db["db"]))
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["user_name"] = "alice"
    at.run()
    at.switch_page("pages/annotate.py")
    at.query_params["task"] = "KUAKE-QIC"
    at.query_params["split"] = "dev"
    at.run()
    at.session_state["ann_tab"] = "Review queue"
    return ok(at.run())


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def pick_queue(at: AppTest, queue: str) -> AppTest:
    at.selectbox(key="ann_rq_kind").set_value(queue)
    return ok(at.run())


def test_review_reasons_rank_one_runs_wrong_answers_by_its_confidence(review_tab):
    table = review_tab.dataframe[0].value
    wrong = table[table["reason"] == "all_runs_wrong"]
    assert list(wrong["idx"]) == [3, 17, 10] and list(wrong["score"]) == [0.97, 0.95, 0.92]
    assert "model confidence in its answer 0.97" in wrong["why"].iloc[0]


def test_likely_gold_errors_queue_in_order_with_reasons_and_training_left_out(review_tab, review_db):
    run = review_db["run"]
    options = review_tab.selectbox(key="ann_rq_kind").options
    assert [o.split(" (")[0] for o in options] == ["review reasons", "likely gold errors", "most uncertain"]
    at = pick_queue(review_tab, f"likely_gold_error:{run}")
    table = at.dataframe[0].value
    assert list(table["idx"]) == [3, 10]                 # 17 was trained on
    assert set(table["reason"]) == {"likely_gold_error"}
    assert table["why"].iloc[0].startswith("model gives 0.97 to 治疗方案, gold says ")
    caption = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "1 example(s) left out: the run's model was trained on them" in caption
    assert "all 2 items" in caption


def test_most_uncertain_queue_puts_the_near_tie_first(review_tab, review_db):
    at = pick_queue(review_tab, f"uncertain:{review_db['run']}")
    table = at.dataframe[0].value
    assert table["idx"].iloc[0] == TIE and table["reason"].iloc[0] == "uncertain"
    assert table["why"].iloc[0] == f"margin 0.03 between {CLASSES[TIE % 4]} and {CLASSES[(TIE + 1) % 4]}"
    assert 17 not in set(table["idx"])
    at.radio(key="ann_rq_measure").set_value("entropy")
    why = ok(at.run()).dataframe[0].value["why"]
    assert why.iloc[0].startswith("entropy ") and why.str.startswith("margin").sum() == 0


def test_opening_an_item_sets_the_example_and_the_suggestion_source(review_tab, review_db):
    run = review_db["run"]
    at = pick_queue(review_tab, f"likely_gold_error:{run}")
    at.selectbox(key=f"ann_rq_pick::likely_gold_error:{run}").set_value(1)
    ok(at.run())
    next(b for b in at.button if b.key == "ann_rq_open").click()
    ok(at.run())
    assert at.session_state["ann_tab"] == "Edit" and at.number_input(key="ann_example").value == 10
    assert at.session_state["ann_suggest_source"] == f"run:{run}"
    # the Edit tab opens on the item with the run's suggested label ready to use
    assert at.selectbox(key="ann_suggest_source").value == f"run:{run}"
    shown = " ".join(m.value for m in at.markdown)
    assert "Suggested label" in shown and "probability 0.9" in shown
    assert any(b.key == "ann_suggest_use_label" for b in at.button)


def test_each_queue_has_its_own_item_picker(review_tab, review_db):
    """One picker for every queue (options 0..99 each time) kept showing the first queue's item
    labels in Chromium after another queue was chosen."""
    run = review_db["run"]
    first = review_tab.selectbox(key="ann_rq_pick::reasons")
    assert first.options[0].startswith(f"#{review_tab.dataframe[0].value['idx'].iloc[0]} · ")
    at = pick_queue(review_tab, f"uncertain:{run}")
    picker = at.selectbox(key=f"ann_rq_pick::uncertain:{run}")
    assert picker.value == 0 and picker.options[0].startswith(f"#{TIE} · uncertain · margin 0.03")
    assert not [s for s in at.selectbox if s.key == "ann_rq_pick::reasons"]


def test_selecting_a_row_opens_it_with_the_suggestion_source(review_tab, review_db):
    run = review_db["run"]
    at = pick_queue(review_tab, f"likely_gold_error:{run}")
    at.session_state[f"ann_rq_table::likely_gold_error:{run}"] = {"selection": {"rows": [0], "columns": []}}
    ok(at.run())
    assert at.session_state["ann_tab"] == "Edit" and at.number_input(key="ann_example").value == 3
    assert at.session_state["ann_suggest_source"] == f"run:{run}"
