"""Error taxonomy: every category and tag on hand-made cases, consistency with the scorer, and
the speed of scoring + taxonomy on the real CMeEE dev set."""
from __future__ import annotations

import random

import pytest

from cblue_core.analysis.taxonomy import (
    ErrorRow,
    categorize,
    category_counts,
    dialogue_act_errors,
    dialogue_span_errors,
    examples_by_category,
    label_errors,
    relation_errors,
    span_errors,
    term_errors,
)
from cblue_core.io.resources import Schema
from cblue_core.io.validate import load
from cblue_core.metrics.cblue import cmeie_normalise
from cblue_core.metrics.registry import score
from cblue_core.records import Example, Span, Triple, Turn


def ex(i=0, **kw) -> Example:
    return Example(key=str(i), index=i, **kw)


def _cats(rows):
    return sorted((r.category, r.gold, r.pred, r.tags) for r in rows)


# ---------------------------------------------------------------------- spans

def test_span_categories():
    # text: 0123456789...
    gold = [ex(0, spans=[Span(0, 2, "bod"),     # correct
                         Span(3, 5, "sym"),     # same bounds, pred says dis -> wrong_type
                         Span(6, 9, "dis"),     # pred 6-8 dis -> wrong_boundary
                         Span(10, 13, "dru"),   # pred 11-14 pro -> wrong_both
                         Span(20, 22, "mic")])]  # nothing near -> missed
    pred = [ex(0, spans=[Span(0, 2, "bod"), Span(3, 5, "dis"), Span(6, 8, "dis"),
                         Span(11, 14, "pro"), Span(30, 31, "dep")])]   # 30-31 -> spurious
    rows = span_errors(gold, pred)
    assert [(r.category, r.gold, r.pred) for r in rows] == [
        ("correct", Span(0, 2, "bod"), Span(0, 2, "bod")),
        ("wrong_type", Span(3, 5, "sym"), Span(3, 5, "dis")),
        ("wrong_boundary", Span(6, 9, "dis"), Span(6, 8, "dis")),
        ("wrong_both", Span(10, 13, "dru"), Span(11, 14, "pro")),
        ("missed", Span(20, 22, "mic"), None),
        ("spurious", None, Span(30, 31, "dep")),
    ]
    assert all(r.example == 0 and r.turn == -1 and r.tags == () for r in rows)
    assert isinstance(rows[0], ErrorRow) and isinstance(rows[0].gold, Span)


def test_span_pairing_is_one_to_one_and_prefers_largest_overlap():
    gold = [ex(0, spans=[Span(0, 6, "sym")])]
    pred = [ex(0, spans=[Span(0, 2, "sym"), Span(1, 6, "sym")])]
    rows = span_errors(gold, pred)
    # overlaps: 0-2 -> 2 chars, 1-6 -> 5 chars: 1-6 is the wrong_boundary, 0-2 spurious
    assert ("wrong_boundary", Span(0, 6, "sym"), Span(1, 6, "sym")) in [(r.category, r.gold, r.pred) for r in rows]
    assert [r.pred for r in rows if r.category == "spurious"] == [Span(0, 2, "sym")]


def test_nesting_tags():
    # 呼吸肌麻痹: bod 呼吸肌 (0-3) inside sym 呼吸肌麻痹 (0-5)
    gold = [ex(0, spans=[Span(0, 3, "bod"), Span(0, 5, "sym")]),
            ex(1, spans=[Span(0, 3, "bod"), Span(0, 5, "sym")])]
    pred = [ex(0, spans=[Span(0, 3, "bod")]),      # inner found, outer missed
            ex(1, spans=[Span(0, 5, "sym")])]      # outer found, inner missed
    rows = span_errors(gold, pred)
    by = {(r.example, r.gold): r for r in rows}
    assert by[(0, Span(0, 5, "sym"))].category == "missed"
    assert by[(0, Span(0, 5, "sym"))].tags == ("inner_found_outer_missed",)
    assert by[(0, Span(0, 3, "bod"))].tags == ()
    assert by[(1, Span(0, 3, "bod"))].category == "missed"
    assert by[(1, Span(0, 3, "bod"))].tags == ("outer_found_inner_missed",)
    assert examples_by_category(rows)["tag:inner_found_outer_missed"] == [0]


