"""Versioned gold in the store: append-only events, revision checks, reverts, named versions,
diffs, conflicts between sessions and a process killed in the middle of a save."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cblue_core.annotation import Annotation, EditConflict
from cblue_core.records import Span, Triple
from cblue_core.store.workspace import connect
from tests.annotation.conftest import CMEEE_DEV, CMEIE_DEV, CMEIE_SCHEMAS, CTC_DEV, ingest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "ws.duckdb"
    w = connect(path)
    did = ingest(w, CMEEE_DEV)
    yield w, did, path
    w.close()


def drop_first(ann: Annotation) -> Annotation:
    return Annotation(ann.spans[1:])


def n_events(ws) -> int:
    return ws.db.con.execute("SELECT count(*) FROM annotation_events").fetchone()[0]


# ------------------------------------------------------------------ events


def test_save_appends_one_event_and_bumps_the_revision(db):
    ws, did, _ = db
    ann, rev = ws.annotations.current(did, 0)
    assert rev == 0 and ann == Annotation.from_example(ws.datasets.example(did, 0))
    after = Annotation(ann.spans + (Span(0, 2, "sym"),))       # 患儿 typed sym (text filled in)
    ev = ws.annotations.save(did, 0, after, author="alice", reason="add", base_revision=0)
    assert (ev.kind, ev.revision, ev.base_revision, ev.author, ev.reason) == ("edit", 1, 0, "alice", "add")
    assert ev.before == ann and ev.after.spans[-1] == Span(0, 2, "sym", "患儿") and ev.created_at
    cur, rev = ws.annotations.current(did, 0)
    assert rev == 1 and cur == ev.after
    assert ws.annotations.events(did) == [ev] and ws.annotations.events(did, idx=1) == []
    assert ws.annotations.events(did, author="bob") == []
    # the examples table is untouched: the original stays as ingested
    assert ws.datasets.example(did, 0).spans == list(ann.spans)
    gold = ws.annotations.gold_examples(did)
    assert gold[0].spans == list(ev.after.spans) and gold[0].raw is None
    assert gold[1].raw is not None and ws.annotations.gold_examples(did, "original")[0].spans == list(ann.spans)


def test_invalid_or_empty_saves_write_nothing(db):
    ws, did, _ = db
    ann, _ = ws.annotations.current(did, 0)
    text = ws.datasets.example(did, 0).text
    cases = [
        (Annotation(ann.spans + (Span(5, len(text) + 3, "sym"),)), "outside the text"),
        (Annotation(ann.spans + (Span(0, 2, "xyz"),)), "unknown entity type 'xyz'"),
        (Annotation(ann.spans + (Span(0, 2, "sym", "入院"),)), "is not the text slice"),
        (Annotation(ann.spans + (ann.spans[0],)), "appears twice"),
        (Annotation(ann.spans, label="dis"), "not a label"),
        (Annotation(ann.spans, triples=(Triple("a", "b", "c"),)), "not triples"),
        (ann, "nothing to save"),
    ]
    for after, message in cases:
        with pytest.raises(ValueError, match=message):
            ws.annotations.save(did, 0, after, author="alice", reason="", base_revision=0)
    with pytest.raises(ValueError, match="author"):
        ws.annotations.save(did, 0, drop_first(ann), author=" ", reason="", base_revision=0)
    with pytest.raises(ValueError, match="no example 999"):
        ws.annotations.save(did, 999, drop_first(ann), author="a", reason="", base_revision=0)
    assert n_events(ws) == 0


def test_untouched_defects_do_not_block_an_unrelated_edit(tmp_path):
    ws = connect(tmp_path / "w.duckdb")
    path = tmp_path / "CMeEE_dev.json"
    path.write_text(json.dumps([{"text": "患者发热咳嗽三天。", "entities": [
        {"start_idx": 2, "end_idx": 3, "type": "sym", "entity": "发热"},
        {"start_idx": 4, "end_idx": 5, "type": "symptom", "entity": "咳嗽"}]}], ensure_ascii=False),
        encoding="utf-8")
    did = ingest(ws, path)
    ann, rev = ws.annotations.current(did, 0)
    ev = ws.annotations.save(did, 0, Annotation(ann.spans + (Span(0, 2, "bod"),)), author="a",
                            reason="", base_revision=rev)  # the unknown 'symptom' type was already there
    assert [s.type for s in ev.after.spans] == ["sym", "symptom", "bod"]
    ws.close()


def test_revert_any_event_as_a_new_event(db):
    ws, did, _ = db
    a0, _ = ws.annotations.current(did, 0)
    e1 = ws.annotations.save(did, 0, drop_first(a0), author="alice", reason="one", base_revision=0)
    e2 = ws.annotations.save(did, 0, drop_first(e1.after), author="bob", reason="two", base_revision=1)
    with pytest.raises(EditConflict) as err:          # e2 touched the example after e1
        ws.annotations.revert(e1.event_id, author="carol", reason="undo one")
    assert err.value.current_revision == 2 and [e.event_id for e in err.value.theirs] == [e2.event_id]
    r2 = ws.annotations.revert(e2.event_id, author="carol", reason="undo two")
    assert (r2.kind, r2.reverts, r2.revision, r2.before, r2.after) == ("revert", e2.event_id, 3, e2.after, e1.after)
    r1 = ws.annotations.revert(e1.event_id, author="carol", reason="")
    assert r1.after == a0 and r1.reason == f"revert event {e1.event_id}"
    assert ws.annotations.current(did, 0) == (a0, 4)
    # back to the original gold: the raw record is used again
    assert ws.annotations.gold_examples(did)[0].raw == ws.datasets.example(did, 0).raw
    rr = ws.annotations.revert(r1.event_id, author="dan", reason="redo")   # a revert can be reverted
    assert rr.after == e1.after and ws.annotations.current(did, 0)[1] == 5
    assert [e.kind for e in ws.annotations.events(did, idx=0)] == ["edit", "edit", "revert", "revert", "revert"]
    assert ws.annotations.diff_versions(did, "original", None)[0].after == e1.after
    with pytest.raises(ValueError, match="no annotation event"):
        ws.annotations.revert(12345, author="x", reason="")


def test_versions_snapshot_and_diff(db):
    ws, did, _ = db
    a0, _ = ws.annotations.current(did, 0)
    b0, _ = ws.annotations.current(did, 3)
    e1 = ws.annotations.save(did, 0, drop_first(a0), author="alice", reason="", base_revision=0)
    v1 = ws.annotations.create_version(did, "v1", "alice")
    assert (v1.name, v1.author, v1.last_event_id, v1.edited) == ("v1", "alice", e1.event_id, 1)
    e2 = ws.annotations.save(did, 0, drop_first(e1.after), author="bob", reason="", base_revision=1)
    e3 = ws.annotations.save(did, 3, drop_first(b0), author="bob", reason="", base_revision=0)
    v2 = ws.annotations.create_version(did, "v2", "bob")
    assert [v.name for v in ws.annotations.versions(did)] == ["v1", "v2"] and v2.edited == 2
    # the snapshot does not move with later events
    at_v1 = ws.annotations.gold_examples(did, "v1")
    assert at_v1[0].spans == list(e1.after.spans) and at_v1[3].spans == list(b0.spans)
    assert ws.annotations.gold_examples(did, "v2")[0].spans == list(e2.after.spans)
    diff = ws.annotations.diff_versions(did, "v1", "v2")
    assert [(d.idx, d.before, d.after) for d in diff] == [(0, e1.after, e2.after), (3, b0, e3.after)]
    assert [d.idx for d in ws.annotations.diff_versions(did, "original", "v1")] == [0]
    assert ws.annotations.diff_versions(did, "v2", None) == []
    assert [d.idx for d in ws.annotations.diff_versions(did, None, "original")] == [0, 3]
    ws.annotations.revert(e3.event_id, author="carol", reason="")
    assert [d.idx for d in ws.annotations.diff_versions(did, "original", None)] == [0]   # 3 is back as it was
    assert ws.annotations.edited_indices(did) == [0, 3] and ws.annotations.edited_indices(did, "v1") == [0]
    for bad, message in (("v1", "already has a version"), ("original", "reserved"), ("", "name")):
        with pytest.raises(ValueError, match=message):
            ws.annotations.create_version(did, bad, "alice")
    with pytest.raises(ValueError, match="no gold version 'v9'"):
        ws.annotations.gold_examples(did, "v9")
    assert ws.annotations.gold(did, 0, "v1") == e1.after and ws.annotations.gold(did, 5) == \
        Annotation.from_example(ws.datasets.example(did, 5))


def test_author_annotations(db):
    ws, did, _ = db
    a0, _ = ws.annotations.current(did, 0)
    a1, _ = ws.annotations.current(did, 1)
    e1 = ws.annotations.save(did, 0, drop_first(a0), author="alice", reason="", base_revision=0)
    ws.annotations.save(did, 0, drop_first(e1.after), author="bob", reason="", base_revision=1)
    e3 = ws.annotations.save(did, 1, drop_first(a1), author="alice", reason="", base_revision=0)
    assert ws.annotations.by_author(did, "alice") == {0: e1.after, 1: e3.after}
    assert list(ws.annotations.by_author(did, "bob")) == [0] and ws.annotations.authors(did) == ["alice", "bob"]


def test_schema_is_created_once_and_events_survive_reopening(tmp_path):
    path = tmp_path / "ws.duckdb"
    ws = connect(path)
    did = ingest(ws, CMEEE_DEV)
    a0, _ = ws.annotations.current(did, 0)
    ev = ws.annotations.save(did, 0, drop_first(a0), author="alice", reason="r", base_revision=0)
    ws.annotations.create_version(did, "v1", "alice")
    ws.close()
    ws = connect(path)
    assert ws.annotations.events(did) == [ev] and [v.name for v in ws.annotations.versions(did)] == ["v1"]
    ws.close()


def test_cmeie_schema_and_combined_checks(tmp_path):
    ws = connect(tmp_path / "w.duckdb")
    did = ingest(ws, CMEIE_DEV)
    ex = ws.datasets.example(did, 1)       # 缺铁性贫血@口服铁剂是治疗缺铁性贫血…。…可选用蔗糖铁静脉输注。
    ann, rev = ws.annotations.current(did, 1)
    odd = Triple("缺铁性贫血", "药物治疗", "蔗糖铁", "疾病", "检查")
    # no schemas stored yet: only predicate and mentions are checked
    ev = ws.annotations.save(did, 1, Annotation(triples=ann.triples + (odd,)), author="a", reason="",
                            base_revision=rev)
    assert ev.after.triples[-1].combined is True      # computed: not in one 。-sentence
    ingest(ws, CMEIE_SCHEMAS)
    assert len(ws.resources.schemas()) == 35
    with pytest.raises(ValueError, match="not one of the CMeIE schemas"):
        ws.annotations.save(did, 1, Annotation(triples=ann.triples + (
            Triple("缺铁性贫血", "影像学检查", "铁剂", "疾病", "药物"),)), author="a", reason="", base_revision=1)
    with pytest.raises(ValueError, match="does not occur in the text"):
        ws.annotations.save(did, 1, Annotation(triples=ann.triples + (
            Triple("缺铁性贫血", "药物治疗", "阿司匹林", "疾病", "药物"),)), author="a", reason="", base_revision=1)
    with pytest.raises(ValueError, match="unknown predicate"):
        ws.annotations.save(did, 1, Annotation(triples=ann.triples + (
            Triple("缺铁性贫血", "治疗", "铁剂", "疾病", "药物"),)), author="a", reason="", base_revision=1)
    ok = ws.annotations.save(did, 1, Annotation(triples=ann.triples + (
        Triple("缺铁性贫血", "药物治疗", "口服铁剂", "疾病", "药物", combined=True),)), author="a",
        reason="", base_revision=1)
    assert ok.after.triples[-1].combined is False         # in the same sentence: computed, not taken
    assert ok.after.triples[:2] == ann.triples and len(ok.after.triples) == 3   # 'odd' removed
    assert ex.text.split("。")[0].count("口服铁剂") == 1
    ws.close()


def test_label_checks(tmp_path):
    ws = connect(tmp_path / "w.duckdb")
    did = ingest(ws, CTC_DEV)
    ann, rev = ws.annotations.current(did, 0)
    with pytest.raises(ValueError, match="unknown CHIP-CTC label 'Smoking'"):
        ws.annotations.save(did, 0, Annotation(label="Smoking"), author="a", reason="", base_revision=rev)
    with pytest.raises(ValueError, match="label is required"):
        ws.annotations.save(did, 0, Annotation(label=None), author="a", reason="", base_revision=rev)
    ev = ws.annotations.save(did, 0, Annotation(label="Smoking Status"), author="a", reason="", base_revision=rev)
    assert ws.annotations.gold_examples(did)[0].label == "Smoking Status" and ev.before.label == ann.label
    ws.close()


# ------------------------------------------------------------------ conflicts


def _check_conflict(first, second, did, path_note=""):
    a_ann, a_rev = first.annotations.current(did, 2)
    b_ann, b_rev = second.annotations.current(did, 2)      # both load revision 0
    assert a_rev == b_rev == 0
    mine_a = drop_first(a_ann)
    mine_b = Annotation(b_ann.spans[:-1])
    ev = first.annotations.save(did, 2, mine_a, author="alice", reason="first", base_revision=a_rev)
    with pytest.raises(EditConflict) as err:
        second.annotations.save(did, 2, mine_b, author="bob", reason="second", base_revision=b_rev)
    c = err.value
    assert c.mine == mine_b and c.current == mine_a and c.current_revision == 1
    assert c.theirs == [ev] and "alice" in str(c) and "Nothing was saved" in str(c)
    assert [e.author for e in second.annotations.events(did)] == ["alice"]
    # the loser reloads and saves on the new revision
    cur, rev = second.annotations.current(did, 2)
    ev2 = second.annotations.save(did, 2, Annotation(cur.spans[:-1]), author="bob", reason="merged",
                                 base_revision=rev)
    assert ev2.revision == 2 and first.annotations.current(did, 2) == (ev2.after, 2)


def test_conflict_between_two_cursors_of_one_connection(db):
    ws, did, _ = db
    _check_conflict(ws.cursor(), ws.cursor(), did)


def test_conflict_between_two_workspaces_on_one_file(db):
    ws, did, path = db
    other = connect(path)            # a second Workspace object on the same file, same process
    try:
        _check_conflict(ws, other, did)
    finally:
        other.close()


def test_race_inside_the_transaction_is_caught_at_commit(db):
    """Both saves pass the revision check (each sees revision 0): the unique revision key makes
    the later commit fail, and that save reports an EditConflict instead of overwriting."""
    ws, did, _ = db
    a, b = ws.cursor(), ws.cursor()
    ann, _ = a.annotations.current(did, 4)
    theirs = []

    def interleave(event_id):         # while A's transaction is open, B saves and commits
        theirs.append(b.annotations.save(did, 4, Annotation(ann.spans[:-1]), author="bob",
                                          reason="", base_revision=0))

    a.annotations._before_commit = interleave
    with pytest.raises(EditConflict) as err:
        a.annotations.save(did, 4, drop_first(ann), author="alice", reason="", base_revision=0)
    assert err.value.theirs == theirs and err.value.current_revision == 1
    assert err.value.mine == drop_first(ann)
    assert [(e.author, e.revision) for e in ws.annotations.events(did)] == [("bob", 1)]
    del a.annotations._before_commit
    ev = a.annotations.save(did, 4, drop_first(theirs[0].after), author="alice", reason="", base_revision=1)
    assert ev.revision == 2


# ------------------------------------------------------------------ a killed process

CHILD = r"""
import os, sys, time
from pathlib import Path
from cblue_core.annotation import Annotation
from cblue_core.store.annotations import AnnotationStore
from cblue_core.store.workspace import connect

