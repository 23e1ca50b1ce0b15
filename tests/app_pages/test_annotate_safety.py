"""The Annotate page, safe to serve: adjudication saves on the revision the adjudicator saw,
unsaved span edits survive a reload (drafts per browser id), read-only mode disables every
write, and unexpected failures are logged with their traceback instead of swallowed.

As in test_annotate.py, AppTest cannot run the span editor's JavaScript: a test sets the
component's value in the session state (what ``setComponentValue`` does), browser id included.
"""
from __future__ import annotations

import json
import secrets

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.auth import Role, local_user
from cblue_core.records import Span
from cblue_core.store.annotations import AnnotationStore
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP, signed_in
from tests.app_pages.test_annotate import button, messages, ok
from tests.conftest import SAMPLE_DATA

PAGE = "pages/annotate.py"


@pytest.fixture(scope="module")
def safe_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("annotate_safety") / "safety.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    # the roles the tests' users act with once signed in: judge adjudicates
    ws.users.set_role("alice", Role.ANNOTATOR)
    ws.users.set_role("judge", Role.CURATOR)
    ws.close()
    return db


def make_opener(monkeypatch, db):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))

    def open_page(query: dict | None = None, user: str = "alice") -> AppTest:
        at = signed_in(AppTest.from_file(APP, default_timeout=60), user, monkeypatch)
        at.run()
        at.switch_page(PAGE)
        for k, v in (query or {}).items():
            at.query_params[k] = str(v)
        return at.run()
    return open_page


@pytest.fixture
def open_page(safe_db, monkeypatch):
    monkeypatch.delenv("CBLUE_STUDIO_READONLY", raising=False)
    return make_opener(monkeypatch, safe_db)


def store(db):
    from app_pages.common import shared_workspace

    return shared_workspace(str(db)).cursor(actor=local_user("cli"))   # the file's owner


def cmeee(db) -> int:
    return store(db).datasets.find("CMeEE", "dev").dataset_id


def span_dicts(spans) -> list[dict]:
    return [{"start": s.start, "end": s.end, "type": s.type} for s in spans]


_nonce = [1000]


def editor(at: AppTest, action: str, spans: list[dict], doc: str, browser: str | None) -> AppTest:
    """What the span editor's frontend sends: a new value (a new nonce) and a rerun."""
    _nonce[0] += 1
    at.session_state["ann_editor"] = {"spans": spans, "action": action, "nonce": _nonce[0], "doc": doc,
                                      "browser": browser}
    return ok(at.run())


def restored_notes(at: AppTest) -> list[str]:
    return [m for m in messages(at, "info") if "Restored your unsaved changes" in m]


def agreement_between(at, a: str, b: str):
    """The Agreement tab comparing annotators ``a`` and ``b``."""
    at.session_state["ann_tab"] = "Agreement"
    ok(at.run())
    at.selectbox(key="ann_ag_a").set_value(a)
    ok(at.run())
    at.selectbox(key="ann_ag_b").set_value(b)
    return ok(at.run())


# ====================================================================== 1. adjudication
def test_adjudication_saves_on_the_revision_the_adjudicator_saw(open_page, safe_db):
    did, idx = cmeee(safe_db), 10
    ws = store(safe_db)
    ex = ws.datasets.example(did, idx)
    ann, rev = ws.annotations.current(did, idx)
    extra = Span(0, 2, "pro", ex.text[0:2])
    assert extra not in ann.spans
    ws.annotations.save(did, idx, ann.__class__(spans=ann.spans[1:]), author="bob", reason="b",
                        base_revision=rev)
    ws.annotations.save(did, idx, ann.__class__(spans=ann.spans + (extra,)), author="alice", reason="a",
                        base_revision=rev + 1)

    at = agreement_between(open_page({"task": "CMeEE", "split": "dev", "example": idx}, user="judge"),
                           "alice", "bob")
    assert at.selectbox(key="ann_adj_idx").value == idx
    assert at.session_state["ann_adj_seen"] == (f"{did}:{idx}", rev + 2)

    # a third annotator saves the example after the comparison was opened
    cur, cur_rev = ws.annotations.current(did, idx)
    carol = ws.annotations.save(did, idx, cur.__class__(spans=cur.spans[:1]), author="carol",
                                reason="third", base_revision=cur_rev)

    ok(button(at, "ann_adj_save").click().run())
    errors = " ".join(messages(at))
    assert "Edit conflict" in errors and "carol" in errors, errors
    assert not any("Saved example" in s for s in messages(at, "success"))
    assert any("was saved meanwhile" in w for w in messages(at, "warning"))
    # nothing overwritten: carol's event is the current gold
    gold, gold_rev = store(safe_db).annotations.current(did, idx)
    assert (gold, gold_rev) == (carol.after, carol.revision)
    assert store(safe_db).annotations.events(did, idx)[-1].author == "carol"

    # reopening the comparison adjudicates on the new revision: then the save goes through
    ok(button(at, "ann_adj_reload").click().run())
    assert at.session_state["ann_adj_seen"] == (f"{did}:{idx}", carol.revision)
    assert not any("was saved meanwhile" in w for w in messages(at, "warning"))
    ok(button(at, "ann_adj_save").click().run())
    assert any(f"Saved example {idx}" in s for s in messages(at, "success")), messages(at)
    last = store(safe_db).annotations.events(did, idx)[-1]
    assert (last.author, last.base_revision, last.reason) == ("judge", carol.revision,
                                                              "adjudication of alice and bob")


