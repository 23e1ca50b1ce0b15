"""Confident learning per span: planted noise in a small CMeEE file (a gold span dropped, one
retyped) is found and suggested back, a gold span the model barely believes is flagged, the
model's training records are left out, and runs without span probabilities are refused."""
from __future__ import annotations

import pytest

from cblue_core.annotation.label_issues import NoClassProbabilities, ProbabilitiesMissing
from cblue_core.annotation.span_issues import NO_SPAN, find_span_issues
from cblue_core.records import Example, Span
from cblue_core.tasks import get_task

CMEEE = get_task("CMeEE")
TEXT = "患者发热咳嗽三天伴头痛"
TRUE = [Span(2, 4, "sym", "发热"), Span(4, 6, "sym", "咳嗽"), Span(9, 11, "dis", "头痛")]
DROPPED, RETYPED = 6, 17          # planted noise: a gold span removed, a gold span given another type


def planted(n: int = 30, doubted: dict[int, float] | None = None):
    """Gold with the true spans except the planted noise; a run predicting the true spans at
    0.9 (``doubted``: example -> a lower probability of its first span), and on every fifth
    example a span gold rightly lacks, at a modest 0.55."""
    gold, preds = [], []
    for i in range(n):
        spans = list(TRUE)
        if i == DROPPED:
            spans = spans[1:]
        if i == RETYPED:
            spans[2] = Span(9, 11, "sym", "头痛")
        gold.append(Example(key=f"k{i}", index=i, text=TEXT, spans=spans))
        predicted = [(s, 0.9) for s in TRUE]
        if doubted and i in doubted:
            predicted[0] = (TRUE[0], doubted[i])
        if i == DROPPED:
            predicted[0] = (TRUE[0], 0.97)
        if i == RETYPED:
            predicted[2] = (TRUE[2], 0.95)
        if i % 5 == 0:
            predicted.append((Span(7, 8, "bod", "伴"), 0.55))
        preds.append(Example(key=f"k{i}", index=i, text=TEXT, spans=[s for s, _ in predicted],
                             meta={"span_probabilities": [p for _, p in predicted]}))
    return gold, preds


def test_retyped_and_dropped_gold_spans_are_found_first():
    gold, preds = planted()
    result = find_span_issues(CMEEE, gold, preds)
    assert [i.idx for i in result.issues] == [RETYPED, DROPPED]   # gold's type has no mass at all
    assert result.examined == 30 and result.excluded_training == 0
    retyped, dropped = result.issues
    assert (dropped.given, dropped.suggested) == (NO_SPAN, "sym '发热' [2, 4)")
    assert dropped.reason == "model finds sym '发热' [2, 4) at 0.97; gold has no span there"
    assert (retyped.given, retyped.suggested) == ("sym '头痛' [9, 11)", "dis '头痛' [9, 11)")
    assert retyped.reason == "model types '头痛' [9, 11) as dis at 0.95; gold says sym"
    assert retyped.score < dropped.score      # lower quality: more likely wrong
    assert (retyped.extent, dropped.extent) == ((9, 11), (2, 4))


def test_a_gold_span_the_model_barely_believes_is_flagged():
    gold, preds = planted(doubted={11: 0.2})
    issues = find_span_issues(CMEEE, gold, preds).issues
    doubted = next(i for i in issues if i.idx == 11)
    assert (doubted.given, doubted.suggested) == ("sym '发热' [2, 4)", NO_SPAN)
    assert "only 0.20" in doubted.reason
    assert {i.idx for i in issues} == {DROPPED, RETYPED, 11}


def test_training_records_are_left_out_and_counted():
    gold, preds = planted()
    result = find_span_issues(CMEEE, gold, preds, excluded={DROPPED, 1, 99})
    assert [i.idx for i in result.issues] == [RETYPED]
    assert result.excluded_training == 2 and result.examined == 28


def test_run_without_span_probabilities_is_refused():
    gold, preds = planted()
    preds[3].meta = {}
    with pytest.raises(ProbabilitiesMissing, match=r"record 'k3' \(index 3\).*span_probabilities"):
        find_span_issues(CMEEE, gold, preds)


def test_classification_task_is_refused():
    gold = [Example(key="a", index=0, text="发热", label="其他")]
    with pytest.raises(NoClassProbabilities, match="KUAKE-QIC"):
        find_span_issues(get_task("KUAKE-QIC"), gold, gold)