db, marker, mode = sys.argv[1:4]
ws = connect(db)
did = ws.datasets.find("CMeEE", "dev").dataset_id

def pause(self, event_id):          # inside the transaction: the event row is written, not committed
    Path(marker).write_text(f"in transaction {event_id}")
    time.sleep(120)

if mode == "mid":
    AnnotationStore._before_commit = pause
ann, rev = ws.annotations.current(did, 0)
ws.annotations.save(did, 0, Annotation(ann.spans[1:]), author="killed", reason="kill test", base_revision=rev)
Path(marker).write_text("committed")
time.sleep(120)
"""


@pytest.mark.parametrize("mode", ["mid", "after"])
def test_process_killed_during_a_save_leaves_the_database_consistent(tmp_path, mode):
    path = tmp_path / "ws.duckdb"
    ws = connect(path)
    did = ingest(ws, CMEEE_DEV)
    original, _ = ws.annotations.current(did, 0)
    ws.close()                        # DuckDB lets one process at a time open the file
    marker = tmp_path / "marker"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(marker), mode], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), child.communicate(timeout=5)[1].decode()[-2000:]
        assert marker.read_text().startswith("in transaction" if mode == "mid" else "committed")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    ws = connect(path)                # replays the WAL the killed process left
    events = ws.annotations.events(did)
    ann, rev = ws.annotations.current(did, 0)
    if mode == "mid":                 # fully before: no event, revision 0, the original gold
        assert events == [] and rev == 0 and ann == original
    else:                             # fully after: one event, revision 1
        assert [(e.author, e.revision) for e in events] == [("killed", 1)]
        assert rev == 1 and ann == Annotation(original.spans[1:]) and events[0].before == original
    # and the workspace takes the next save normally
    ev = ws.annotations.save(did, 0, Annotation(ann.spans[1:]), author="next", reason="", base_revision=rev)
    assert ev.revision == rev + 1
    ws.close()


def test_an_event_keeps_the_provenance_of_its_accepted_suggestions(db):
    from cblue_core.annotation.provenance import Provenance, Suggestion, SuggestionSource

    ws, did, path = db
    ann, _ = ws.annotations.current(did, 0)
    added = Span(0, 2, "sym", "患儿")
    prov = (Provenance(SuggestionSource("run", "1"), (Suggestion(added, 0.87),)),)
    ev = ws.annotations.save(did, 0, Annotation(ann.spans + (added,)), author="alice", base_revision=0,
                             provenance=prov)
    assert ev.provenance == prov
    by_hand = ws.annotations.save(did, 1, drop_first(ws.annotations.current(did, 1)[0]), author="bob",
                                  base_revision=0)
    reverted = ws.annotations.revert(ev.event_id, author="alice")
    ws.close()
    ws = connect(path)
    assert [e.provenance for e in ws.annotations.events(did)] == [prov, (), ()]
    assert ws.annotations.event(ev.event_id).provenance == prov
    assert by_hand.provenance == () and reverted.provenance == ()
    raw = ws.db.con.execute("SELECT provenance FROM annotation_events ORDER BY event_id").fetchall()
    assert json.loads(raw[0][0])[0]["accepted"][0] == {"span": {"start": 0, "end": 2, "type": "sym", "text": "患儿"},
                                                      "score": 0.87}
    assert raw[1][0] is None and raw[2][0] is None
    ws.close()
