"""The Annotate page under AppTest, and the span editor component's Python side and files.

AppTest cannot run the component's JavaScript: tests set the component's value in the session
state (what the frontend's ``setComponentValue`` does) and rerun, which drives the same handler.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.auth import Role, local_user
from cblue_core.records import Span
from cblue_core.render.palette import PALETTE
from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from cblue_core.tasks import get_task
from tests.app_pages.conftest import APP, count_calls, html_of, signed_in
from tests.conftest import SAMPLE_DATA

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "app_pages/components/span_editor/frontend"
PAGE = "pages/annotate.py"
EVIL_NAME = "**x** ![img](http://example.invalid/x.png) <b>y</b> :red[z] $k$"


@pytest.fixture(scope="module")
def ann_db(tmp_path_factory):
    """The sample workspace plus one CMeEE run, written before any page opens the file."""
    db = tmp_path_factory.mktemp("annotate") / "annotate.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    import_run(ws, did, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", name="sample model")
    # the roles the tests' users act with once signed in (alice adjudicates and freezes versions)
    for name, role in (("alice", Role.CURATOR), ("bob", Role.ANNOTATOR), (EVIL_NAME, Role.ANNOTATOR)):
        ws.users.set_role(name, role)
    ws.close()
    return db


@pytest.fixture
def open_page(ann_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(ann_db))

    def open_page(query: dict | None = None, user: str = "alice") -> AppTest:
        at = signed_in(AppTest.from_file(APP, default_timeout=60), user, monkeypatch)
        at.run()
        at.switch_page(PAGE)
        for k, v in (query or {}).items():
            at.query_params[k] = str(v)
        return at.run()
    return open_page


def store(ann_db):
    """The page's own workspace (one connection per file and process), a fresh cursor."""
    from app_pages.common import shared_workspace

    return shared_workspace(str(ann_db)).cursor(actor=local_user("cli"))   # the file's owner


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(text: str) -> str:
    """Markdown as read: the page backslash-escapes every punctuation character of data."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u200b", "")   # md() breaks autolinks with it


def messages(at: AppTest, kind: str = "error") -> list[str]:
    return [plain(e.value) for e in getattr(at, kind)]


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def doc_of(at: AppTest, task: str, split: str, idx: int, ann_db) -> str:
    return f"{store(ann_db).datasets.find(task, split).dataset_id}:{idx}"


def open_tab(at: AppTest, name: str) -> AppTest:
    at.session_state["ann_tab"] = name
    return ok(at.run())


# ---------------------------------------------------------------------------------- page
def test_page_loads_on_the_sample_workspace(open_page):
    t0 = time.perf_counter()
    at = ok(open_page({"task": "CMeEE", "split": "dev", "example": 3}))
    assert at.title[0].value == "Annotate"
    assert [t.label for t in at.tabs] == ["Edit", "Versions", "Review queue", "Agreement",
                                          "Re-score", "Export"]
    assert at.selectbox(key="ann_task").value == "CMeEE"
    assert at.number_input(key="ann_example").value == 3
    # the span editor is a custom component (AppTest shows it as an unknown element)
    assert [getattr(e, "key", None) for e in at.get("component_instance")] == ["ann_editor"]
    assert at.query_params["example"] in ("3", ["3"])
    assert not messages(at)
    # a rerun of the page is fast
    t0 = time.perf_counter()
    ok(at.run())
    assert time.perf_counter() - t0 < 2.0


def test_every_editable_task_kind_loads(open_page):
    for task in ("CMeIE", "CHIP-CDN", "CHIP-CTC", "CHIP-STS", "KUAKE-QQR"):
        at = ok(open_page({"task": task, "split": "dev", "example": 0}))
        assert at.selectbox(key="ann_task").value == task
        assert not messages(at), (task, messages(at))


def test_one_previous_next_set_and_one_save_per_kind(open_page):
    """Spans and CMeIE triples are edited in the span editor, whose own Prev/Next/Save (with
    their shortcuts) are the only ones; labels and terms have the page's, once."""
    for task, in_editor in (("CMeEE", True), ("CMeIE", True), ("CHIP-CTC", False), ("CHIP-CDN", False)):
        at = ok(open_page({"task": task, "split": "dev", "example": 0}))
        keys = [b.key for b in at.button]
        editors = at.get("component_instance")
        if in_editor:
            assert len(editors) == 1 and not {"ann_save", "ann_prev", "ann_next"} & set(keys), (task, keys)
        else:
            assert not editors and all(keys.count(k) == 1 for k in ("ann_save", "ann_prev", "ann_next")), task
            assert sum(b.label == "Save" for b in at.button) == 1


