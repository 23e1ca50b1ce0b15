"""CliMedBench: answer extraction on realistic model outputs, Kendall's tau-b, ROUGE-1 and the
scenario / dimension / overall aggregation."""
from __future__ import annotations

import math

import pytest

from cblue_core.metrics.climedbench import (
    extract_choice,
    extract_order,
    kendall_tau_b,
    order_tau,
    rouge1_char_f,
)
from cblue_core.metrics.registry import score
from cblue_core.records import Example

OPTIONS = {"A": "胸部CT", "B": "肺炎", "C": "肺结核", "D": "支气管哮喘"}

CHOICE_CASES = [
    # (model output, extracted letter or None)
    ("答案：B", "B"),
    ("B", "B"),
    ("选B", "B"),
    ("(B)", "B"),
    ("B.", "B"),
    ("Ｂ", "B"),                                       # full-width letter
    ("答案是（C）。", "C"),                             # full-width brackets
    ("正确答案为D，因为患者有长期吸烟史。", "D"),
    ("根据病史及检查结果，应选C。", "C"),
    ("B. 肺炎", "B"),
    ("B、肺炎", "B"),
    ("我认为是(C)比较合适", "C"),
    ("综合考虑，应该是B选项", "B"),
    ("肺炎", "B"),                                      # option text only
    ("D. 支气管哮喘可能性大", "D"),
    ("The answer is B.", "B"),
    ("Answer: D", "D"),
    ("答：a", "A"),                                     # lower case after a Chinese marker
    ("选项A和选项C都不对，答案是D", "D"),
    ("不选A，选C", "C"),
    ("A型题：本题选C", "C"),                            # "A型" is not an answer
    ("答案：A\n\n更正：正确答案是B", "B"),               # the last marker wins
    # failures: None
    ("我不确定。", None),
    ("", None),
    ("A和B都有可能", None),
    ("A、B均正确", None),
    ("ABCD", None),
    ("答案：AB", None),
    ("不选A", None),
    ("以上都不对", None),
    ("肺结核和肺炎都可能", None),                        # two option texts
    ("作为AI，我无法提供医疗诊断。", None),
]


@pytest.mark.parametrize("text,expected", CHOICE_CASES)
def test_extract_choice(text, expected):
    assert extract_choice(text, OPTIONS) == expected


def test_extract_choice_respects_option_letters():
    # FTT has an option E; with only A-D offered, a stray E is no answer
    assert extract_choice("E", {"A": "x", "B": "y", "C": "z", "D": "w", "E": "以上均不对"}) == "E"
    assert extract_choice("E", {"A": "x", "B": "y"}) is None


ORDER_CASES = [
    ("DCBA", ("D", "C", "B", "A")),
    ("D C B A", ("D", "C", "B", "A")),
    ("D→C→B→A", ("D", "C", "B", "A")),
    ("D->C->B->A", ("D", "C", "B", "A")),
    ("正确顺序为 DCBA", ("D", "C", "B", "A")),
    ("D, C, B, A", ("D", "C", "B", "A")),
    ("顺序：Ｄ、Ｃ、Ｂ、Ａ。", ("D", "C", "B", "A")),
    ("先做B，再做A，最后C，所以顺序是BAC", ("B", "A", "C")),   # run after the marker
    ("DCB", ("D", "C", "B")),                                  # partial
    ("D C B A E", ("D", "C", "B", "A")),                       # E is not a reference letter
    ("DCCBA", ("D", "C", "B", "A")),                           # repeat keeps its first place
    ("无法排序", None),
    ("首先A然后B", None),
    ("", None),
]


@pytest.mark.parametrize("text,expected", ORDER_CASES)
def test_extract_order(text, expected):
    assert extract_order(text, "ABCD") == expected


