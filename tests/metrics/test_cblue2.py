"""CBLUE 2.0 metrics: hand-made cases with the arithmetic written out."""
from __future__ import annotations

import random

import pytest

from cblue_core.io.validate import load
from cblue_core.metrics.cblue2 import lcs_length, reciprocal_rank, report_score, rouge_l_f, turn_keys
from cblue_core.metrics.registry import score
from cblue_core.records import Event, Example, Span, Triple, Turn


def ex(i=0, **kw) -> Example:
    return Example(key=str(i), index=i, **kw)


def _lcs_dp(a: str, b: str) -> int:
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            cur.append(prev[j] + 1 if ca == cb else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_lcs_bit_parallel_matches_dynamic_programming():
    rng = random.Random(1)
    for _ in range(300):
        a = "".join(rng.choice("ABCD肺炎") for _ in range(rng.randint(0, 40)))
        b = "".join(rng.choice("ABCD肺炎") for _ in range(rng.randint(0, 40)))
        assert lcs_length(a, b) == _lcs_dp(a, b)
    assert lcs_length("ABCBDAB", "BDCABA") == 4


def test_rouge_l_hand_case():
    # pred "患者 发热咳嗽" -> 患者发热咳嗽 (6 chars); gold "患者咳嗽三天" (6 chars)
    # LCS = 患者咳嗽 (4): P = 4/6, R = 4/6, F = 2/3
    assert rouge_l_f("患者 发热咳嗽", "患者咳嗽三天") == pytest.approx(2 / 3)
    assert rouge_l_f("", "  ") == 1.0
    assert rouge_l_f("", "有") == 0.0 and rouge_l_f("有", "") == 0.0
    assert rouge_l_f("abc", "xyz") == 0.0


def test_events_micro_f1():
    gold = [ex(0, events=[Event("腹痛", "", ("阵发性", "剧烈"), ("腹",)), Event("发热", "否定")])]
    pred = [ex(0, events=[Event("腹痛", "", ("剧烈", "阵发性"), ("腹",)),   # order-free -> match
                          Event("发热", ""),                              # tendency wrong
                          Event("呕吐", "不确定")])]
    s = score("CHIP-CDEE", gold, pred, intervals=False)
    # gold 2, pred 3, tp 1: P 1/3, R 1/2, F = 2/(2+2+1) = 2/5
    assert s.metrics["f1"] == pytest.approx(0.4)
    assert s.metrics["precision"] == pytest.approx(1 / 3)
    assert s.per_label["否定"].fn == 1 and s.per_label["肯定"].tp == 1
    assert any("no leaderboard" in n for n in s.notes)


def test_cdee_example_gold_against_itself(cblue_dir):
    gold = load(cblue_dir / "CHIP-CDEE/example_gold.json", "CHIP-CDEE").examples
    s = score("CHIP-CDEE", gold, gold)
    assert s.value == 1.0 and s.intervals["f1"] == (1.0, 1.0)


def _dialogue(turn_specs, ids=True):
    return [Turn("医生", text, str(i + 1) if ids else "", act, tuple(spans), tuple(sym))
            for i, (text, act, spans, sym) in enumerate(turn_specs)]


def test_dialogue_spans_micro_f1_and_turn_matching():
    gold = [ex(0, turns=_dialogue([("头痛发热", "", [Span(0, 2, "Symptom"), Span(2, 4, "Symptom")], []),
                                    ("吃布洛芬", "", [Span(1, 4, "Drug")], [])]))]
    pred = [ex(0, turns=_dialogue([("头痛发热", "", [Span(0, 2, "Symptom")], []),
                                    ("吃布洛芬", "", [Span(1, 4, "Drug_Category")], [])]))]
    s = score("IMCS-V2-NER", gold, pred, intervals=False)
    # gold {(1,0,2,S), (1,2,4,S), (2,1,4,Drug)}; pred {(1,0,2,S), (2,1,4,Drug_Category)}
    # tp 1, fp 1, fn 2: F = 2/(2+1+2) = 2/5
    assert s.metrics["f1"] == pytest.approx(0.4)
    assert s.per_label["Symptom"].fn == 1 and s.per_label["Drug_Category"].fp == 1
    # same span in another turn does not match: turn ids differ
    moved = [ex(0, turns=[Turn("医生", "x", "9", spans=(Span(0, 2, "Symptom"),))])]
    assert score("IMCS-V2-NER", gold, moved, intervals=False).metrics["f1"] == 0.0


def test_turn_keys_fall_back_to_positions():
    a = ex(0, turns=[Turn("a", "x", "1"), Turn("b", "y", "2")])
    b = ex(0, turns=[Turn("a", "x", ""), Turn("b", "y", "")])
    assert turn_keys(a, a) == (["1", "2"], ["1", "2"])
    assert turn_keys(a, b) == (["0", "1"], ["0", "1"])


def test_mdcfnpc_attribute_is_the_type():
    gold = [ex(0, turns=[Turn("患者", "没有发烧", "1", spans=(Span(2, 4, "阴性"),))])]
    pred = [ex(0, turns=[Turn("患者", "没有发烧", "1", spans=(Span(2, 4, "阳性"),))])]
    assert score("CHIP-MDCFNPC", gold, gold, intervals=False).value == 1.0
    assert score("CHIP-MDCFNPC", gold, pred, intervals=False).value == 0.0


def test_dialogue_acts_accuracy_and_macro():
    g1 = ex(0, turns=_dialogue([("t", "Request-Symptom", [], []), ("t", "Inform-Symptom", [], []),
                                 ("t", "", [], [])]))
    g2 = ex(1, turns=_dialogue([("t", "Diagnose", [], [])]))
    p1 = ex(0, turns=_dialogue([("t", "Request-Symptom", [], []), ("t", "Request-Symptom", [], []),
                                 ("t", "Other", [], [])]))
    p2 = ex(1, turns=_dialogue([("t", "Diagnose", [], [])]))
    s = score("IMCS-V2-DAC", [g1, g2], [p1, p2])
    # scored turns (gold act present): RS->RS ok, IS->RS wrong, Diagnose ok; the turn with no
    # gold act is skipped. accuracy 2/3.
    # labels {Diagnose, Inform-Symptom, Request-Symptom}:
    # Diagnose F 1; Inform-Symptom F 0; Request-Symptom tp1 pred2 gold1 -> F 2/3
    # macro F = (1 + 0 + 2/3)/3 = 5/9
    assert s.metrics["accuracy"] == pytest.approx(2 / 3)
    assert s.metrics["macro_f1"] == pytest.approx(5 / 9)
    assert s.stats.n == 2 and s.stats.unit is not None  # dialogues are the bootstrap unit
    lo, hi = s.intervals["accuracy"]
    assert lo <= 2 / 3 <= hi


def test_dialogue_symptoms():
    gold = [ex(0, turns=_dialogue([("咳嗽", "", [], [("咳嗽", "1")]), ("不发烧", "", [], [("发热", "0")])]))]
    pred = [ex(0, turns=_dialogue([("咳嗽", "", [], [("咳嗽", "1")]), ("不发烧", "", [], [("发热", "1")])]))]
    s = score("IMCS-V2-SR", gold, pred, intervals=False)
    # gold {(1,咳嗽,1),(2,发热,0)}, pred {(1,咳嗽,1),(2,发热,1)}: tp1 fp1 fn1 -> F 1/2
    assert s.metrics["f1"] == pytest.approx(0.5)
    assert s.per_label["0"].fn == 1 and s.per_label["1"].fp == 1


def test_report_rouge_sections():
    gold = "主诉：咳嗽三天\n现病史：发热\n辅助检查：\n既往史：\n诊断：肺炎\n建议："
    pred = "主诉：咳嗽\n现病史：发热\n辅助检查：\n既往史：无\n诊断：肺炎\n建议："
    s, per = report_score(pred, gold)
    # sections non-empty on either side: 主诉, 现病史, 既往史, 诊断
    # 主诉: LCS 咳嗽 = 2, P 2/2, R 2/4 -> F = 2/3; 现病史 1; 既往史 0 (gold empty); 诊断 1
    # mean = (2/3 + 1 + 0 + 1)/4 = 2/3
    assert set(per) == {"主诉", "现病史", "既往史", "诊断"}
    assert s == pytest.approx(2 / 3)
    ts = score("IMCS-V2-MRG", [ex(0, target=gold), ex(1, target=gold)],
               [ex(0, target=pred), ex(1, target=gold)], intervals=False)
    # examples: 2/3 and 1 -> mean 5/6
    assert ts.metrics["rouge_l"] == pytest.approx(5 / 6)
    assert ts.metrics["rouge_l[主诉]"] == pytest.approx((2 / 3 + 1) / 2)
    # a prediction without sections is compared whole with the gold's section bodies
    s2, per2 = report_score("咳嗽三天发热肺炎", gold)
    assert s2 == 1.0 and per2 == {}


def test_generation_rouge():
    gold = [ex(0, target="多喝水"), ex(1, target="建议做血常规")]
    pred = [ex(0, target="多喝 水"), ex(1, target="血常规")]
    s = score("MedDG", gold, pred, intervals=False)
    # ex0: 1.0; ex1: LCS 3, P 3/3, R 3/6 -> F 2/3; mean = 5/6
    assert s.metrics["rouge_l"] == pytest.approx(5 / 6)


def test_mrr10():
    assert reciprocal_rank(["d3", "d1"], {"d1"}) == 0.5
    assert reciprocal_rank([f"x{i}" for i in range(10)] + ["d1"], {"d1"}) == 0.0  # rank 11
    gold = [ex(0, terms=["d1"]), ex(1, terms=["d9", "d2"]), ex(2, terms=[]), ex(3, terms=["d5"])]
    pred = [ex(0, terms=["d1", "d2"]), ex(1, terms=["d0", "d1", "d2"]), ex(2, terms=["d1"]),
            ex(3, terms=["d0"])]
    s = score("KUAKE-IR", gold, pred)
    # RR: 1, 1/3, (query 2 has no relevant passage: not scored), 0 -> MRR = (1 + 1/3 + 0)/3 = 4/9
    assert s.metrics["mrr@10"] == pytest.approx(4 / 9)
    assert s.extra["scored"] == 3
    lo, hi = s.intervals["mrr@10"]
    assert lo <= 4 / 9 <= hi


def test_text2dt_and_causal_triples():
    gold = [ex(0, triples=[Triple("患者", "临床表现", "低血压"), Triple("患者", "治疗药物", "阿托品")])]
    pred = [ex(0, triples=[Triple("患者", "临床表现", "低血压")])]
    s = score("Text2DT", gold, pred, intervals=False)
    # tp1 fn1 -> P 1, R 1/2, F 2/3
    assert s.metrics["f1"] == pytest.approx(2 / 3)
    assert any("proxy" in n for n in s.notes)
    gold = [ex(0, triples=[Triple("吸烟", "因果", "肺癌"), Triple("肺癌", "上下位", "癌")])]
    pred = [ex(0, triples=[Triple("吸烟", "因果", "肺癌"), Triple("肺癌", "因果", "癌"),
                           Triple("x", "条件", "y")])]
    s = score("CMedCausal", gold, pred, intervals=False)
    # tp1 fp2 fn1 -> F = 2/(2+2+1) = 2/5
    assert s.metrics["f1"] == pytest.approx(0.4)
    assert s.per_label["因果"].fp == 1 and s.per_label["上下位"].fn == 1