def test_nesting_tag_needs_a_miss_not_a_type_error():
    gold = [ex(0, spans=[Span(0, 3, "bod"), Span(0, 5, "sym")])]
    pred = [ex(0, spans=[Span(0, 3, "bod"), Span(0, 5, "dis")])]   # outer: wrong_type
    assert all(r.tags == () for r in span_errors(gold, pred))


def test_dialogue_span_rows_carry_the_turn():
    gold = [ex(0, turns=[Turn("医生", "你好", "1"),
                         Turn("患者", "头痛发热", "2", spans=(Span(0, 2, "Symptom"), Span(2, 4, "Symptom")))])]
    pred = [ex(0, turns=[Turn("医生", "你好", "1", spans=(Span(0, 2, "Drug"),)),
                         Turn("患者", "头痛发热", "2", spans=(Span(0, 2, "Symptom"),))])]
    rows = dialogue_span_errors(gold, pred)
    assert sorted((r.turn, r.category) for r in rows) == [(0, "spurious"), (1, "correct"), (1, "missed")]


def test_span_rows_agree_with_the_scorer_counts():
    rng = random.Random(4)
    gold, pred = [], []
    for i in range(200):
        g = {Span(s, s + rng.randint(1, 4), rng.choice("abc")) for s in rng.sample(range(20), 3)}
        p = {Span(x.start + rng.choice((0, 0, 1)), x.end, rng.choice("abc")) for x in g if rng.random() < 0.8}
        gold.append(ex(i, spans=sorted(g)))
        pred.append(ex(i, spans=sorted(p) + [Span(25, 27, "a")] * rng.randint(0, 1)))
    s = score("CMeEE", gold, pred, intervals=False)
    c = category_counts(span_errors(gold, pred))
    paired = c.get("wrong_type", 0) + c.get("wrong_boundary", 0) + c.get("wrong_both", 0)
    assert c["correct"] == s.extra["tp"]
    assert paired + c.get("missed", 0) == s.extra["fn"]
    assert paired + c.get("spurious", 0) == s.extra["fp"]


# ---------------------------------------------------------------------- relations

SCHEMAS = [Schema("疾病", "药物治疗", "药物"), Schema("疾病", "并发症", "疾病"), Schema("疾病", "临床表现", "症状")]


def test_relation_categories_and_tags():
    T = Triple
    gold = [ex(0, triples=[
        T("糖尿病", "药物治疗", "二甲双胍", "疾病", "药物"),                        # correct
        T("糖尿病", "并发症", "酮症酸中毒", "疾病", "疾病"),                        # wrong_predicate
        T("肺炎", "临床表现", "发热", "疾病", "症状"),                              # swapped
        T("高血压", "药物治疗", "硝苯地平控释片", "疾病", "药物", combined=True),   # argument_boundary
        T("哮喘", "临床表现", "喘息", "疾病", "症状"),                              # missed
    ])]
    pred = [ex(0, triples=[
        T("糖尿病", "药物治疗", "《二甲双胍》", "疾病", "药物"),
        T("糖尿病", "临床表现", "酮症酸中毒", "疾病", "疾病"),       # schema (疾病,临床表现,疾病) absent
        T("发热", "临床表现", "肺炎", "症状", "疾病"),               # swapped; schema absent
        T("高血压", "药物治疗", "硝苯地平", "疾病", "药物"),
        T("头痛", "病因", "感冒", "症状", "疾病"),                   # spurious; schema absent
    ])]
    rows = relation_errors(gold, pred, schemas=SCHEMAS, normalise=cmeie_normalise)
    got = {r.category: r for r in rows}
    assert set(got) == {"correct", "wrong_predicate", "swapped", "argument_boundary", "missed", "spurious"}
    assert got["correct"].tags == ()
    assert got["wrong_predicate"].tags == ("schema_violation",)
    assert got["swapped"].tags == ("schema_violation",)
    assert got["argument_boundary"].tags == ("object_boundary", "combined")
    assert got["missed"].pred is None and got["missed"].gold.object == "喘息"
    assert got["spurious"].tags == ("schema_violation",)
    assert isinstance(rows[0], ErrorRow) and isinstance(rows[0].gold, Triple)


