"""One prediction judged against its gold: the marks the demo shows."""
from __future__ import annotations

from cblue_core.analysis.judge import judge
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task

TEXT = "患者发热咳嗽"


def test_spans_right_wrong_and_missed_are_marked():
    gold = Example(key="a", index=0, text=TEXT, spans=[Span(2, 4, "sym", "发热"), Span(4, 6, "sym", "咳嗽")])
    pred = Example(key="a", index=0, text=TEXT, spans=[Span(2, 4, "sym", "发热"), Span(0, 2, "bod", "患者")])
    v = judge(get_task("CMeEE"), gold, pred)
    assert v.correct is False and (v.right, v.wrong) == (1, 2)
    assert v.marks == {Span(2, 4, "sym", "发热"): "correct", Span(4, 6, "sym", "咳嗽"): "missed",
                       Span(0, 2, "bod", "患者"): "spurious"}
    assert judge(get_task("CMeEE"), gold, gold).correct is True


def test_labels_and_triples():
    qic = get_task("KUAKE-QIC")
    ask = Example(key="q", index=0, text="头痛怎么办", label="治疗方案")
    assert judge(qic, ask, Example(key="q", index=0, text="头痛怎么办", label="治疗方案")).correct is True
    assert judge(qic, ask, Example(key="q", index=0, text="头痛怎么办", label="病因分析")).correct is False
    gold = Example(key="t", index=0, text="肺炎常见发热", triples=[Triple("肺炎", "临床表现", "发热")])
    v = judge(get_task("CMeIE"), gold, Example(key="t", index=0, text=gold.text))
    assert v.correct is False and v.wrong == 1 and not v.marks