def test_edit_a_label_and_save_creates_an_event(open_page, ann_db):
    at = open_page({"task": "CHIP-CTC", "split": "dev", "example": 1})
    doc = doc_of(at, "CHIP-CTC", "dev", 1, ann_db)
    gen = at.session_state["ann_drafts"][doc]["gen"]
    label = at.selectbox(key=f"ann_label::{doc}::{gen}")
    old = label.value
    new = next(c for c in get_task("CHIP-CTC").label_codes if c != old)
    ok(label.select(new).run())
    assert any("Unsaved changes" in w for w in messages(at, "warning"))
    at.text_input(key="ann_reason").input("criterion is about age")
    ok(button(at, "ann_save").click().run())
    assert any("Saved example 1" in s for s in messages(at, "success")), messages(at)
    did = int(doc.split(":")[0])
    events = store(ann_db).annotations.events(did, 1)
    assert len(events) == 1
    ev = events[0]
    assert (ev.author, ev.reason, ev.before.label, ev.after.label) == ("alice", "criterion is about age",
                                                                      old, new)
    assert at.text_input(key="ann_reason").value == ""          # cleared after the save
    history = at.dataframe[0].value
    assert list(history["who"]) == ["alice"] and list(history["reason"]) == ["criterion is about age"]


def test_a_stale_save_shows_the_conflict_view(open_page, ann_db):
    q = {"task": "CHIP-CTC", "split": "dev", "example": 2}
    mine = open_page(q, user="alice")
    doc = doc_of(mine, "CHIP-CTC", "dev", 2, ann_db)
    codes = get_task("CHIP-CTC").label_codes
    gen = mine.session_state["ann_drafts"][doc]["gen"]
    old = mine.selectbox(key=f"ann_label::{doc}::{gen}").value
    mine_label, their_label = [c for c in codes if c != old][:2]
    ok(mine.selectbox(key=f"ann_label::{doc}::{gen}").select(mine_label).run())

    theirs = open_page(q, user="bob")                      # another session saves first
    gen_b = theirs.session_state["ann_drafts"][doc]["gen"]
    ok(theirs.selectbox(key=f"ann_label::{doc}::{gen_b}").select(their_label).run())
    ok(button(theirs, "ann_save").click().run())
    assert any("Saved" in s for s in messages(theirs, "success"))

    ok(button(mine, "ann_save").click().run())             # stale: made on revision 0
    errors = " ".join(messages(mine))
    assert "Not saved" in errors and "Edit conflict" in errors
    html = html_of(mine)
    assert get_task("CHIP-CTC").label(mine_label).zh in html and get_task("CHIP-CTC").label(their_label).zh in html
    did = int(doc.split(":")[0])
    assert [e.after.label for e in store(ann_db).annotations.events(did, 2)] == [their_label]

    ok(button(mine, "ann_keep_mine").click().run())        # save again on the new revision
    assert any("Saved example 2" in s for s in messages(mine, "success")), messages(mine)
    events = store(ann_db).annotations.events(did, 2)
    assert [(e.author, e.after.label, e.base_revision) for e in events] == [
        ("bob", their_label, 0), ("alice", mine_label, 1)]
    assert not any("Edit conflict" in e for e in messages(mine))