# ====================================================================== 2. drafts
def test_an_unsaved_span_edit_is_restored_in_a_new_session_of_the_same_browser(open_page, safe_db):
    did, idx = cmeee(safe_db), 12
    doc, q = f"{did}:{idx}", {"task": "CMeEE", "split": "dev", "example": idx}
    bid, other = secrets.token_hex(16), secrets.token_hex(16)
    ann, rev = store(safe_db).annotations.current(did, idx)
    spans = span_dicts(ann.spans)
    new = {"start": 2, "end": 4, "type": "bod"}

    first = open_page(q)
    assert not restored_notes(first)
    editor(first, "hello", spans, doc, bid)                      # the editor says who it is
    assert first.session_state["ann_browser"] == bid and not restored_notes(first)
    editor(first, "change", spans + [new], doc, bid)
    assert any("Unsaved changes" in w and "+ bod" in w for w in messages(first, "warning"))

    # a reload: a new session; before the editor reports its browser id nothing is restored
    second = open_page(q)
    assert not restored_notes(second) and not any("Unsaved changes" in w for w in messages(second, "warning"))
    # another browser does not get the draft
    editor(second, "hello", spans, doc, other)
    assert not restored_notes(second)

    third = open_page(q)
    editor(third, "hello", spans, doc, bid)
    notes = restored_notes(third)
    assert len(notes) == 1 and "Save or Discard" in notes[0], messages(third, "info")
    assert any("Unsaved changes" in w and "+ bod" in w for w in messages(third, "warning"))
    d = third.session_state["ann_drafts"][doc]
    assert (2, 4, "bod") in {(s.start, s.end, s.type) for s in d["ann"].spans} and d["base"] == rev
    # the editor is drawn with the restored spans (and told the browser id it already knows)
    [component] = third.get("component_instance")
    args = json.loads(component.proto.json_args)
    assert new in args["spans"] and args["browser"] == bid and args["readonly"] is False
    # a rerun keeps it (the note stays while the changes are unsaved)
    ok(third.run())
    assert restored_notes(third)

    third.text_input(key="ann_reason").input("restored after a reload")
    editor(third, "save", span_dicts(d["ann"].spans), doc, bid)        # the span editor's Save (Ctrl+S)
    assert any(f"Saved example {idx}" in s for s in messages(third, "success")), messages(third)
    ev = store(safe_db).annotations.events(did, idx)[-1]
    assert ev.reason == "restored after a reload" and (2, 4, "bod") in {(s.start, s.end, s.type)
                                                                       for s in ev.after.spans}
    assert not restored_notes(third)

    # saved: the draft is gone, a further reload restores nothing
    fourth = open_page(q)
    editor(fourth, "hello", span_dicts(ev.after.spans), doc, bid)
    assert not restored_notes(fourth) and not any("Unsaved changes" in w for w in messages(fourth, "warning"))


