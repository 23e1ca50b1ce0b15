"""Edit changes in words, the loaded order kept, editor marks <-> spans, gold at a revision."""
from __future__ import annotations

from cblue_core.annotation import Annotation
from cblue_core.annotation.changes import (
    change_lines,
    change_summary,
    gold_at_revision,
    mention_marks,
    settled,
    spans_from_offsets,
)
from cblue_core.annotation.model import AnnotationEvent
from cblue_core.records import Span, Triple
from cblue_core.tasks import get_task

CMEEE, QIC, CDN = get_task("CMeEE"), get_task("KUAKE-QIC"), get_task("CHIP-CDN")
T1 = Triple("糖尿病", "并发症", "肾病", "疾病", "疾病")


def test_change_lines_every_kind():
    a = Annotation((Span(0, 2, "dis", "感冒"),), (T1,), "病情诊断", ("高血压",))
    b = Annotation((Span(0, 2, "sym", "感冒"),), (), "病因分析", ("高血压", "糖尿病"))
    lines = change_lines(a, b, QIC)
    assert lines[:2] == ["− dis 感冒 [0,2)", "+ sym 感冒 [0,2)"]
    assert "− (糖尿病, 并发症, 肾病)" in lines and "+ 糖尿病" in lines
    assert lines[-1].startswith("label ") and "→" in lines[-1]
    assert change_lines(a, a, QIC) == [] and change_summary(a, a, QIC) == "no change"
    assert change_summary(a, b, QIC, limit=2).endswith(f"(+{len(lines) - 2})")


def test_settled_puts_items_back_in_loaded_order():
    s1, s2, s3 = Span(0, 1, "dis"), Span(2, 3, "sym"), Span(4, 5, "bod")
    loaded = Annotation((s2, s1), terms=("b", "a"))
    edited = Annotation((s1, s3, s2), terms=("a", "b"))
    assert settled(edited, loaded) == Annotation((s2, s1, s3), terms=("b", "a"))
    # undoing an edit leaves no change at all
    assert settled(Annotation((s1, s2), terms=("a", "b")), loaded) == loaded


def test_spans_from_offsets_keeps_recorded_mentions():
    text = "患者头痛发热"
    known = [Span(2, 4, "sym", "头痛(recorded)")]
    spans = spans_from_offsets(text, [{"start": 2, "end": 4, "type": "sym"},
                                      {"start": 4, "end": 6, "type": "sym"}], known)
    assert spans == (known[0], Span(4, 6, "sym", "发热"))


def test_mention_marks_first_occurrence_and_missing_left_out():
    text = "糖尿病可致肾病，糖尿病常见。"
    marks = mention_marks(text, [T1, Triple("糖尿病", "并发症", "不在文中", "疾病", "疾病")])
    assert marks == [{"start": 0, "end": 3, "type": "疾病"}, {"start": 5, "end": 7, "type": "疾病"},
                     {"start": 0, "end": 3, "type": "疾病"}]


def test_gold_at_revision_walks_the_events():
    g0, g1, g2 = Annotation(label="0"), Annotation(label="1"), Annotation(label="2")

    def ev(rev, before, after):
        return AnnotationEvent(event_id=rev, dataset_id=1, idx=0, revision=rev, author="x", created_at="",
                               kind="edit", reason="", before=before, after=after, base_revision=rev - 1)

    events = [ev(1, g0, g1), ev(2, g1, g2)]
    assert gold_at_revision(g2, 2, events, 2) is g2
    assert gold_at_revision(g2, 2, events, 1) == g1 and gold_at_revision(g2, 2, events, 0) == g0
    assert gold_at_revision(g2, 2, events, 7) is None