def test_swapped_with_another_predicate_is_tagged():
    gold = [ex(0, triples=[Triple("A病", "并发症", "B病")])]
    pred = [ex(0, triples=[Triple("B病", "鉴别诊断", "A病")])]
    (row,) = relation_errors(gold, pred)
    assert row.category == "swapped" and row.tags == ("predicate_differs",)


def test_subject_boundary_and_combined_from_prediction():
    gold = [ex(0, triples=[Triple("急性胰腺炎", "病因", "胆结石")]), ex(1)]
    pred = [ex(0, triples=[Triple("胰腺炎", "病因", "胆结石")]),
            ex(1, triples=[Triple("x", "病因", "y", combined=True)])]
    rows = relation_errors(gold, pred)
    assert (rows[0].category, rows[0].tags) == ("argument_boundary", ("subject_boundary",))
    assert (rows[1].category, rows[1].example, rows[1].tags) == ("spurious", 1, ("combined",))


def test_cmeie_official_example_taxonomy(cblue_dir):
    gold = load(cblue_dir / "CMeIE/example_gold.json", "CMeIE").examples
    pred = load(cblue_dir / "CMeIE/example_pred.json", "CMeIE").examples
    rows = categorize("CMeIE", gold, pred)
    # correct 5 (see test_cblue); 社交性焦虑 and 踝关节 missed; 结晶性关节病 -> 晶性关节病 is an
    # argument_boundary; both 鉴别诊断 triples of line 2 are Combined
    assert category_counts(rows) == {"correct": 5, "missed": 2, "argument_boundary": 1,
                                     "tag:object_boundary": 1, "tag:combined": 2}


# ---------------------------------------------------------------------- terms

def test_term_categories():
    gold = [ex(0, terms=["高血压", "糖尿病"]), ex(1, terms=["肺炎"])]
    pred = [ex(0, terms=["高血压", "高血压病"]), ex(1, terms=["肺炎"])]
    icd = {"高血压", "糖尿病", "肺炎"}
    rows = term_errors(gold, pred, icd_terms=icd)
    assert [(r.example, r.category, r.term, r.tags) for r in rows] == [
        (0, "correct_term", "高血压", ()),
        (0, "missing_term", "糖尿病", ()),
        (0, "extra_term", "高血压病", ("term_not_in_icd",)),
        (1, "correct_term", "肺炎", ()),
    ]
    assert isinstance(rows[0], ErrorRow) and rows[0].gold == "高血压"
    assert all(r.tags == () for r in term_errors(gold, pred))   # no ICD list: no tag


# ---------------------------------------------------------------------- labels

def test_label_rows():
    gold = [ex(0, label="Age"), ex(1, label="Disease"), ex(2, label="Age"), ex(3, label=None)]
    pred = [ex(0, label="Age"), ex(1, label="Symptom"), ex(2, label=None), ex(3, label="Age")]
    rows = label_errors(gold, pred)
    assert [(r.example, r.category, r.cell, r.tags) for r in rows] == [
        (0, "correct", "Age->Age", ()),
        (1, "confusion", "Disease->Symptom", ()),
        (2, "confusion", "Age->None", ("no_prediction",)),
    ]                                   # example 3 has no gold label: no row
    assert isinstance(rows[0], ErrorRow) and (rows[0].gold, rows[0].pred) == ("Age", "Age")