def test_a_discarded_draft_is_not_restored_and_a_stale_one_conflicts(open_page, safe_db):
    did = cmeee(safe_db)
    bid = secrets.token_hex(16)
    # discard
    idx = 13
    doc, q = f"{did}:{idx}", {"task": "CMeEE", "split": "dev", "example": idx}
    spans = span_dicts(store(safe_db).annotations.current(did, idx)[0].spans)
    a = open_page(q)
    editor(a, "change", spans + [{"start": 0, "end": 1, "type": "sym"}], doc, bid)
    b = open_page(q)
    editor(b, "hello", spans, doc, bid)
    assert restored_notes(b)
    ok(button(b, "ann_discard").click().run())
    assert any("discarded" in m for m in messages(b, "info")) and not restored_notes(b)
    c = open_page(q)
    editor(c, "hello", spans, doc, bid)
    assert not restored_notes(c)

    # a draft whose example was saved meanwhile by someone else: restored on the revision it was
    # made on, so that saving it is a conflict (never an overwrite)
    idx = 14
    doc, q = f"{did}:{idx}", {"task": "CMeEE", "split": "dev", "example": idx}
    ws = store(safe_db)
    ann, rev = ws.annotations.current(did, idx)
    spans = span_dicts(ann.spans)
    a = open_page(q)
    editor(a, "change", spans + [{"start": 0, "end": 1, "type": "sym"}], doc, bid)
    theirs = ws.annotations.save(did, idx, ann.__class__(spans=ann.spans[1:]), author="dave", reason="d",
                                 base_revision=rev)
    b = open_page(q)
    editor(b, "hello", span_dicts(theirs.after.spans), doc, bid)
    assert restored_notes(b)
    assert b.session_state["ann_drafts"][doc]["base"] == rev
    assert any("Saved meanwhile by someone else" in w for w in messages(b, "warning"))
    editor(b, "save", span_dicts(b.session_state["ann_drafts"][doc]["ann"].spans), doc, bid)
    assert any("Edit conflict" in e for e in messages(b)), messages(b)
    assert store(safe_db).annotations.current(did, idx) == (theirs.after, theirs.revision)


def test_drafts_of_label_tasks_survive_too_once_the_browser_is_known(open_page, safe_db):
    """The draft store keeps any kind of edit; the page learns the browser id from the editor."""
    from cblue_core.tasks import get_task

    ws = store(safe_db)
    did = ws.datasets.find("CHIP-CTC", "dev").dataset_id
    doc, q = f"{did}:3", {"task": "CHIP-CTC", "split": "dev", "example": 3}
    bid = secrets.token_hex(16)
    at = open_page(q)
    at.session_state["ann_browser"] = bid           # learnt from the editor on another task
    ok(at.run())
    gen = at.session_state["ann_drafts"][doc]["gen"]
    old = at.selectbox(key=f"ann_label::{doc}::{gen}").value
    new = next(c for c in get_task("CHIP-CTC").label_codes if c != old)
    ok(at.selectbox(key=f"ann_label::{doc}::{gen}").select(new).run())
    again = open_page(q)
    again.session_state["ann_browser"] = bid
    ok(again.run())
    assert restored_notes(again)
    gen = again.session_state["ann_drafts"][doc]["gen"]
    assert again.selectbox(key=f"ann_label::{doc}::{gen}").value == new


def test_a_full_draft_store_is_said_and_the_edit_must_be_saved(open_page, safe_db, monkeypatch):
    """Forged browser ids can fill the draft store; the store then refuses (never evicting another
    visitor's draft), and the page says this edit will not survive a reload."""
    from cblue_core.annotation.drafts import DraftOutcome, DraftStore
    from cblue_core.tasks import get_task

    monkeypatch.setattr(DraftStore, "put", lambda self, *a, **kw: DraftOutcome.STORE_FULL)
    ws = store(safe_db)
    did = ws.datasets.find("CHIP-CTC", "dev").dataset_id
    doc, q = f"{did}:4", {"task": "CHIP-CTC", "split": "dev", "example": 4}
    at = open_page(q)
    at.session_state["ann_browser"] = secrets.token_hex(16)
    ok(at.run())
    gen = at.session_state["ann_drafts"][doc]["gen"]
    old = at.selectbox(key=f"ann_label::{doc}::{gen}").value
    new = next(c for c in get_task("CHIP-CTC").label_codes if c != old)
    ok(at.selectbox(key=f"ann_label::{doc}::{gen}").select(new).run())
    assert any("draft store is full" in c.value for c in at.caption), [c.value for c in at.caption]


# ====================================================================== 3. read-only
@pytest.fixture(scope="module")
def ro_db(tmp_path_factory):
    """A workspace that exists before the server opens it read-only, with two annotators' edits
    (so the history, undo and adjudication controls are there)."""
    db = tmp_path_factory.mktemp("annotate_ro") / "readonly.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    ann, rev = ws.annotations.current(did, 0)
    ws.annotations.save(did, 0, ann.__class__(spans=ann.spans[1:]), author="bob", reason="b",
                        base_revision=rev)
    ws.annotations.save(did, 0, ann, author="alice", reason="a", base_revision=rev + 1)
    ws.users.set_role("alice", Role.CURATOR)
    ws.close()
    return db


