"""Suggestions on the Annotate page's Edit tab under AppTest: a label (classification, from a
run with its probability), a pair label (CHIP-STS, a built-in model predicted live) and CMeIE
triples (from a run: accepted one by one, rejected, accepted all). Nothing is written before
Save; the saved event's provenance lists exactly the accepted items with their scores."""
from __future__ import annotations

import dataclasses

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.annotation.model import Annotation
from cblue_core.annotation.provenance import Suggestion, SuggestionSource
from cblue_core.runs.record import record_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP
from tests.app_pages.test_annotate import button, messages, ok
from tests.conftest import SAMPLE_DATA

PAGE = "pages/annotate.py"


@pytest.fixture(scope="module")
def sugg_db(tmp_path_factory):
    """The sample workspace with: a KUAKE-QIC run suggesting another label for examples 0 (0.8)
    and 1 (0.7);
    CMeIE example 0 saved without its first three triples, and a run predicting the original
    triples (scored); CHIP-STS example 0 saved with the label the built-in model does not give."""
    from cblue_core.models.loading import load_predictor

    db = tmp_path_factory.mktemp("suggest") / "suggest.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    out = {"db": db}

    qic = ws.datasets.find("KUAKE-QIC", "dev")
    gold = ws.datasets.examples(qic.dataset_id)
    other = next(c for c in ws.datasets.task_of(qic.dataset_id).label_codes if c != gold[0].label)
    preds = [dataclasses.replace(g, meta={}) for g in gold]
    preds[0] = dataclasses.replace(gold[0], label=other, meta={"probabilities": {other: 0.8, gold[0].label: 0.2}})
    second = next(c for c in ws.datasets.task_of(qic.dataset_id).label_codes if c != gold[1].label)
    preds[1] = dataclasses.replace(gold[1], label=second, meta={"probabilities": {second: 0.7}})
    out["qic"] = (qic.dataset_id, record_run(ws, qic.dataset_id, preds, name="qic model", source="model",
                                             n_boot=0).run_id, other)

    ie = ws.datasets.find("CMeIE", "dev")
    gold = ws.datasets.examples(ie.dataset_id)
    ex = gold[0]
    ws.annotations.save(ie.dataset_id, 0, Annotation(triples=tuple(ex.triples[3:])), author="setup",
                        base_revision=0)
    preds = [dataclasses.replace(g, meta={}) for g in gold]
    preds[0] = dataclasses.replace(ex, meta={"triple_scores": [0.9, 0.7, 0.5] + [0.99] * (len(ex.triples) - 3)})
    out["ie"] = (ie.dataset_id, record_run(ws, ie.dataset_id, preds, name="ie model", source="model",
                                           n_boot=0).run_id, list(ex.triples[:3]))

    sts = ws.datasets.find("CHIP-STS", "dev")
    ex = ws.datasets.example(sts.dataset_id, 0)
    predicted = load_predictor("chip-sts", task="CHIP-STS").predict([ex])[0]
    if ex.label == predicted.label:
        ws.annotations.save(sts.dataset_id, 0, Annotation(label="1" if predicted.label == "0" else "0"),
                            author="setup", base_revision=0)
    out["sts"] = (sts.dataset_id, predicted)
    ws.close()
    return out


