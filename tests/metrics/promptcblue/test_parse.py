"""The post-processor, task by task (benchmarks.md 2.4), its errors and its issue records."""
from __future__ import annotations

import pytest

from cblue_core.metrics.promptcblue import (
    PARSER_TASKS,
    PromptParseError,
    UnknownTaskError,
    parse_generation,
    parse_record,
    structure,
    structure_with_issues,
)

from ._util import MDCFNPC_CHOICES, SR_CHOICES, mini_records


def test_ner_choices_in_order_and_duplicates_kept():
    gen = "上述句子中的实体包含：\n症状实体：发热，，咳嗽 ，发热\n药物实体：阿莫西林\n疾病实体：感冒"
    ans = parse_generation("IMCS-V2-NER", gen, ["药物", "症状"]).answer
    assert ans == [{"entity": "阿莫西林", "type": "药物"}, {"entity": "发热", "type": "症状"},
                   {"entity": "咳嗽", "type": "症状"}, {"entity": "发热", "type": "症状"}]


def test_ner_prefix_removed_everywhere_in_line():
    ans = parse_generation("CMeEE-V2", "x\n疾病实体：a，疾病实体：b", ["疾病"]).answer
    assert [a["entity"] for a in ans] == ["a", "b"]


def test_ner_dropped_content_is_recorded():
    p = parse_generation("CMeEE-V2", "上述句子中的实体包含：\n疾病实体：感冒\n药物实体：\n症状实体：发热\n乱七八糟",
                         ["疾病"])
    assert [(i.kind, i.line) for i in p.issues] == [("dropped", "症状实体：发热"), ("dropped", "乱七八糟")]
    assert p.ok and p.failures == []


def test_cmeie_predicate_and_pairs():
    gen = ("具有临床表现关系的头尾实体对如下：头实体为感冒，尾实体为发热。头实体为 感冒 ，尾实体为咳嗽。残片\n"
           "具有药物治疗关系的头尾实体对如下：")
    p = parse_generation("CMeIE-V2", gen, ["临床表现"])
    assert p.answer == [{"predicate": "临床表现", "subject": "感冒", "object": "发热"},
                        {"predicate": "临床表现", "subject": "感冒", "object": "咳嗽"}]
    assert [i.line for i in p.issues] == ["残片"]
    # the old name is an alias
    assert parse_generation("CMeIE", gen, ["临床表现"]).task == "CMeIE-V2"
    # the predicate is the text before 关系的头尾实体对 minus its first two characters, unchecked
    odd = parse_generation("CMeIE-V2", "有了XY关系的头尾实体对如下：头实体为a，尾实体为b", ["临床表现"]).answer
    assert odd == [{"predicate": "XY", "subject": "有了XY关系的头尾实体对如下：a", "object": "b"}]


def test_cmedcausal_sections_and_errors():
    gen = ("上述文本中的因果关系三元组如下：\n头实体：吸烟；尾实体：肺癌\n\n上下位关系三元组如下：\n"
           "  头实体：糖尿病；尾实体：2型糖尿病  \n给定的文本没有指定关系的三元组\n头实体：x；尾实体：y")
    assert parse_generation("CMedCausal", gen).answer == [
        {"predicate": "因果关系", "subject": "吸烟", "object": "肺癌"},
        {"predicate": "上下位关系", "subject": "糖尿病", "object": "2型糖尿病"}]
    # before any header the relation is None
    assert parse_generation("CMedCausal", "头实体：a；尾实体：b").answer == [
        {"predicate": None, "subject": "a", "object": "b"}]
    for bad in ("因果关系三元组如下\n尾实体：b", "因果关系三元组如下\n头实体：a，尾实体：b",
                "条件关系三元组如下\n头实体：a；尾三元组：头实体：b；尾实体：c；关系：相关",
                "条件关系三元组如下\n头实体：a；尾实体：b"):
        with pytest.raises(PromptParseError):
            parse_generation("CMedCausal", bad)
        lenient = parse_generation("CMedCausal", bad, strict=False)
        assert len(lenient.failures) == 1 and lenient.answer == []
    # header tests come first: a line mentioning 上下位关系 is a section header, not a triple
    odd = "条件关系三元组如下\n头实体：a；尾三元组：头实体：b；尾实体：c；关系：上下位关系\n头实体：d；尾实体：e"
    assert parse_generation("CMedCausal", odd).answer == [{"predicate": "上下位关系", "subject": "d", "object": "e"}]


def test_text2dt_fields_and_default():
    gen = ("根据给定的指南文本抽取的诊疗决策树如下：\n节点0：role=C；logical_rel=and；triples=[['A', 'r', 'B']]\n"
           "节点1：role=D；triples=[]\n节点2：role=D\n")
    assert parse_generation("Text2DT", gen).answer == [
        {"role": "C", "logical_rel": "and", "triples": [["A", "r", "B"]]},
        # no "；logical_rel=": role runs to the end of the line, logical_rel is "null"
        {"role": "D；triples=[]", "logical_rel": "null", "triples": []},
        {"role": "D", "logical_rel": "null", "triples": []}]      # no triples -> []
    assert parse_generation("Text2DT", "").answer == [{"role": "D", "logical_rel": "null", "triples": []}]
    # only exactly empty lines are skipped: a blank line with a space crashes the official parser
    with pytest.raises(PromptParseError):
        parse_generation("Text2DT", "根据给定的指南文本抽取的诊疗决策树如下：\n ")


