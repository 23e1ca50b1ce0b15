"""Confident learning over CMeIE candidate mentions: a gold triple dropped from a small file
shows as a confident object no gold triple uses, a gold mention the model barely believes is
flagged, training records are left out, runs without candidates are refused."""
from __future__ import annotations

import pytest

from cblue_core.annotation.label_issues import NoClassProbabilities, ProbabilitiesMissing
from cblue_core.annotation.mention_issues import find_mention_issues
from cblue_core.annotation.model_queues import find_issues
from cblue_core.records import Example, Triple
from cblue_core.tasks import get_task

CMEIE = get_task("CMeIE")
DROPPED, DOUBTED = 5, 12     # record 5 lost its 咳嗽 triple; record 12's gold has 三天, which the model doubts


def planted(n: int = 30):
    gold, preds = [], []
    for i in range(n):
        triples = [Triple("肺炎", "临床表现", "发热", "疾病", "症状"), Triple("肺炎", "临床表现", "咳嗽", "疾病", "症状")]
        objects = [["发热", 0.9], ["咳嗽", 0.97 if i == DROPPED else 0.9]]
        if i == DROPPED:
            triples = triples[:1]
        if i == DOUBTED:
            triples.append(Triple("肺炎", "临床表现", "三天", "疾病", "症状"))
            objects.append(["三天", 0.1])
        if i % 4 == 0:
            objects.append(["患者", 0.3])     # a weak candidate gold rightly does not use
        gold.append(Example(key=f"c{i}", index=i, text=f"肺炎患者发热咳嗽三天{i}", triples=triples))
        preds.append(Example(key=f"c{i}", index=i, text=gold[-1].text, triples=triples[:2],
                             meta={"subjects": [["肺炎", 0.95]], "objects": objects}))
    return gold, preds


def test_dropped_triple_and_doubted_mention_are_found():
    gold, preds = planted()
    result = find_mention_issues(CMEIE, gold, preds)
    by_idx = {i.idx: i for i in result.issues}
    assert set(by_idx) == {DROPPED, DOUBTED} and result.examined == 30
    assert by_idx[DROPPED].reason == "model finds '咳嗽' as object at 0.97; no gold triple has it as object"
    assert (by_idx[DROPPED].given, by_idx[DROPPED].suggested) == ("not object", "object '咳嗽'")
    assert by_idx[DOUBTED].reason == "model gives the gold object '三天' only 0.10"
    assert find_issues(CMEIE, gold, preds).issues == result.issues      # the dispatch by kind


def test_training_records_are_left_out_and_counted():
    gold, preds = planted()
    result = find_mention_issues(CMEIE, gold, preds, excluded={DROPPED})
    assert [i.idx for i in result.issues] == [DOUBTED] and result.excluded_training == 1


def test_runs_without_candidates_and_other_tasks_are_refused():
    gold, preds = planted()
    preds[2].meta = {"triple_scores": [0.9]}
    with pytest.raises(ProbabilitiesMissing, match=r"'c2' \(index 2\).*meta\[\"subjects\"\]"):
        find_mention_issues(CMEIE, gold, preds)
    with pytest.raises(NoClassProbabilities, match="CMeEE"):
        find_mention_issues(get_task("CMeEE"), gold, preds)
