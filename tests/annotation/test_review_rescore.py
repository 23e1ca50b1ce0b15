"""The review queue (all runs wrong, runs disagree, inconsistent types, validation defects) and
re-scoring runs on corrected gold."""
from __future__ import annotations

import json

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.rescore import error_changes, rescore_run
from cblue_core.annotation.review import review_queue
from cblue_core.records import Span
from cblue_core.runs.record import import_run
from tests.annotation.conftest import CMEEE_DEV, CMEEE_PRED, ingest, write_json

TEXTS = ["患者发热咳嗽。", "发热三天。", "患儿发热。", "口服阿莫西林。"]
GOLD = [
    [(2, 3, "sym", "发热"), (4, 5, "sym", "咳嗽")],
    [(0, 1, "dis", "发热")],                 # 发热 typed dis here, sym elsewhere
    [(2, 3, "sym", "发热")],
    [(2, 5, "drug", "阿莫西林")],            # unknown type: a validation warning for record 3
]


def records(spans_per_text):
    return [{"text": t, "entities": [{"start_idx": s, "end_idx": e, "type": ty, "entity": m}
                                     for s, e, ty, m in spans]}
            for t, spans in zip(TEXTS, spans_per_text)]


def run_file(changes):
    spans = [list(g) for g in GOLD]
    for idx, new in changes.items():
        spans[idx] = new
    return json.dumps(records(spans), ensure_ascii=False).encode()


@pytest.fixture
def review_ws(ws, tmp_path):
    did = ingest(ws, write_json(tmp_path / "CMeEE_dev.json", records(GOLD)))
    # run A misses 咳嗽 in 0 and adds 患儿 in 2; run B misses 发热 in 0
    import_run(ws, did, run_file({0: [GOLD[0][0]], 2: GOLD[2] + [(0, 1, "bod", "患儿")]}),
               file_name="a.json")
    import_run(ws, did, run_file({0: [GOLD[0][1]]}), file_name="b.json")
    return ws, did


def by_reason(items):
    out = {}
    for it in items:
        out.setdefault(it.reason, {})[it.idx] = it
    return out


def test_review_queue_reasons_and_order(review_ws):
    ws, did = review_ws
    items = review_queue(ws, did)
    q = by_reason(items)
    assert set(q["validation_defect"]) == {3} and "record 3" in q["validation_defect"][3].detail
    assert "unknown label 'drug'" in q["validation_defect"][3].detail
    # 0: both runs have an error; each run: 1 error row of 2 -> score mean(1/2, 1/2)
    assert set(q["all_runs_wrong"]) == {0} and q["all_runs_wrong"][0].score == pytest.approx(0.5)
    assert "missed ×2" in q["all_runs_wrong"][0].detail
    # 0: {发热} vs {咳嗽}: Jaccard 0 -> 1.0; 2: {发热} vs {发热, 患儿}: Jaccard 1/2 -> 0.5
    assert {i: it.score for i, it in q["runs_disagree"].items()} == {0: 1.0, 2: 0.5}
    # 发热: sym in 0 and 2, dis in 1 -> 1 - 1/3 for 1, 1 - 2/3 for 0 and 2
    inc = q["inconsistent_type"]
    assert inc[1].score == pytest.approx(2 / 3) and inc[0].score == pytest.approx(1 / 3)
    assert inc[1].detail == "'发热' is dis here; elsewhere sym ×2"
    assert [(it.idx, it.reason) for it in items[:3]] == [
        (3, "validation_defect"), (0, "runs_disagree"), (1, "inconsistent_type")]
    assert [it.score for it in items] == sorted((it.score for it in items), reverse=True)
    assert len(review_queue(ws, did, limit=2)) == 2
    assert {it.reason for it in review_queue(ws, did, reasons=["runs_disagree"])} == {"runs_disagree"}
    with pytest.raises(ValueError, match="unknown review reason"):
        review_queue(ws, did, reasons=["typo"])


def test_review_queue_follows_the_current_gold(review_ws):
    ws, did = review_ws

    def save(idx, spans):
        _, rev = ws.annotations.current(did, idx)
        ws.annotations.save(did, idx, Annotation(tuple(Span(*s) for s in spans)), author="c", reason="",
                           base_revision=rev)

    save(3, [(2, 6, "dru")])           # the defect fixed
    save(1, [(0, 2, "sym")])           # the type made consistent
    save(0, [(2, 4, "sym")])           # 咳嗽 removed: run A is now right on 0
    q = by_reason(review_queue(ws, did))
    assert "validation_defect" not in q and "inconsistent_type" not in q
    # 0 left the all-wrong list (edited examples are re-scored); 1 and 3 joined it: both runs
    # copied the old gold (dis, drug), which the edits changed (sym, dru)
    assert set(q["all_runs_wrong"]) == {1, 3} and "wrong_type ×2" in q["all_runs_wrong"][1].detail
    assert set(q["runs_disagree"]) == {0, 2}


def test_rescore_and_error_changes_on_corrected_gold(ws):
    did = ingest(ws, CMEEE_DEV)
    run = import_run(ws, did, CMEEE_PRED)
    stored = run.evaluation.metrics["f1"]
    # official counts: 134 gold, 132 predicted, 127 matched
    assert stored == pytest.approx(2 * 127 / (134 + 132))
    assert rescore_run(ws, run.run_id, "original").metrics["f1"] == pytest.approx(stored)
    # gold 0: drop 四肢肌无力 (the run missed it); gold 3: drop 青霉素 (the run found it)
    a0, r0 = ws.annotations.current(did, 0)
    ws.annotations.save(did, 0, Annotation(tuple(s for s in a0.spans if s.text != "四肢肌无力")),
                       author="c", reason="not an entity", base_revision=r0)
    a3, r3 = ws.annotations.current(did, 3)
    ws.annotations.save(did, 3, Annotation(tuple(s for s in a3.spans if s.text != "青霉素")),
                       author="c", reason="test", base_revision=r3)
    ws.annotations.create_version(did, "v1", "c")
    ev = rescore_run(ws, run.run_id, "v1")
    # 132 gold, 132 predicted, 126 matched
    assert ev.metrics["f1"] == pytest.approx(2 * 126 / (132 + 132))
    ch = error_changes(ws, run.run_id, "v1")
    assert [(r["idx"], r["category"], r["gold_text"]) for r in ch.fixed] == [(0, "missed", "四肢肌无力")]
    assert [(r["idx"], r["category"], r["pred_text"]) for r in ch.new] == [(3, "spurious", "青霉素")]
    assert ch.delta == pytest.approx(2 * 126 / 264 - stored) and ch.examples == (0, 3)
    assert ch.headline == "f1" and ch.before == pytest.approx(stored)
    assert error_changes(ws, run.run_id, None, base="v1").fixed == []