def test_keep_theirs_reloads(open_page, ann_db):
    q = {"task": "KUAKE-QIC", "split": "dev", "example": 0}
    mine = open_page(q, user="alice")
    doc = doc_of(mine, "KUAKE-QIC", "dev", 0, ann_db)
    codes = get_task("KUAKE-QIC").label_codes
    gen = mine.session_state["ann_drafts"][doc]["gen"]
    old = mine.selectbox(key=f"ann_label::{doc}::{gen}").value
    a, b = [c for c in codes if c != old][:2]
    ok(mine.selectbox(key=f"ann_label::{doc}::{gen}").select(a).run())
    did = int(doc.split(":")[0])
    ws = store(ann_db)
    ws.annotations.save(did, 0, ws.annotations.current(did, 0)[0].__class__(label=b), author="carol",
                       reason="theirs", base_revision=0)
    ok(button(mine, "ann_save").click().run())
    assert any("Edit conflict" in e for e in messages(mine))
    ok(button(mine, "ann_keep_theirs").click().run())
    assert any("Reloaded" in i for i in messages(mine, "info"))
    gen = mine.session_state["ann_drafts"][doc]["gen"]
    assert mine.selectbox(key=f"ann_label::{doc}::{gen}").value == b
    assert len(store(ann_db).annotations.events(did, 0)) == 1


def test_revert_and_undo_my_last_edit(open_page, ann_db):
    at = open_page({"task": "CHIP-STS", "split": "dev", "example": 0})
    doc = doc_of(at, "CHIP-STS", "dev", 0, ann_db)
    did = int(doc.split(":")[0])
    gen = at.session_state["ann_drafts"][doc]["gen"]
    old = at.selectbox(key=f"ann_label::{doc}::{gen}").value
    new = "1" if old == "0" else "0"
    ok(at.selectbox(key=f"ann_label::{doc}::{gen}").select(new).run())
    ok(button(at, "ann_save").click().run())
    ev = store(ann_db).annotations.events(did, 0)[-1]
    ok(button(at, f"ann_revert::{ev.event_id}").click().run())
    assert any(f"Reverted event #{ev.event_id}" in s for s in messages(at, "success")), messages(at)
    events = store(ann_db).annotations.events(did, 0)
    assert [e.kind for e in events] == ["edit", "revert"] and events[-1].reverts == ev.event_id
    assert store(ann_db).annotations.current(did, 0) == (events[-1].after, 2)
    assert events[-1].after.label == old
    gen = at.session_state["ann_drafts"][doc]["gen"]
    assert at.selectbox(key=f"ann_label::{doc}::{gen}").value == old
    # undo = revert my last event (here: the revert itself)
    ok(button(at, "ann_undo_mine").click().run())
    assert store(ann_db).annotations.current(did, 0)[0].label == new
    # reverting an event whose result was changed since is refused with a message
    ws = store(ann_db)
    third = next(c for c in get_task("CHIP-STS").label_codes if c not in (old, new)) if len(
        get_task("CHIP-STS").label_codes) > 2 else None
    cur, rev = ws.annotations.current(did, 0)
    ws.annotations.save(did, 0, cur.__class__(label=third or old), author="bob", reason="later",
                       base_revision=rev)
    n = len(ws.annotations.events(did, 0))
    ok(at.run())
    ok(button(at, f"ann_revert::{ev.event_id}").click().run())
    assert any("not reverted" in e for e in messages(at)), messages(at)
    assert len(store(ann_db).annotations.events(did, 0)) == n