def test_read_only_mode_disables_every_write(ro_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_READONLY", "1")
    open_page = make_opener(monkeypatch, ro_db)
    at = ok(open_page({"task": "CMeEE", "split": "dev", "example": 0}, user="alice"))
    notes = [m for m in messages(at, "info") if "Read-only mode" in m]
    assert notes == ["Read-only mode: editing is switched off on this server."]
    assert button(at, "ann_undo_mine").disabled
    reverts = [b for b in at.button if (b.key or "").startswith("ann_revert::")]
    assert len(reverts) == 2 and all(b.disabled for b in reverts)
    assert at.text_input(key="ann_reason").disabled
    [component] = at.get("component_instance")
    assert json.loads(component.proto.json_args)["readonly"] is True

    # a value forged in the editor's name changes and writes nothing
    did = store(ro_db).datasets.find("CMeEE", "dev").dataset_id
    n = len(store(ro_db).annotations.events(did))
    editor(at, "save", [{"start": 0, "end": 1, "type": "sym"}], f"{did}:0", secrets.token_hex(16))
    assert not any("Unsaved changes" in w for w in messages(at, "warning"))
    assert len(store(ro_db).annotations.events(did)) == n
    editor(at, "next", [], f"{did}:0", None)                    # browsing still works
    assert at.number_input(key="ann_example").value == 1

    at.session_state["ann_tab"] = "Versions"
    ok(at.run())
    assert button(at, "ann_ver_create").disabled and at.text_input(key="ann_ver_name").disabled
    at.session_state["ann_tab"] = "Agreement"
    ok(at.run())
    at.selectbox(key="ann_ag_a").set_value("alice")
    ok(at.run())
    assert button(at, "ann_adj_save").disabled
    assert len([m for m in messages(at, "info") if "Read-only mode" in m]) == 1
    at.session_state["ann_tab"] = "Export"
    ok(at.run())
    assert at.get("download_button")                           # reading is still allowed

    # a label task: the label picker is disabled too
    at = ok(open_page({"task": "CHIP-CTC", "split": "dev", "example": 0}))
    ctc = store(ro_db).datasets.find("CHIP-CTC", "dev").dataset_id
    gen = at.session_state["ann_drafts"][f"{ctc}:0"]["gen"]
    assert at.selectbox(key=f"ann_label::{ctc}:0::{gen}").disabled
    assert button(at, "ann_save").disabled
    assert not messages(at)


# ====================================================================== 4. failures
def test_unexpected_failures_are_logged_with_their_traceback(open_page, safe_db, monkeypatch, tmp_path):
    log = tmp_path / "pages.log"
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(log))
    did, idx = cmeee(safe_db), 15
    doc, q = f"{did}:{idx}", {"task": "CMeEE", "split": "dev", "example": idx}
    spans = span_dicts(store(safe_db).annotations.current(did, idx)[0].spans)

    def broken_save(self, *a, **kw):
        raise RuntimeError("patient text that must not reach the log")

    at = open_page(q)
    editor(at, "change", spans + [{"start": 0, "end": 1, "type": "sym"}], doc, None)
    monkeypatch.setattr(AnnotationStore, "save", broken_save)
    editor(at, "save", spans + [{"start": 0, "end": 1, "type": "sym"}], doc, None)
    shown = " ".join(messages(at))
    assert "Not saved: Saving an annotation failed unexpectedly (RuntimeError)" in shown, shown
    text = log.read_text(encoding="utf-8")
    assert "page: Saving an annotation" in text and "RuntimeError" in text and "broken_save" in text
    assert "patient text" not in text

    # the guard around the example: an expected failure (LookupError) is shown, not logged ...
    def broken_events(self, *a, **kw):
        raise KeyError("no such example")

    records = log.read_text(encoding="utf-8").count("=== ")
    monkeypatch.setattr(AnnotationStore, "events", broken_events)
    ok(at.run())
    shown = " ".join(messages(at))
    assert "Loading the example's annotation failed: 'no such example'" in shown, shown
    assert log.read_text(encoding="utf-8").count("=== ") == records

    # ... an unexpected one is logged with its traceback, one line on the page
    def broken_current(self, *a, **kw):
        raise OSError("disk gone")

    monkeypatch.setattr(AnnotationStore, "current", broken_current)
    ok(at.run())
    shown = " ".join(messages(at))
    assert ("Loading the example's annotation failed unexpectedly (OSError); the details are in the "
            "server's log") in shown, shown
    text = log.read_text(encoding="utf-8")
    assert text.count("=== ") == records + 1 and "broken_current" in text and "disk gone" not in text
