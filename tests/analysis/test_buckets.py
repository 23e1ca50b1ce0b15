"""Bucketed analysis: relation buckets (triples per example, text length, argument nesting, the
train split), the seen/unseen feature, and no bucket without gold items; bucket counts checked
against hand counts and against the official scorer's totals."""
from __future__ import annotations

import pytest

from cblue_core.analysis.buckets import (
    SEEN_FEATURE,
    bucket_kind,
    label_buckets,
    relation_buckets,
    run_buckets,
    span_buckets,
)
from cblue_core.io.predictions import match_predictions
from cblue_core.io.validate import load
from cblue_core.metrics.cblue import cmeie_normalise
from cblue_core.metrics.registry import score
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task
from tests.conftest import SAMPLE_DATA

CMEIE = get_task("CMeIE")


def sample(task: str):
    """The sample dev split of ``task`` and its sample predictions, aligned."""
    spec = get_task(task)
    gold = load(SAMPLE_DATA / f"cblue/{task}/{task}_dev.json", spec).examples
    return gold, match_predictions(spec, gold, SAMPLE_DATA / f"cblue/{task}/{task}_dev.pred.json").predictions


def by(buckets, feature):
    return {b.bucket: b for b in buckets if b.feature == feature}


def test_relation_buckets_count_triples_by_hand():
    gold = [Example("0", 0, text="肺癌可致咳嗽", triples=[Triple("肺癌", "临床表现", "咳嗽"),
                                                      Triple("小细胞肺癌", "临床表现", "咳嗽")]),
            Example("1", 1, text="HIV感染见发热" * 10, triples=[Triple("HIV感染", "临床表现", "发热")])]
    pred = [Example("0", 0, triples=[Triple("肺癌", "临床表现", "咳嗽"), Triple("肺癌", "病因", "咳嗽")]),
            Example("1", 1, triples=[Triple("hiv感染", "临床表现", "发热")])]
    train = [Example("t", 0, triples=[Triple("肺癌", "临床表现", "咳嗽")])]
    scores = run_buckets(CMEIE, gold, pred, train)
    per = by(scores, "triples per example")
    assert (per["2"].tp, per["2"].fp, per["2"].fn) == (1, 1, 1)
    assert (per["1"].tp, per["1"].fp, per["1"].fn) == (1, 0, 0)        # matched as the scorer does (case)
    nesting = by(scores, "argument nesting")
    assert (nesting["nested"].tp, nesting["nested"].fn, nesting["nested"].fp) == (1, 1, 0)
    assert (nesting["flat"].tp, nesting["flat"].fp) == (1, 1)             # the spurious 病因 triple
    trained = by(scores, "triple in the train split")
    assert trained["in train"].tp == 1 and trained["not in train"].support == 2
    length = by(scores, "text length")
    assert set(length) == {"≤40", "41-80"} and length["41-80"].tp == 1
    assert SEEN_FEATURE not in {b.feature for b in scores}               # no records declared
    assert bucket_kind(CMEIE, gold) == "relation"


def test_relation_bucket_totals_equal_the_official_score():
    gold, pred = sample("CMeIE")
    official = score(CMEIE, gold, pred, intervals=False)
    tp = int(official.stats.tp.sum())
    fn = int(official.stats.fn.sum())
    scores = relation_buckets(gold, pred, key=cmeie_normalise)
    for feature in ("triples per example", "text length", "argument nesting"):
        buckets = by(scores, feature).values()
        assert sum(b.tp for b in buckets) == tp and sum(b.fn for b in buckets) == fn, feature


def test_seen_and_unseen_buckets_where_the_model_declares_its_records():
    gold = [Example(str(i), i, text="头痛", spans=[Span(0, 2, "sym", "头痛")]) for i in range(4)]
    pred = [Example(str(i), i, spans=[Span(0, 2, "sym", "头痛")] if i < 3 else []) for i in range(4)]
    scores = by(span_buckets(gold, pred, seen=frozenset({0, 1})), SEEN_FEATURE)
    assert (scores["yes (seen)"].tp, scores["yes (seen)"].fn) == (2, 0)
    assert (scores["no (unseen)"].tp, scores["no (unseen)"].fn) == (1, 1)
    assert not by(span_buckets(gold, pred), SEEN_FEATURE)
    labelled = [Example(str(i), i, text="x", label="a") for i in range(3)]
    guessed = [Example(str(i), i, label="a" if i else "b") for i in range(3)]
    seen = by(label_buckets(labelled, guessed, seen=frozenset({0})), SEEN_FEATURE)
    assert seen["yes (seen)"].f1 == 0 and seen["no (unseen)"].f1 == 1


def test_no_bucket_holds_only_spurious_items():
    # the prediction has a nested pair (inner and outer roles) that the gold does not have
    gold = [Example("0", 0, text="左肺上叶癌", spans=[Span(0, 5, "dis", "左肺上叶癌")])]
    pred = [Example("0", 0, spans=[Span(0, 5, "dis", "左肺上叶癌"), Span(0, 4, "bod", "左肺上叶"),
                                    Span(1, 2, "bod", "肺")])]
    scores = span_buckets(gold, pred)
    assert scores and all(b.support > 0 for b in scores)
    roles = by(scores, "nesting role")
    assert set(roles) == {"flat"}                      # the spurious "inner and outer" span: no bucket
    lengths = by(scores, "entity length")
    assert set(lengths) == {"5-7"}                     # the spurious 1- and 4-character spans: no bucket


@pytest.mark.parametrize("n_boot", [50])
def test_span_buckets_still_sum_to_the_official_counts(n_boot):
    gold, pred = sample("CMeEE")
    official = score(get_task("CMeEE"), gold, pred, intervals=False)
    lengths = by(span_buckets(gold, pred, n_boot=n_boot), "sentence length").values()
    assert sum(b.tp for b in lengths) == int(official.stats.tp.sum())
    assert sum(b.fn for b in lengths) == int(official.stats.fn.sum())