def test_span_editor_actions_edit_save_and_navigate(open_page, ann_db):
    at = open_page({"task": "CMeEE", "split": "dev", "example": 4})
    doc = doc_of(at, "CMeEE", "dev", 4, ann_db)
    did = int(doc.split(":")[0])
    ann, _rev = store(ann_db).annotations.current(did, 4)
    spans = [{"start": s.start, "end": s.end, "type": s.type} for s in ann.spans]
    new = {"start": 0, "end": 2, "type": "bod"}
    at.session_state["ann_editor"] = {"spans": spans + [new], "action": "change", "nonce": 11, "doc": doc}
    ok(at.run())
    assert any("Unsaved changes" in w and "+ bod" in w for w in messages(at, "warning"))
    at.text_input(key="ann_reason").input("missing body part")
    # Ctrl+S in the editor: the same spans with action "save"
    at.session_state["ann_editor"] = {"spans": spans + [new], "action": "save", "nonce": 12, "doc": doc}
    ok(at.run())
    assert any("Saved example 4" in s for s in messages(at, "success")), messages(at)
    ev = store(ann_db).annotations.events(did, 4)[-1]
    assert ev.reason == "missing body part" and (0, 2, "bod") in {(s.start, s.end, s.type) for s in ev.after.spans}
    # a rerun with the same value (same nonce) does nothing more
    ok(at.run())
    assert len(store(ann_db).annotations.events(did, 4)) == 1
    # Alt+→ in the editor: next example
    at.session_state["ann_editor"] = {"spans": spans + [new], "action": "next", "nonce": 13, "doc": doc}
    ok(at.run())
    assert at.number_input(key="ann_example").value == 5
    # an invalid span type is refused with a message, nothing written
    doc5 = doc_of(at, "CMeEE", "dev", 5, ann_db)
    at.session_state["ann_editor"] = {"spans": [{"start": 0, "end": 1, "type": "nope"}], "action": "save",
                                      "nonce": 14, "doc": doc5}
    ok(at.run())
    assert any("unknown entity type" in e for e in messages(at))
    assert store(ann_db).annotations.events(did, 5) == []


def test_cmeie_triples_offer_only_allowed_predicates(open_page, ann_db):
    from cblue_core.annotation.validation import allowed_predicates, combined_for

    at = open_page({"task": "CMeIE", "split": "dev", "example": 0})
    doc = doc_of(at, "CMeIE", "dev", 0, ann_db)
    did = int(doc.split(":")[0])
    ws = store(ann_db)
    ex = ws.datasets.example(did, 0)
    gen = at.session_state["ann_drafts"][doc]["gen"]
    subj = at.selectbox(key=f"ann_subj::{doc}::{gen}")
    obj = at.selectbox(key=f"ann_obj::{doc}::{gen}")
    # pick a disease subject and a symptom object among the mentions
    disease = next(o for o in subj.options if o.endswith("· 疾病"))
    symptom = next(o for o in obj.options if o.endswith("· 症状"))
    subj.set_value(tuple(disease.split(" · ")))
    obj.set_value(tuple(symptom.split(" · ")))
    ok(at.run())
    pred = at.selectbox(key=f"ann_pred::{doc}::{gen}")
    allowed = allowed_predicates(ws.resources.schemas(), "疾病", "症状")
    assert pred.options and len(pred.options) == len(allowed) < len(get_task("CMeIE").label_codes)
    # a mention marked in the editor (session only) becomes a subject/object option
    marked = {"start": 0, "end": 2, "type": "疾病"}
    at.session_state["ann_editor"] = {"spans": [marked], "action": "change", "nonce": 21, "doc": doc}
    ok(at.run())
    opts = at.selectbox(key=f"ann_subj::{doc}::{gen}").options
    assert f"{ex.text[0:2]} · 疾病" in opts
    # add a new triple: Combined is computed
    other = next(o for o in at.selectbox(key=f"ann_obj::{doc}::{gen}").options if o.endswith("· 症状"))
    at.selectbox(key=f"ann_subj::{doc}::{gen}").set_value((ex.text[0:2], "疾病"))
    at.selectbox(key=f"ann_obj::{doc}::{gen}").set_value(tuple(other.split(" · ")))
    ok(at.run())
    before = len(at.session_state["ann_drafts"][doc]["ann"].triples)
    ok(button(at, f"ann_add_triple::{doc}").click().run())
    triples = at.session_state["ann_drafts"][doc]["ann"].triples
    assert len(triples) == before + 1
    t = triples[-1]
    assert t.combined == combined_for(ex.text, t.subject, t.object)
    # one Save, the span editor's (the page has none for spans and triples)
    assert not any(b.key == "ann_save" for b in at.button)
    at.session_state["ann_editor"] = {"spans": [marked], "action": "save", "nonce": 22, "doc": doc}
    ok(at.run())
    assert any("Saved example 0" in s for s in messages(at, "success")), messages(at)
    assert store(ann_db).annotations.current(did, 0)[0].triples[-1].subject == ex.text[0:2]