def test_kendall_tau_b_hand_values():
    assert kendall_tau_b([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0
    assert kendall_tau_b([0, 1, 2, 3], [3, 2, 1, 0]) == -1.0
    # ABCD vs ABDC: 6 pairs, one discordant (C,D): (5 - 1)/6 = 2/3
    assert kendall_tau_b([0, 1, 2, 3], [0, 1, 3, 2]) == pytest.approx(2 / 3)
    # ties: x = 1,2,3,4; y = 1,1,2,3. pairs: (1,2) tie in y, others 5 concordant
    # tau-b = 5 / sqrt((6 - 0) * (6 - 1)) = 5 / sqrt(30)
    assert kendall_tau_b([1, 2, 3, 4], [1, 1, 2, 3]) == pytest.approx(5 / math.sqrt(30))
    # ties on both sides: x = 1,1,2,2; y = 1,2,1,2: concordant (1,4)... pairs:
    # (0,1) x tie; (0,2) +1*0 y tie; (0,3) +; (1,2) x 1<2 y 2>1 -> -; (1,3) y tie; (2,3) x tie
    # S = 0, tx = 2, ty = 2 -> tau-b = 0 / sqrt(4 * 4) = 0
    assert kendall_tau_b([1, 1, 2, 2], [1, 2, 1, 2]) == 0.0
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert math.isnan(kendall_tau_b([1], [1]))


def test_order_tau_policy():
    ref = tuple("ABCD")
    assert order_tau(tuple("ABCD"), ref) == 1.0
    assert order_tau(tuple("DCBA"), ref) == -1.0
    # partial "AB": positions A0 B1, C and D tied last (2): 5 concordant, 1 tie in pred
    # tau-b = 5 / sqrt(6 * 5) = 0.9129
    assert order_tau(tuple("AB"), ref) == pytest.approx(5 / math.sqrt(30))
    assert order_tau(None, ref) == -1.0                    # extraction failure
    assert order_tau(tuple("XY"), ref) == -1.0             # nothing in common


def test_rouge1_chars():
    # pred 糖尿病，胰岛素 -> 糖尿病胰岛素 (6); ref 糖尿病；血糖 -> 糖尿病血糖 (5)
    # clipped overlap: 糖 min(1, 2) = 1, 尿 1, 病 1 -> 3; P 3/6, R 3/5, F = 2*.5*.6/1.1 = 6/11
    assert rouge1_char_f("糖尿病，胰岛素", "糖尿病；血糖") == pytest.approx(6 / 11)
    assert rouge1_char_f("", "") == 1.0 and rouge1_char_f("", "x") == 0.0


def _item(i, scenario, reference, options=None, dimension=None):
    meta = {"scenario": scenario, "options": options or {}}
    if dimension:
        meta["dimension"] = dimension
    return Example(key=str(i), index=i, label=scenario, target=reference, meta=meta)


def test_score_climedbench_aggregation():
    gold = [_item(0, "ID1", "B", OPTIONS), _item(1, "ID1", "C", OPTIONS),
            _item(2, "BKT", "A", OPTIONS), _item(3, "SSO", "ABCD"),
            _item(4, "KE", "糖尿病；血糖"), _item(5, "WTD", "患者咳嗽三天")]
    outputs = ["答案：B", "我不确定", "A", "正确顺序为 ABDC", "糖尿病，胰岛素", "患者 发热咳嗽"]
    pred = [Example(key=str(i), index=i, target=t) for i, t in enumerate(outputs)]
    s = score("CliMedBench", gold, pred)
    # ID1: 1 right, 1 extraction failure (wrong) -> 0.5; BKT 1.0
    # SSO: tau(ABDC vs ABCD) = 2/3; KE: 6/11 (see test_rouge1_chars);
    # WTD: ROUGE-L 2/3 (患者发热咳嗽 vs 患者咳嗽三天: LCS 4, P = R = 4/6)
    # overall = mean of the 5 scenario means = (0.5 + 1 + 2/3 + 6/11 + 2/3) / 5
    assert s.metrics["scenario:ID1"] == 0.5
    assert s.metrics["scenario:BKT"] == 1.0
    assert s.metrics["scenario:SSO"] == pytest.approx(2 / 3)
    assert s.metrics["scenario:KE"] == pytest.approx(6 / 11)
    assert s.metrics["scenario:WTD"] == pytest.approx(2 / 3)
    overall = (0.5 + 1 + 2 / 3 + 6 / 11 + 2 / 3) / 5
    assert s.headline == "overall" and s.metrics["overall"] == pytest.approx(overall)
    # dimensions pool the letter items: Clinical QA (ID1) 1/2; Knowledge Application 1/1
    assert s.metrics["dimension:Clinical QA"] == 0.5
    assert s.metrics["dimension:Knowledge Application"] == 1.0
    # extraction failures are reported: item 1, out of 4 letter/order items
    assert s.extra["extraction_failures"] == [1]
    assert s.metrics["extraction_failure_rate"] == 0.25
    assert s.extra["extracted"][3] == "ABDC"
    lo, hi = s.intervals["overall"]
    assert lo <= hi


def test_climedbench_gold_against_itself():
    gold = [_item(0, "ID2", "C", OPTIONS), _item(1, "CPR", "DCBA"), _item(2, "KE", "肺炎；发热"),
            _item(3, "MC", "应选用阿莫西林，因为……")]
    pred = [Example(key=g.key, index=g.index, target=g.target) for g in gold]
    s = score("CliMedBench", gold, pred, intervals=False)
    assert s.metrics["overall"] == 1.0
    assert s.metrics["extraction_failure_rate"] == 0.0


def test_letter_reference_given_as_option_text():
    # The CS reference in the paper's example PDF is an option's text
    gold = [_item(0, "CS", "肺结核", OPTIONS)]
    pred = [Example(key="0", index=0, target="C")]
    assert score("CliMedBench", gold, pred, intervals=False).metrics["scenario:CS"] == 1.0