def test_cdn_filter_and_dedupe():
    p = parse_generation("CHIP-CDN", "理由\n 感冒 ，鼻炎，感冒，没有对应的标准化实体", ["感冒", "发热"])
    assert p.answer == [{"entity": "感冒", "type": "normalization"}]
    assert sorted((i.kind, i.line) for i in p.issues) == [("dropped", "理由"), ("invalid", "鼻炎")]
    assert parse_generation("CHIP-CDN", "没有对应的标准化实体", ["感冒"]).issues == []
    with pytest.raises(PromptParseError):
        parse_generation("CHIP-CDN", "感冒", None)
    assert parse_generation("CHIP-CDN", "", None).answer == []  # nothing to filter: no crash


def test_cdee_fields():
    gen = "lead\n主体词： 疼痛 ；发生状态：否定；描述词：胀痛，，持续性；解剖部位：腹；其他：x\n发生状态：不确定"
    p = parse_generation("CHIP-CDEE", gen)
    assert p.answer == [
        {"主体词": "疼痛", "发生状态": "否定", "描述词": ["胀痛", "持续性"], "解剖部位": ["腹"]},
        {"发生状态": "不确定", "主体词": "", "描述词": [], "解剖部位": []}]
    assert [i.line for i in p.issues] == ["其他：x"]
    # a piece matching one key is re-tested against the following keys (official loop rebinding)
    chained = parse_generation("CHIP-CDEE", "lead\n主体词：发生状态：否定").answer
    assert chained == [{"主体词": "发生状态：否定", "发生状态": "否定", "描述词": [], "解剖部位": []}]


def test_classification_strip_and_sts_mapping():
    assert parse_generation("CHIP-STS", " 相同\n", ["相同", "不同"]).answer == "是的"
    assert parse_generation("CHIP-STS", "不同", None).answer == "不是"
    assert parse_generation("CHIP-STS", "相同的", None).answer == "相同的"
    p = parse_generation("KUAKE-QIC", "  病因分析。 ", None)
    assert p.answer == "病因分析。" and p.issues[0].kind == "invalid"
    assert parse_generation("KUAKE-IR", "\n相关\n", None).answer == "相关"


def test_attribute_tasks():
    gen = "lead\n 发热 ：患有该症状\n咳嗽：患有该症状 \na：b：c\n无冒号"
    p = parse_generation("IMCS-V2-SR", gen, SR_CHOICES)
    # entity stripped, attribute not: "患有该症状 " is invalid -> replaced
    assert p.answer == [{"entity": "发热", "attr": "患有该症状"},
                        {"entity": "咳嗽", "attr": "无法根据上下文确定病人是否患有该症状"}]
    assert sorted(i.kind for i in p.issues) == ["dropped", "dropped", "invalid"]
    with pytest.raises(PromptParseError):
        parse_generation("CHIP-MDCFNPC", "lead\n发热：阳性", None)
    assert parse_generation("CHIP-MDCFNPC", "lead\n发热：" + MDCFNPC_CHOICES[1], MDCFNPC_CHOICES).answer == [
        {"entity": "发热", "attr": "未患有症状疾病"}]


def test_mrg_sections():
    gen = ("  上述问诊对话的诊疗报告如下：\n主诉：发热。\n现病史：咳嗽。现病史：发热两天。\n诊断：感冒\n诊断：流感\n"
           " 建议：休息\n其他：x\n")
    p = parse_generation("IMCS-V2-MRG", gen)
    # text after the LAST key in the line; a later line overwrites; " 建议" does not start with the key
    assert p.answer == {"主诉": "发热。", "现病史": "发热两天。", "诊断": "流感"}
    assert [i.line for i in p.issues] == [" 建议：休息", "其他：x"]


def test_meddg_strip():
    assert parse_generation("MedDG", "  多喝水。\n").answer == "多喝水。"


def test_unknown_task_and_bad_records():
    with pytest.raises(UnknownTaskError) as info:
        parse_generation("CMeEE", "x", sample_id="s9")
    assert info.value.sample_id == "s9" and isinstance(info.value, ValueError)
    with pytest.raises(UnknownTaskError):
        parse_generation("CMeEE", "x", strict=False)
    with pytest.raises(PromptParseError):
        parse_record({"sample_id": "a", "target": "x"})
    with pytest.raises(PromptParseError):
        parse_generation("MedDG", None)
    with pytest.raises(PromptParseError):
        parse_generation("CMeEE-V2", "x", None)  # NER needs a list of choices
    assert parse_record({"task_dataset": "MedDG", "target": "x"}).sample_id == "xxxx"


def test_structure_shape_and_issue_counts():
    records = mini_records()
    out = structure(records)
    assert list(out) == list(PARSER_TASKS)
    assert all(len(v) == 1 and set(v[0]) == {"sample_id", "answer"} for v in out.values())
    bad = records + [{"task_dataset": "Text2DT", "sample_id": "b1", "target": "根据给定的指南文本抽取的诊疗决策树如下：\n坏行", "answer_choices": None}]
    with pytest.raises(PromptParseError):
        structure(bad)
    sp = structure_with_issues(bad, strict=False)
    assert sp.issue_counts()["Text2DT"] == {"error": 1, "dropped": 0, "invalid": 0}
    assert sp.results["Text2DT"][-1] == {"sample_id": "b1", "answer": [
        {"role": "D", "logical_rel": "null", "triples": []}]}
    assert [i.line for i in sp.issues("error")] == ["坏行"]
