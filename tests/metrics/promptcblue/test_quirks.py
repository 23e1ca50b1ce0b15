"""Hand-made cases for each subtlety of benchmarks.md 2.7, expected values worked out here."""
from __future__ import annotations

import random

import pytest

from cblue_core.metrics.promptcblue import (
    evaluate_promptcblue,
    parse_generation,
    score_structured,
    score_task,
    structure,
)
from cblue_core.metrics.promptcblue.clean import clean_task_score
from cblue_core.metrics.promptcblue.official import (
    calc_cls_task_scores,
    calc_info_extract_task_scores,
    calc_nlg_task_scores,
    calc_nlg_task_scores_by_sessions,
)

from ._util import MDCFNPC_CHOICES, SR_CHOICES, mini_records, with_targets


def items(*answers):
    return [{"sample_id": f"s{i}", "answer": a} for i, a in enumerate(answers)]


def approx(x):
    return pytest.approx(x, abs=1e-12)


# 1. "Micro-F1" of STS/IR/QQR/QTR is scikit-learn's weighted F1 ----------------------------------

def test_1_micro_is_weighted_f1():
    gold = items("是的", "是的", "是的", "不是")
    pred = items("是的", "是的", "不是", "不是")
    # 是的: tp 2, predicted 2, support 3 -> P 1, R 2/3, F 4/5
    # 不是: tp 1, predicted 2, support 1 -> P 1/2, R 1, F 2/3
    # weighted: P (3*1 + 1/2)/4 = 7/8, R (2 + 1)/4 = 3/4, F (3*4/5 + 2/3)/4 = 23/30
    s = score_task("CHIP-STS", gold, pred)
    assert (s.details["precision"], s.details["recall"], s.details["f1"]) == (approx(7 / 8), approx(3 / 4),
                                                                            approx(23 / 30))
    # true micro-F1 (= accuracy here) is 3/4
    clean = clean_task_score("CHIP-STS", gold, pred)
    assert clean.details["micro_f1"] == approx(0.75) and clean.details["accuracy"] == approx(0.75)


# 2. macro-F1 runs over the labels that occur; an invented label lowers it --------------------------

def test_2_macro_over_union_of_labels():
    gold = items("疾病", "疾病", "药物")
    pred = items("疾病", "乱写", "药物")
    # classes 乱写 (F 0), 疾病 (tp1 pred1 sup2: F 2/3), 药物 (F 1): macro F = (0 + 2/3 + 1)/3 = 5/9
    # macro P = (0 + 1 + 1)/3, macro R = (0 + 1/2 + 1)/3
    p, r, f = calc_cls_task_scores(gold, pred, list_labels=["非上述类型"], return_macro=True)
    assert (p, r, f) == (approx(2 / 3), approx(0.5), approx(5 / 9))
    # the same error without an invented label: only the 2 occurring classes count, however long
    # list_labels is: 疾病 (tp1 pred1 sup2) F 2/3, 药物 (tp1 pred2 sup1) F 2/3 -> macro 2/3
    long_list = ["非上述类型", "疾病", "药物", "年龄", "性别"]
    _, _, f2 = calc_cls_task_scores(gold, items("疾病", "药物", "药物"), list_labels=long_list, return_macro=True)
    assert f2 == approx(2 / 3)
    # clean: fixed CTC labels; 乱写 is an error, not a class: 疾病 2/3, 药物 1 -> 5/6
    clean = clean_task_score("CHIP-CTC", gold, pred)
    assert clean.details["macro_f1"] == approx(5 / 6) and clean.details["invalid"] == 1


# 3. empty classification prediction -> first label; empty NLG text -> "无 。" on both sides ------

