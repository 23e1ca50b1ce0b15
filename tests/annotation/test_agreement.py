"""Agreement figures on hand-made cases (the arithmetic is in the comments), and adjudication."""
from __future__ import annotations

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.agreement import adjudicate, cohen_kappa, span_agreement
from cblue_core.records import Span, Triple
from tests.annotation.conftest import CMEEE_DEV, ingest


def S(s, e, t):
    return Span(s, e, t)


A = [Annotation((S(0, 2, "dis"), S(3, 5, "sym"), S(6, 8, "sym"))),
     Annotation((S(1, 4, "dru"),)),
     Annotation()]
B = [Annotation((S(0, 2, "dis"), S(3, 5, "dis"), S(6, 8, "sym"))),
     Annotation((S(1, 4, "dru"), S(5, 7, "bod"))),
     Annotation()]


def test_span_agreement_hand_made():
    ag = span_agreement(A, B)
    # matched: (0,2,dis), (6,8,sym), (1,4,dru) -> tp = 3; A has 4 spans, B has 5
    assert ag.precision == pytest.approx(3 / 5)          # 0.6
    assert ag.recall == pytest.approx(3 / 4)             # 0.75
    assert ag.f1 == pytest.approx(2 * 3 / (4 + 5))       # 0.6667 = 2PR/(P+R) = 0.9/1.35
    assert ag.examples == 3 and ag.disagreements == (0, 1)
    # per example: 2*2/(3+3), 2*1/(1+2), both empty = 1
    assert ag.per_example == pytest.approx((2 / 3, 2 / 3, 1.0))
    # dis: A 1, B 2, tp 1 -> f1 2/3; sym: A 2, B 1, tp 1 -> 2/3; dru 1/1/1; bod: only B -> 0
    assert ag.per_type["dis"].f1 == pytest.approx(2 / 3) and ag.per_type["dis"].precision == 0.5
    assert ag.per_type["sym"]["f1"] == pytest.approx(2 / 3) and ag.per_type["sym"]["recall"] == 0.5
    assert ag.per_type["dru"].f1 == 1.0
    assert (ag.per_type["bod"].f1, ag.per_type["bod"].precision, ag.per_type["bod"].n_b) == (0.0, 0.0, 1)
    assert span_agreement(A, A).f1 == 1.0 and span_agreement([Annotation()], [Annotation()]).f1 == 1.0
    with pytest.raises(ValueError, match="not aligned"):
        span_agreement(A, B[:2])


def test_triples_and_terms_agree_as_items():
    t1, t2 = Triple("糖尿病", "并发症", "肾病", "疾病", "疾病"), Triple("糖尿病", "临床表现", "多饮", "疾病", "症状")
    ag = span_agreement([Annotation(triples=(t1, t2))], [Annotation(triples=(t1,))])
    assert (ag.precision, ag.recall, ag.f1) == (1.0, 0.5, pytest.approx(2 / 3))
    assert set(ag.per_type) == {"并发症", "临床表现"}
    ag = span_agreement([Annotation(terms=("高血压", "2型糖尿病"))], [Annotation(terms=("高血压",))])
    assert ag.per_type["term"].tp == 1 and ag.f1 == pytest.approx(2 / 3)


def test_cohen_kappa_hand_made():
    a = list("aaaaabbbbb")
    b = list("aaaabbbbba")
    # p_o = 8/10; marginals 5/5 and 5/5 -> p_e = (5*5 + 5*5)/100 = 0.5; kappa = 0.3/0.5 = 0.6
    assert cohen_kappa(a, b) == pytest.approx(0.6)
    # p_o = 4/6; A x3 y2 z1, B x2 y2 z2 -> p_e = (6 + 4 + 2)/36 = 1/3; kappa = (2/3-1/3)/(2/3) = 0.5
    assert cohen_kappa(list("xxxyyz"), list("xxyyzz")) == pytest.approx(0.5)
    # p_o = 0, p_e = 0.5 -> -1
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) == 1.0          # p_e = 1: perfect agreement
    assert cohen_kappa(["0", "1", "2"], ["0", "1", "2"]) == 1.0
    with pytest.raises(ValueError):
        cohen_kappa([], [])
    with pytest.raises(ValueError, match="not aligned"):
        cohen_kappa(["a"], ["a", "b"])