@pytest.fixture
def open_page(sugg_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(sugg_db["db"]))

    def open_page(query: dict, source: str | None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["user_name"] = "alice"
        at.run()
        at.switch_page(PAGE)
        for k, v in query.items():
            at.query_params[k] = str(v)
        at.session_state["ann_suggest_source"] = source     # as the Review tab's queues set it
        return ok(at.run())
    return open_page


def events(sugg_db, did: int, idx: int = 0):
    from app_pages.common import shared_workspace

    return shared_workspace(str(sugg_db["db"])).cursor().annotations.events(did, idx)


def save(at: AppTest) -> AppTest:
    ok(button(at, "ann_save").click().run())
    assert any("Saved example 0" in s for s in messages(at, "success")), messages(at, "error")
    return at


def test_a_run_suggests_a_label_with_its_probability_and_the_save_records_it(open_page, sugg_db):
    did, run_id, other = sugg_db["qic"]
    at = open_page({"task": "KUAKE-QIC", "split": "dev", "example": 0}, f"run:{run_id}")
    assert at.selectbox(key="ann_suggest_source").value == f"run:{run_id}"
    shown = " ".join(m.value for m in at.markdown)
    assert "Suggested label" in shown and "probability 0.80" in shown
    ok(button(at, "ann_suggest_use_label").click().run())
    assert any("Unsaved changes" in w for w in messages(at, "warning"))
    doc = f"{did}:0"
    gen = at.session_state["ann_drafts"][doc]["gen"]
    assert at.selectbox(key=f"ann_label::{doc}::{gen}").value == other
    assert events(sugg_db, did) == []                      # nothing written before Save
    at = save(at)
    (ev,) = events(sugg_db, did)
    assert ev.after.label == other
    assert [(p.source, p.accepted) for p in ev.provenance] == [
        (SuggestionSource("run", str(run_id)), (Suggestion(other, 0.8),))]
    assert "run " + str(run_id) + ": 1 accepted (0.80)" in list(at.dataframe[0].value["suggestions accepted"])


def test_a_built_in_pair_model_suggests_live(open_page, sugg_db):
    did, predicted = sugg_db["sts"]
    at = open_page({"task": "CHIP-STS", "split": "dev", "example": 0}, "model:chip-sts")
    prob = predicted.meta["probabilities"][predicted.label]
    shown = " ".join(m.value for m in at.markdown)
    assert "Suggested label" in shown and f"probability {prob:.2f}" in shown
    before = len(events(sugg_db, did))
    ok(button(at, "ann_suggest_use_label").click().run())
    assert len(events(sugg_db, did)) == before
    at = save(at)
    ev = events(sugg_db, did)[-1]
    assert ev.after.label == predicted.label
    assert ev.provenance[0].source == SuggestionSource("model", "chip-sts")
    assert ev.provenance[0].accepted == (Suggestion(predicted.label, prob),)


def test_triples_accepted_rejected_and_accepted_all(open_page, sugg_db):
    did, run_id, (t1, t2, t3) = sugg_db["ie"]
    at = open_page({"task": "CMeIE", "split": "dev", "example": 0}, f"run:{run_id}")
    doc = f"{did}:0"
    texts = [t.value for t in at.text]
    assert any(t1.subject in t and "0.90" in t for t in texts), texts     # best score first
    ok(button(at, f"ann_sug_ok::{doc}::0").click().run())                 # accept t1 (0.90)
    assert t1 in at.session_state["ann_drafts"][doc]["ann"].triples
    ok(button(at, f"ann_sug_no::{doc}::0").click().run())                 # reject t2 (0.70): now first
    assert not any("0.70" in t.value for t in at.text)
    ok(button(at, "ann_suggest_all_triples").click().run())               # the rest: t3
    triples = at.session_state["ann_drafts"][doc]["ann"].triples
    assert t1 in triples and t3 in triples and t2 not in triples
    assert len(events(sugg_db, did)) == 1                                # the setup's edit only
    # CMeIE saves from the span editor (Ctrl+S): its value, as the frontend sends it
    at.session_state["ann_editor"] = {"spans": [], "action": "save", "nonce": 7, "doc": doc}
    ok(at.run())
    assert any("Saved example 0" in s for s in messages(at, "success")), messages(at, "error")
    ev = events(sugg_db, did)[-1]
    (prov,) = ev.provenance
    assert prov.source == SuggestionSource("run", str(run_id))
    assert [(s.identity, s.score) for s in prov.accepted] == [(Suggestion(t1).identity, 0.9),
                                                              (Suggestion(t3).identity, 0.5)]


def test_a_source_of_another_dataset_is_refused(open_page, sugg_db):
    _, run_id, _ = sugg_db["ie"]
    at = open_page({"task": "KUAKE-QIC", "split": "dev", "example": 0}, f"run:{run_id}")
    assert any("not a run of this split" in w for w in messages(at, "warning"))
    assert at.selectbox(key="ann_suggest_source").value is None
    assert not any("Suggested label" in m.value for m in at.markdown)


def test_a_draft_restored_after_a_reload_keeps_where_its_accepted_label_came_from(open_page, sugg_db):
    import secrets

    did, run_id, _ = sugg_db["qic"]
    q, bid = {"task": "KUAKE-QIC", "split": "dev", "example": 1}, secrets.token_hex(16)
    at = open_page(q, f"run:{run_id}")
    at.session_state["ann_browser"] = bid                 # as the span editor reports it
    ok(button(at, "ann_suggest_use_label").click().run())
    suggested = at.session_state["ann_drafts"][f"{did}:1"]["ann"].label
    again = open_page(q, None)                            # a reload: a new session, no source picked
    again.session_state["ann_browser"] = bid
    ok(again.run())
    assert any("Restored your unsaved changes" in m for m in messages(again, "info"))
    assert events(sugg_db, did, 1) == []
    save_example = button(again, "ann_save").click().run()
    assert any("Saved example 1" in s for s in messages(ok(save_example), "success"))
    (ev,) = events(sugg_db, did, 1)
    assert ev.after.label == suggested and ev.provenance[0].accepted == (Suggestion(suggested, 0.7),)