def test_cdn_terms_from_a_search_of_the_icd_list(open_page, ann_db):
    at = open_page({"task": "CHIP-CDN", "split": "dev", "example": 0})
    doc = doc_of(at, "CHIP-CDN", "dev", 0, ann_db)
    did = int(doc.split(":")[0])
    at.text_input(key="ann_icd_q").input("高血压")
    ok(at.run())
    ms = next(m for m in at.multiselect if m.key.startswith(f"ann_terms::{doc}"))
    icd = {t.term for t in store(ann_db).resources.icd_terms()}
    extra = next(o for o in ms.options if "高血压" in o and o not in ms.value)
    assert extra in icd and all(o in icd or o in ms.value for o in ms.options)
    ok(ms.select(extra).run())
    ok(button(at, "ann_save").click().run())
    assert store(ann_db).annotations.current(did, 0)[0].terms[-1] == extra


def test_versions_review_queue_agreement_rescore(open_page, ann_db):
    at = open_page({"task": "CMeEE", "split": "dev", "example": 0})
    doc = doc_of(at, "CMeEE", "dev", 0, ann_db)
    did = int(doc.split(":")[0])
    ws = store(ann_db)
    ann, rev = ws.annotations.current(did, 0)
    dropped = ann.spans[0]
    added = Span(0, 1, "bod", ws.datasets.example(did, 0).text[0])
    assert added not in ann.spans
    # bob drops the first span; alice keeps it and adds another
    ws.annotations.save(did, 0, ann.__class__(spans=ann.spans[1:]), author="bob", reason="b",
                       base_revision=rev)
    ws.annotations.save(did, 0, ann.__class__(spans=ann.spans + (added,)), author="alice",
                       reason="a", base_revision=rev + 1)

    # Versions: a named snapshot, and the diff original -> current lists the edited example
    at = open_tab(at, "Versions")
    at.text_input(key="ann_ver_name").input("v1")
    ok(button(at, "ann_ver_create").click().run())
    assert any("Created version 'v1'" in s for s in messages(at, "success")), messages(at)
    assert "v1" in list(at.dataframe[0].value["name"])
    at.selectbox(key="ann_diff_a").set_value("original")
    at.selectbox(key="ann_diff_b").set_value("(current)")
    ok(at.run())
    diff = at.dataframe[1].value
    assert 0 in list(diff["idx"])
    assert "+ bod" in diff[diff["idx"] == 0]["change"].iloc[0]

    # Review queue: items, each opening the example in the editor
    at = open_tab(at, "Review queue")
    table = at.dataframe[0].value
    assert len(table) and set(table["reason"]) <= {"all_runs_wrong", "runs_disagree",
                                                   "inconsistent_type", "validation_defect"}
    first = int(table["idx"].iloc[0])
    ok(button(at, "ann_rq_open").click().run())
    assert at.session_state["ann_tab"] == "Edit" and at.number_input(key="ann_example").value == first

    # Agreement: bob and alice both saved example 0
    at = open_tab(at, "Agreement")
    at.selectbox(key="ann_ag_a").set_value("alice")
    ok(at.run())
    at.selectbox(key="ann_ag_b").set_value("bob")
    ok(at.run())
    f1 = next(m for m in at.metric if m.label == "F1")
    assert 0 < float(f1.value) < 1
    boxes = [c for c in at.checkbox if c.key.startswith("ann_adj::0::")]
    assert len(boxes) == 2 and all(b.value for b in boxes)     # the two spans only alice has
    for n in range(len(boxes)):                                 # keep neither: bob's version
        ok(next(c for c in at.checkbox if c.key == f"ann_adj::0::{n}").uncheck().run())
    ok(button(at, "ann_adj_save").click().run())
    assert any("Saved example 0" in s for s in messages(at, "success")), messages(at)
    assert set(store(ann_db).annotations.current(did, 0)[0].spans) == set(ann.spans) - {dropped}

    # Re-score: the run on the corrected gold, and which errors disappear / appear
    at = open_tab(at, "Re-score")
    labels = [plain(m.label) for m in at.metric]
    assert any(lab.endswith("on original") for lab in labels) and any(lab.endswith("on (current)") for lab in labels)
    assert any(m.label == "Examples whose errors changed" and int(m.value) >= 1 for m in at.metric)