def test_3_empty_prediction_fallbacks():
    # STS: "" -> 是的. 是的: tp1 pred2 sup1 (P 1/2, R 1, F 2/3); 不是: sup1, never predicted (0)
    p, r, f = calc_cls_task_scores(items("是的", "不是"), items("", ""), list_labels=["是的", "不是"])
    assert (p, r, f) == (approx(0.25), approx(0.5), approx(1 / 3))
    s = score_task("KUAKE-QTR", items("完全不匹配或者没有参考价值"), items(""))
    assert s.value == approx(1.0)
    # clean mode has no fallback: an empty answer is wrong
    assert clean_task_score("KUAKE-QTR", items("完全不匹配或者没有参考价值"), items("")).value == 0.0
    # NLG: an empty gold and an empty prediction both become "无 。" and match (2PR/(P+R+1e-8))
    _r1, _r2, rl = calc_nlg_task_scores(items(""), items(""))
    assert rl == approx(2 / (2 + 1e-8))
    # so does a prediction that *is* "无。"
    assert calc_nlg_task_scores(items(""), items("无。"))[2] == approx(2 / (2 + 1e-8))
    # MRG: an empty gold section against a missing predicted one is a perfect pair
    gold = items({"主诉": "发热", "辅助检查": ""})
    pred = items({"主诉": "发热"})
    assert calc_nlg_task_scores_by_sessions(gold, pred)[2] == approx(2 / (2 + 1e-8))
    assert clean_task_score("IMCS-V2-MRG", gold, pred).value == 1.0  # both-empty section = 1.0 in clean


# 4. IE matching -------------------------------------------------------------------------------

def test_4_ie_matching_rules():
    g = [{"entity": "发热", "type": "症状"}, {"entity": "咳嗽", "type": "症状"}]
    # key names ignored, duplicates collapse: pred {发热 (as 'mention'), 发热 dup, 头痛}: tp1 fp1 fn1
    p = [{"mention": "发热", "type": "症状"}, {"type": "症状", "entity": "发热"}, {"entity": "头痛", "type": "症状"}]
    assert calc_info_extract_task_scores(items(g), items(p)) == (0.5, 0.5, 0.5)
    # clean mode compares key names: 'mention' != 'entity', so only the dict-order variant matches
    c = clean_task_score("CMeEE-V2", items(g), items(p)).details
    assert (c["tp"], c["fp"], c["fn"]) == (1, 2, 1)
    # list order and nested key order matter officially, not in clean mode
    ev_g = [{"主体词": "痛", "发生状态": "", "描述词": ["胀", "持续"], "解剖部位": []}]
    ev_p = [{"主体词": "痛", "发生状态": "", "描述词": ["持续", "胀"], "解剖部位": []}]
    assert calc_info_extract_task_scores(items(ev_g), items(ev_p)) == (0, 0, 0)
    assert clean_task_score("CHIP-CDEE", items(ev_g), items(ev_p)).value == 1.0
    nested_g = [{"predicate": "条件关系", "subject": "a", "object": {"predicate": "因果关系", "subject": "b", "object": "c"}}]
    nested_p = [{"predicate": "条件关系", "subject": "a", "object": {"subject": "b", "predicate": "因果关系", "object": "c"}}]
    assert calc_info_extract_task_scores(items(nested_g), items(nested_p)) == (0, 0, 0)
    assert clean_task_score("CMedCausal", items(nested_g), items(nested_p)).value == 1.0
    # no normalisation
    assert calc_info_extract_task_scores(items([{"entity": "CRP", "type": "x"}]),
                                         items([{"entity": "crp", "type": "x"}])) == (0, 0, 0)
    # TP = 0 gives the integers 0 even when everything is empty; clean mode says 1.0
    out = calc_info_extract_task_scores(items([], []), items([], []))
    assert out == (0, 0, 0) and all(type(v) is int for v in out)
    assert clean_task_score("CMeEE-V2", items([], []), items([], [])).value == 1.0


# 5. full-width punctuation, discarded first line, trailing newline in CDEE, CDN's last line -------