def test_adjudicate_span_by_span():
    a = Annotation((S(0, 2, "dis"), S(3, 5, "sym")))
    b = Annotation((S(0, 2, "dis"), S(3, 5, "dis"), S(6, 8, "bod")))
    # agreed spans are kept; disputed ones only when chosen
    assert adjudicate(a, b, {}).spans == (S(0, 2, "dis"),)
    assert adjudicate(a, b, {(3, 5, "dis"): True}).spans == (S(0, 2, "dis"), S(3, 5, "dis"))
    assert adjudicate(a, b, {S(3, 5, "sym"): "a", S(6, 8, "bod"): "b"}).spans == (
        S(0, 2, "dis"), S(3, 5, "sym"), S(6, 8, "bod"))
    assert adjudicate(a, b, {S(0, 2, "dis"): False, S(3, 5, "sym"): True}).spans == (S(3, 5, "sym"),)
    assert adjudicate(a, b, {}, undecided="keep").spans == (S(0, 2, "dis"), S(3, 5, "sym"), S(3, 5, "dis"),
                                                             S(6, 8, "bod"))
    with pytest.raises(ValueError, match="no choice"):
        adjudicate(a, b, {}, undecided="error")
    with pytest.raises(ValueError, match="neither annotator"):
        adjudicate(a, b, {S(9, 10, "dis"): True})
    with pytest.raises(ValueError, match="True, False, 'a' or 'b'"):
        adjudicate(a, b, {S(3, 5, "sym"): "yes"})
    # labels: the same label stays; differing labels need a choice
    assert adjudicate(Annotation(label="1"), Annotation(label="1"), {}).label == "1"
    assert adjudicate(Annotation(label="1"), Annotation(label="0"), {"label": "b"}).label == "0"
    with pytest.raises(ValueError, match="labels differ"):
        adjudicate(Annotation(label="1"), Annotation(label="0"), {})
    # triples and terms
    t1, t2 = Triple("a", "并发症", "b", "疾病", "疾病"), Triple("a", "病因", "c", "疾病", "社会学")
    assert adjudicate(Annotation(triples=(t1,)), Annotation(triples=(t1, t2)),
                      {("a", "病因", "c"): True}).triples == (t1, t2)
    assert adjudicate(Annotation(terms=("x", "y")), Annotation(terms=("x",)), {"y": "a"}).terms == ("x", "y")


def test_agreement_between_two_authors_in_a_workspace(ws):
    did = ingest(ws, CMEEE_DEV)
    for idx in (0, 1):
        ann, rev = ws.annotations.current(did, idx)
        ev = ws.annotations.save(did, idx, Annotation(ann.spans[1:]), author="alice", reason="", base_revision=rev)
        ws.annotations.save(did, idx, Annotation(ev.after.spans[:-1]), author="bob", reason="",
                           base_revision=rev + 1)
    alice, bob = ws.annotations.by_author(did, "alice"), ws.annotations.by_author(did, "bob")
    common = sorted(set(alice) & set(bob))
    ag = span_agreement([alice[i] for i in common], [bob[i] for i in common])
    n_alice = sum(len(alice[i].spans) for i in common)
    assert ag.recall == pytest.approx((n_alice - 2) / n_alice) and ag.precision == 1.0


def test_disputed_items_each_once_with_its_side():
    from cblue_core.annotation.agreement import disputed_items

    text = "糖尿病可致肾病"
    a = Annotation((S(0, 3, "dis"), S(5, 7, "dis"), S(5, 7, "dis")), terms=("高血压", "糖尿病"))
    b = Annotation((S(0, 3, "dis"), S(5, 7, "sym")), (Triple("糖尿病", "并发症", "肾病", "疾病", "疾病"),),
                   terms=("糖尿病",))
    got = [(d.shown, d.in_a) for d in disputed_items(a, b, text)]
    assert got == [("dis 肾病 [5,7)", True), ("sym 肾病 [5,7)", False),
                   ("(糖尿病, 并发症, 肾病)", False), ("高血压", True)]
    assert disputed_items(a, a, text) == []
    # keeping exactly the disputed items A has gives back A's items (the adjudication round trip)
    keep = {d.item: d.in_a for d in disputed_items(a, b, text)}
    assert set(adjudicate(a, b, keep).spans) == set(a.spans)


def test_compare_annotators_by_item_and_by_label():
    from cblue_core.annotation.agreement import compare_annotators

    c = compare_annotators(dict(enumerate(A)), {0: B[0], 2: B[2], 9: Annotation()}, labels=False)
    assert c.common == (0, 2) and c.differ == (0,) and c.items is not None and c.kappa is None
    assert c.items.examples == 2
    c = compare_annotators({1: Annotation(label="a"), 2: Annotation(label="b")},
                           {1: Annotation(label="a"), 2: Annotation(label="a")}, labels=True)
    assert c.differ == (2,) and c.raw_agreement == 0.5 and c.kappa == pytest.approx(0.0)
    assert compare_annotators({1: A[0]}, {2: B[0]}, labels=False).common == ()