def test_user_strings_cannot_inject_markdown(open_page, ann_db):
    evil = EVIL_NAME
    at = open_page({"task": "KUAKE-QQR", "split": "dev", "example": 3}, user=evil)
    doc = doc_of(at, "KUAKE-QQR", "dev", 3, ann_db)
    gen = at.session_state["ann_drafts"][doc]["gen"]
    old = at.selectbox(key=f"ann_label::{doc}::{gen}").value
    new = next(c for c in get_task("KUAKE-QQR").label_codes if c != old)
    ok(at.selectbox(key=f"ann_label::{doc}::{gen}").select(new).run())
    at.text_input(key="ann_reason").input("[link](http://example.invalid) `code`")
    ok(button(at, "ann_save").click().run())
    shown = [e.value for kind in ("success", "caption", "markdown") for e in getattr(at, kind)]
    assert any("example\\.invalid" in v for v in shown)            # the strings are there,
    for v in shown:                                                # but inert
        assert "](" not in v and "<b>" not in v and ":red[" not in v and "**x**" not in v, v
    assert any(evil in plain(v) for v in shown)                     # the user's name, as typed


def test_exports_offer_download_buttons(open_page):
    at = open_tab(open_page({"task": "CMeEE", "split": "dev", "example": 0}), "Export")
    labels = [plain(b.label) for b in at.get("download_button")]
    assert labels == ["Download Official format", "Download brat (zip of .txt/.ann + annotation.conf)",
                      "Download doccano (zip of the JSONL and a README on the project settings it needs)",
                      "Download Label Studio (zip of the tasks and their labeling config)"]
    at = open_tab(open_page({"task": "CHIP-CTC", "split": "dev", "example": 0}), "Export")
    assert any(plain(b.label) == "Download Official format" for b in at.get("download_button"))
    assert not at.exception


# ---------------------------------------------------------------------------------- component
def test_span_editor_python_side():
    from app_pages.components.span_editor import (
        editor_types,
        normalise_spans,
        normalise_suggestions,
        parse_value,
    )
    from cblue_core.annotation.provenance import Suggestion

    assert normalise_spans([{"start": 2, "end": 4, "type": "b"}, Span(0, 4, "a"), {"start": 3, "end": 3, "type": "x"},
                            {"start": 0, "end": 9, "type": "y"}, {"start": True, "end": 2, "type": "z"},
                            {"start": 2, "end": 4, "type": "b"}], length=5) == [
        {"start": 0, "end": 4, "type": "a"}, {"start": 2, "end": 4, "type": "b"}]
    assert parse_value(None) is None and parse_value({"spans": [], "action": "bogus", "nonce": 1}) is None
    assert parse_value({"spans": [{"start": 0, "end": 1, "type": "t"}], "action": "save", "nonce": 3,
                        "doc": "1:2"}) == {"spans": [{"start": 0, "end": 1, "type": "t"}], "action": "save",
                                           "nonce": 3, "doc": "1:2", "browser": None, "accepted": [],
                                           "rejected": []}
    # the browser id is untrusted: only 32 lowercase hex digits pass
    good = "0123456789abcdef" * 2
    for sent, kept in ((good, good), (good.upper(), None), (good + "0", None), ("../" * 11, None),
                       ("x'; DROP TABLE t; --", None), (12345, None), (None, None)):
        v = parse_value({"spans": [], "action": "hello", "nonce": 4, "doc": "1:2", "browser": sent})
        assert v is not None and v["browser"] == kept and v["action"] == "hello", sent
    # suggestions accepted and rejected come back checked as spans are
    v = parse_value({"spans": [], "action": "accept", "nonce": 5, "accepted": [{"start": 0, "end": 1, "type": "t"},
                     {"start": 0, "end": 99, "type": "t"}], "rejected": "not a list"}, length=5)
    assert v["accepted"] == [{"start": 0, "end": 1, "type": "t"}] and v["rejected"] == []
    assert normalise_suggestions([{"start": 1, "end": 3, "type": "t", "score": 0.87654}, Suggestion(Span(0, 2, "u")),
                                  {"start": 1, "end": 9, "type": "t", "score": 1.0},
                                  {"start": 2, "end": 3, "type": "t", "score": float("nan")}], 5) == [
        {"start": 0, "end": 2, "type": "u", "score": None}, {"start": 1, "end": 3, "type": "t", "score": 0.8765},
        {"start": 2, "end": 3, "type": "t", "score": None}]
    types = editor_types(get_task("CMeEE").labels)
    assert [t["colour"] for t in types] == list(range(9))
    assert types[0] == {"code": "dis", "zh": "疾病", "en": "disease", "colour": 0}