def test_5_parser_layout_rules():
    # ASCII ':' is not a separator
    assert parse_generation("IMCS-V2-SR", "lead\n发热:患有该症状", SR_CHOICES).answer == []
    # without a lead-in line the first item is lost (and recorded as dropped)
    lost = parse_generation("IMCS-V2-SR", "发热：患有该症状", SR_CHOICES)
    assert lost.answer == [] and [(i.kind, i.line) for i in lost.issues] == [("dropped", "发热：患有该症状")]
    assert parse_generation("IMCS-V2-MRG", "主诉：发热", None).answer == {}
    assert parse_generation("CHIP-CDEE", "主体词：发热；发生状态：；描述词：；解剖部位：", None).answer == []
    # CDEE: a trailing newline adds an all-empty event, a false positive officially
    event = "上述句子中的临床发现事件如下：\n主体词：发热；发生状态：否定；描述词：；解剖部位："
    gold = parse_generation("CHIP-CDEE", event, None).answer
    pred = parse_generation("CHIP-CDEE", event + "\n", None).answer
    assert pred == gold + [{"主体词": "", "发生状态": "", "描述词": [], "解剖部位": []}]
    # tp 1, fp 1, fn 0 -> P 1/2, R 1, F 2/3
    assert calc_info_extract_task_scores(items(gold), items(pred)) == (0.5, 1.0, approx(2 / 3))
    assert clean_task_score("CHIP-CDEE", items(gold), items(pred)).value == 1.0  # empty events dropped
    # CDN reads only the last line
    assert parse_generation("CHIP-CDN", "感冒\n发热", ["感冒", "发热"]).answer == [
        {"entity": "发热", "type": "normalization"}]


# 6. invalid attributes: MDCFNPC -> 不标注 (never right), SR -> a valid label -----------------------

def test_6_invalid_attribute_replacements():
    lead = "上述对话中临床发现实体以及其阴阳性判别如下：\n"
    gold = parse_generation("CHIP-MDCFNPC", lead + "发热：" + MDCFNPC_CHOICES[3], MDCFNPC_CHOICES).answer
    pred = parse_generation("CHIP-MDCFNPC", lead + "发热：不标注", MDCFNPC_CHOICES)
    assert pred.answer == [{"entity": "发热", "attr": "不标注"}] and pred.issues[0].kind == "invalid"
    assert calc_info_extract_task_scores(items(gold), items(pred.answer)) == (0, 0, 0)
    lead = "当前对话中的症状及其阴阳性判断为：\n"
    gold = parse_generation("IMCS-V2-SR", lead + "发热：" + SR_CHOICES[2], SR_CHOICES).answer
    pred = parse_generation("IMCS-V2-SR", lead + "发热：不确定", SR_CHOICES).answer
    assert pred == gold
    assert calc_info_extract_task_scores(items(gold), items(pred)) == (1.0, 1.0, 1.0)


# 7. CMedCausal conditional subjects keep the "；尾三元组：" suffix ---------------------------------

def test_7_cmedcausal_conditional_subject():
    gen = "上述文本中的条件关系三元组如下：\n头实体：不治疗；尾三元组：头实体：痛风；尾实体：关节肿痛；关系：因果关系"
    assert parse_generation("CMedCausal", gen).answer == [{
        "predicate": "条件关系", "subject": "不治疗；尾三元组：",
        "object": {"predicate": "因果关系", "subject": "痛风", "object": "关节肿痛"}}]


# 8. Text2DT triples: a literal parse that accepts what eval accepts; crash on a line without role --

@pytest.mark.parametrize("literal,expected", [
    ('[["a", "b", "c"]]', [["a", "b", "c"]]),
    ("[('a', 'b', 'c'), ['x', 'y']]", [("a", "b", "c")]),       # tuples allowed; len != 3 dropped
    ("['abc', 'ab']", ["abc"]),                                  # a 3-character string survives
    ('[["a", "b", "c"],]  ', [["a", "b", "c"]]),                 # trailing comma and spaces
    ("  [[\"a\", \"b\", \"c\"]]", [["a", "b", "c"]]),             # leading spaces (eval strips them)
    ('("a", "b", "c")', []),                                     # not a list
    ('{"a": 1}', []),
    ('[["a", "b", "c"]', []),                                    # syntax error
    ("[1, ['a', 'b', 'c']]", []),                                # an int has no len: whole list lost
    ("[[1, 2, 3]]", [[1, 2, 3]]),                                # kept here, fails at scoring time
    ("[__import__('os')]", []),                                  # never evaluated
    ("[]", []),
])
def test_8_text2dt_triples_literal(literal, expected):
    gen = "根据给定的指南文本抽取的诊疗决策树如下：\n节点0：role=D；logical_rel=null；triples=" + literal
    assert parse_generation("Text2DT", gen).answer == [{"role": "D", "logical_rel": "null", "triples": expected}]
    # and exactly what Python's eval (with the official filtering) gives, for these literals
    try:
        value = eval(literal)
        ref = [] if not isinstance(value, list) else [t for t in value if len(t) == 3]
    except Exception:  # noqa: BLE001
        ref = []
    if "__import__" not in literal:
        assert ref == expected


