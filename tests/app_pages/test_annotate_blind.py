"""The Annotate page in a blind pass: a curator turns it on (an annotator cannot); an annotator's
Edit tab shows their own copy, started from the example as ingested, never another annotator's
saved gold or history; their save leaves the gold alone and the Agreement tab then compares both;
a curator edits the gold and adjudicates into it."""
from __future__ import annotations

import pytest

from cblue_core.annotation import Annotation
from cblue_core.auth import Role
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.test_annotate import button, messages, ok
from tests.app_pages.test_annotate_safety import agreement_between, editor, make_opener, span_dicts, store
from tests.conftest import SAMPLE_DATA

IDX = 12


@pytest.fixture(scope="module")
def blind_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("annotate_blind") / "blind.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    for name, role in (("alice", Role.ANNOTATOR), ("bob", Role.ANNOTATOR), ("judge", Role.CURATOR)):
        ws.users.set_role(name, role)
    ws.close()
    return db


@pytest.fixture
def open_page(blind_db, monkeypatch):
    monkeypatch.delenv("CBLUE_STUDIO_READONLY", raising=False)
    return make_opener(monkeypatch, blind_db)


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_a_blind_first_pass_then_reveal_then_adjudication(open_page, blind_db):
    ws = store(blind_db)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    original, _ = ws.annotations.current(did, IDX)
    assert len(original.spans) >= 2
    bobs = ws.annotations.save(did, IDX, Annotation(original.spans[1:]), author="bob", reason="bob's pass",
                               base_revision=0)
    query = {"task": "CMeEE", "split": "dev", "example": IDX}

    # an annotator cannot start the pass: the control is disabled with a note
    at = open_page(query, user="alice")
    at.session_state["ann_tab"] = "Agreement"
    ok(at.run())
    assert button(at, "ann_blind_switch").disabled
    assert "Only a curator or an admin" in captions(at)

    # the curator starts it
    at = open_page(query, user="judge")
    at.session_state["ann_tab"] = "Agreement"
    ok(at.run())
    ok(button(at, "ann_blind_switch").click().run())
    assert ws.blind.setting(did).set_by == "judge"
    assert "Blind double annotation is on" in captions(at)

    # alice's Edit tab: the example as ingested, not bob's gold; no history of bob's
    at = open_page(query, user="alice")
    doc = f"{did}:{IDX}"
    draft = at.session_state["ann_drafts"][doc]
    assert (draft["loaded"], draft["base"]) == (original, 0)
    assert any("Blind pass" in m for m in messages(at, "info"))
    assert "bob" not in captions(at) and "No edits of yours yet" in captions(at)

    # her save goes to her own copy; the gold stays bob's
    mine = Annotation(original.spans[:-1])
    at = editor(at, "save", span_dicts(mine.spans), doc, None)
    assert any("in your own copy" in m for m in messages(at, "success")), messages(at)
    assert ws.annotations.current(did, IDX) == (bobs.after, 1)
    assert ws.acting_as(None).annotations.by_author(did, "alice") == {IDX: mine}
    assert "bob" not in captions(at) and "alice" in captions(at)

    # then the Agreement tab shows both: alice (A) against bob (B)
    at.session_state["ann_tab"] = "Agreement"
    ok(at.run())
    assert at.selectbox(key="ann_ag_a").value == "alice"
    assert at.selectbox(key="ann_ag_b").value == "bob"
    assert any(m.label == "F1" for m in at.metric)

    # the curator sees the gold in the Edit tab and adjudicates into it
    at = open_page(query, user="judge")
    assert at.session_state["ann_drafts"][doc]["loaded"] == bobs.after
    at = agreement_between(at, "alice", "bob")
    assert at.selectbox(key="ann_adj_idx").value == IDX
    ok(button(at, "ann_adj_save").click().run())
    last = store(blind_db).annotations.events(did, IDX)[-1]
    assert (last.author, last.reason) == ("judge", "adjudication of alice and bob")