def test_span_editor_files_are_offline_and_escape_data():
    html = (FRONTEND / "index.html").read_text(encoding="utf-8")
    js = (FRONTEND / "span_editor.js").read_text(encoding="utf-8")
    suggestions_js = (FRONTEND / "span_editor_suggestions.js").read_text(encoding="utf-8")
    css = (FRONTEND / "span_editor.css").read_text(encoding="utf-8")
    for text in (html, js, suggestions_js, css):
        assert not re.search(r"https?://", text), "nothing fetched at run time"
        assert "innerHTML" not in text.replace("never innerHTML", "") and "insertAdjacentHTML" not in text
        assert "eval(" not in text and "document.write" not in text
    assert re.findall(r'<script[^>]*src="([^"]+)"', html) == ["span_editor_suggestions.js", "span_editor.js"]
    # the protocol, by hand
    for needle in ('"streamlit:componentReady"', "apiVersion: 1", '"streamlit:setComponentValue"',
                   'dataType: "json"', '"streamlit:setFrameHeight"', '"streamlit:render"',
                   "isStreamlitMessage: true", "window.parent.postMessage"):
        assert needle in js, needle
    # colours: exactly the renderer's palette
    found = dict(re.findall(r"\.c(\d+) \{ --bg: (#[0-9A-F]{6}); --bd: (#[0-9A-F]{6}); \}", css) and
                 [(int(i), (bg, bd)) for i, bg, bd in
                  re.findall(r"\.c(\d+) \{ --bg: (#[0-9A-F]{6}); --bd: (#[0-9A-F]{6}); \}", css)])
    assert found == {c.index: (c.bg, c.border) for c in PALETTE}
    assert f"PALETTE_SIZE = {len(PALETTE)}" in js


def test_export_and_review_tabs_do_no_work_on_a_rerun(open_page, ann_db, monkeypatch):
    """The Export tab builds a file only when its button is clicked (the button holds a callable
    that builds it); the review queue is computed once per gold state and set of runs."""
    from app_pages.annotate import export_tab, review_tab
    from cblue_core.annotation import export as exporter
    from cblue_core.annotation import review

    built = count_calls(monkeypatch, exporter, "export_download")
    at = open_tab(open_page({"task": "CMeEE", "split": "dev", "example": 0}), "Export")
    ok(at.run())
    assert built["n"] == 0 and len(at.get("download_button")) == 4
    data = export_tab.exported(str(ann_db), store(ann_db).datasets.find("CMeEE", "dev").dataset_id, "brat", None)
    assert built["n"] == 1 and data[:2] == b"PK"                  # what a click builds: the zip

    review_tab.queue.clear()
    computed = count_calls(monkeypatch, review, "review_queue")
    at = open_tab(at, "Review queue")
    ok(at.run())
    assert computed["n"] == 1
    ws = store(ann_db)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    ann, rev = ws.annotations.current(did, 5)
    ws.annotations.save(did, 5, ann.__class__(spans=ann.spans[1:]), author="x", reason="r", base_revision=rev)
    ok(at.run())                                                   # a new event: computed again
    assert computed["n"] == 2


def test_the_edit_tab_comes_back_on_the_example_it_showed(open_page):
    """Another tab open in between: the record number is kept, not reset to 0."""
    at = open_page({"task": "KUAKE-QIC", "split": "dev", "example": 4})
    assert at.number_input(key="ann_example").value == 4
    at.session_state["ann_tab"] = "Versions"
    ok(at.run())
    at.session_state["ann_tab"] = "Edit"
    ok(at.run())
    assert at.number_input(key="ann_example").value == 4