def test_8_text2dt_line_without_role_crashes_official_parser():
    from cblue_core.metrics.promptcblue import PromptParseError

    gen = "根据给定的指南文本抽取的诊疗决策树如下：\n节点0：C；triples=[]"
    with pytest.raises(PromptParseError) as info:
        parse_generation("Text2DT", gen, sample_id="t1")
    assert info.value.sample_id == "t1" and info.value.task == "Text2DT" and info.value.line == "节点0：C；triples=[]"
    lenient = parse_generation("Text2DT", gen, strict=False)
    assert [f.line for f in lenient.failures] == ["节点0：C；triples=[]"]
    assert lenient.answer == [{"role": "D", "logical_rel": "null", "triples": []}]  # the default node


# 9. overall = plain mean of the 18 main metrics x100, unrounded --------------------------------

def test_9_overall_is_unrounded_mean_of_18():
    gold = structure(mini_records())
    result = score_structured(gold, gold)
    assert result.success
    # 16 tasks at 1.0, MedDG and MRG at 2/(2+1e-8) each
    rouge_perfect = 2.0 * (1.0 / (2.0 + 1e-8))
    assert result.score == approx((16 + 2 * rouge_perfect) / 18 * 100)
    assert result.score == approx(99.99999994444444) and result.score != 100
    pred = structure(with_targets(mini_records(), {"KUAKE-QIC": "治疗方案"}))
    assert score_structured(gold, pred).score == approx((15 + 2 * rouge_perfect) / 18 * 100)


# 10. CDN order is hash-dependent officially; scores never depend on it --------------------------

def test_10_cdn_order_is_irrelevant():
    choices = ["感冒", "上呼吸道感染", "发热"]
    gold = parse_generation("CHIP-CDN", "发热，感冒", choices).answer
    assert gold == [{"entity": "发热", "type": "normalization"}, {"entity": "感冒", "type": "normalization"}]
    shuffled = list(reversed(gold))
    assert calc_info_extract_task_scores(items(gold), items(shuffled)) == (1.0, 1.0, 1.0)
    # repeated terms collapse (the official parser uses a set)
    assert len(parse_generation("CHIP-CDN", "发热，发热，感冒", choices).answer) == 2


# 11. ROUGE-1/2 use unique n-grams --------------------------------------------------------------

def test_11_rouge_unique_ngrams():
    r1, r2, rl = calc_nlg_task_scores(items("好"), items("好好好"))
    # R1: sets {好} vs {好}: P = R = 1 -> 2/(2+1e-8); R2: the reference has no bigram -> 0;
    # RL: LCS 1, P = 1/3, R = 1 -> 2*(1/3)/(4/3 + 1e-8)
    assert r1 == approx(2 / (2 + 1e-8)) and r2 == 0.0
    assert rl == approx(2.0 * ((1 / 3) / (1 / 3 + 1 + 1e-8)))
    # clean mode counts n-grams: R1 = 2*1/(3+1) = 0.5, R2 = 0 (2 bigrams vs none), RL = 2*1/4
    clean = clean_task_score("MedDG", items("好"), items("好好好")).details
    assert (clean["rouge1"], clean["rouge2"], clean["rougeL"]) == (0.5, 0.0, 0.5)


def test_random_noise_keeps_official_and_record_paths_equal():
    """evaluate_promptcblue on records equals score_structured on the parsed dicts."""
    rng = random.Random(7)
    gold = mini_records()
    pred = [{**r, "target": r["target"][: rng.randint(0, len(r["target"]))]} for r in gold]
    ev = evaluate_promptcblue(gold, pred, on_parse_error="skip")
    direct = score_structured(structure(gold), structure(pred, strict=False))
    assert ev.official.to_eval_result() == direct.to_eval_result()