def test_label_rows_map_qqr_na():
    rows = categorize("KUAKE-QQR", [ex(0, label="NA")], [ex(0, label="0")])
    assert rows[0].category == "correct" and rows[0].gold == "0"


def test_dialogue_act_rows():
    gold = [ex(0, turns=[Turn("医生", "x", "1", act="Request-Symptom"), Turn("患者", "y", "2"),
                         Turn("患者", "z", "3", act="Inform-Symptom")])]
    pred = [ex(0, turns=[Turn("医生", "x", "1", act="Request-Symptom"), Turn("患者", "y", "2", act="Other"),
                         Turn("患者", "z", "3", act="Other")])]
    rows = dialogue_act_errors(gold, pred)
    assert [(r.turn, r.category, r.cell) for r in rows] == [
        (0, "correct", "Request-Symptom->Request-Symptom"), (2, "confusion", "Inform-Symptom->Other")]


# ---------------------------------------------------------------------- dispatch

def test_categorize_dispatch():
    g = [ex(0, spans=[Span(0, 1, "dis")])]
    assert categorize("CMeEE", g, g)[0].category == "correct"
    assert categorize("CHIP-CDN", [ex(0, terms=["a"])], [ex(0)], icd_terms=["b"])[0].tags == ("term_not_in_icd",)
    t = [ex(0, triples=[Triple("a", "病因", "b", "疾病", "社会学")])]
    assert categorize("CMeIE", t, t, schemas=[("疾病", "病因", "社会学")])[0].tags == ()
    assert categorize("CMeIE", t, t, schemas=[])[0].tags == ("schema_violation",)
    assert categorize("CMedCausal", t, t)[0].category == "correct"
    with pytest.raises(ValueError, match="no error taxonomy"):
        categorize("MedDG", [ex(0)], [ex(0)])


def test_cmeee_official_example_taxonomy(cblue_dir):
    gold = load(cblue_dir / "CMeEE/example_gold.json", "CMeEE").examples
    pred = load(cblue_dir / "CMeEE/example_pred.json", "CMeEE").examples
    rows = categorize("CMeEE", gold, pred)
    # s1: SARST细胞 missed, 成人SARS correct
    # s2: 肺 correct, 肺内病变 sym->dis wrong_type, 肺 17 vs 肺内 17-18 wrong_boundary,
    #     肺内炎性病变 correct
    # s3: 肺部 correct, 肺部病变 sym->dis wrong_type, 肺 11 missed inside the correct
    #     肺内炎性病变 -> tagged outer_found_inner_missed
    assert category_counts(rows) == {"missed": 2, "correct": 5, "wrong_type": 2, "wrong_boundary": 1,
                                     "tag:outer_found_inner_missed": 1}
    assert examples_by_category(rows)["wrong_type"] == [1, 2]


def test_cmeee_dev_scoring_and_taxonomy_agree(cblue_dir):
    """Real-size run: the taxonomy's correct rows are the scorer's true positives (speed is
    measured by bench/scoring.py, not here: this machine is shared and noisy)."""
    gold = load(cblue_dir / "CMeEE/CMeEE_dev.json", "CMeEE").examples
    rng = random.Random(0)
    pred = []
    for g in gold:   # a plausible system: drops, retypes and shifts some entities
        spans = []
        for s in g.spans:
            r = rng.random()
            if r < 0.7:
                spans.append(s)
            elif r < 0.8:
                spans.append(Span(s.start, s.end, "dis" if s.type != "dis" else "sym"))
            elif r < 0.9:
                spans.append(Span(s.start, max(s.start + 1, s.end - 1), s.type))
        pred.append(Example(g.key, g.index, g.text, spans=spans))
    s = score("CMeEE", gold, pred)            # with 1,000 bootstrap resamples
    rows = categorize("CMeEE", gold, pred)
    assert 0.7 < s.value < 1.0 and s.intervals["f1"][0] < s.value < s.intervals["f1"][1]
    assert category_counts(rows)["correct"] == s.extra["tp"]
