"""Validation of edits and the CMeIE helpers: Combined as the data define it, allowed predicates."""
from __future__ import annotations

import json

import pytest

from cblue_core.annotation import (
    Annotation,
    allowed_predicates,
    combined_for,
    schema_types,
    validate_annotation,
)
from cblue_core.io.resources import Schema, read_schemas
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task
from tests.annotation.conftest import CMEIE_DEV, CMEIE_SCHEMAS

CMEEE = get_task("CMeEE")
CMEIE = get_task("CMeIE")
CDN = get_task("CHIP-CDN")
QQR = get_task("KUAKE-QQR")


def test_combined_matches_every_sample_triple():
    n = 0
    for line in CMEIE_DEV.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        for t in rec["spo_list"]:
            assert combined_for(rec["text"], t["subject"], t["object"]["@value"]) is t["Combined"], t
            n += 1
    assert n == 92


def test_combined_hand_made():
    text = "高血压可引起头痛。治疗高血压常用氨氯地平。"
    assert combined_for(text, "高血压", "头痛") is False      # same sentence
    assert combined_for(text, "高血压", "氨氯地平") is False  # 高血压 occurs again in sentence 2
    assert combined_for(text, "头痛", "氨氯地平") is True


def test_allowed_predicates():
    schemas = [Schema("疾病", "药物治疗", "药物"), Schema("疾病", "临床表现", "症状"),
               Schema("疾病", "并发症", "疾病"), Schema("疾病", "相关（导致）", "疾病"),
               Schema("社会学", "发病率", "疾病")]
    assert allowed_predicates(schemas, "疾病", "疾病") == ["并发症", "相关（导致）"]
    assert allowed_predicates(schemas, "疾病", "检查") == []
    assert allowed_predicates(schemas, "", "疾病") == ["并发症", "相关（导致）", "发病率"]
    dicts = [{"subject_type": "疾病", "predicate": "药物治疗", "object_type": "药物"}]
    assert allowed_predicates(dicts, "疾病", "药物") == ["药物治疗"]
    sample = read_schemas(CMEIE_SCHEMAS)
    assert "药物治疗" in allowed_predicates(sample, "疾病", "药物")
    subj, obj = schema_types(sample)
    assert "疾病" in subj and "症状" in obj


def test_spans_are_normalised_and_checked():
    ex = Example(key="t", index=0, text="患者口服阿莫西林后皮疹消退。")
    out = validate_annotation(CMEEE, ex, Annotation((Span(4, 8, "dru"), Span(9, 11, "sym", "皮疹"))))
    assert out.spans == (Span(4, 8, "dru", "阿莫西林"), Span(9, 11, "sym", "皮疹"))
    for spans, msg in [((Span(4, 4, "dru"),), "empty, reversed or outside"),
                       ((Span(-1, 2, "dru"),), "outside the text"),
                       ((Span(10, 30, "dru"),), "outside the text"),
                       ((Span(4, 8, "drug"),), r"unknown entity type 'drug'.*dis, sym, dru"),
                       ((Span(4, 8, "dru", "阿莫"),), "not the text slice"),
                       (("4-8",), "not a Span")]:
        with pytest.raises(ValueError, match=msg):
            validate_annotation(CMEEE, ex, Annotation(spans))


def test_triples_schema_message_names_what_is_allowed():
    ex = Example(key="t", index=0, text="糖尿病可并发糖尿病肾病。")
    schemas = [Schema("疾病", "并发症", "疾病"), Schema("疾病", "相关（导致）", "疾病")]
    bad = Triple("糖尿病", "临床表现", "糖尿病肾病", "疾病", "疾病")
    with pytest.raises(ValueError, match=r"allowed between 疾病 and 疾病: 并发症, 相关（导致）"):
        validate_annotation(CMEIE, ex, Annotation(triples=(bad,)), schemas=schemas)
    with pytest.raises(ValueError, match="no schema relates a 症状 subject"):
        validate_annotation(CMEIE, ex, Annotation(triples=(Triple("糖尿病", "并发症", "糖尿病肾病", "症状", "疾病"),)),
                            schemas=schemas)
    with pytest.raises(ValueError, match="subject_type and object_type are required"):
        validate_annotation(CMEIE, ex, Annotation(triples=(Triple("糖尿病", "并发症", "糖尿病肾病"),)),
                            schemas=schemas)
    with pytest.raises(ValueError, match="the object is empty"):
        validate_annotation(CMEIE, ex, Annotation(triples=(Triple("糖尿病", "并发症", " ", "疾病", "疾病"),)))
    good = validate_annotation(CMEIE, ex, Annotation(triples=(Triple("糖尿病", "并发症", "糖尿病肾病", "疾病", "疾病"),)),
                               schemas=schemas)
    assert good.triples[0].combined is False
    with pytest.raises(ValueError, match="hold triples, not entity spans"):
        validate_annotation(CMEIE, ex, Annotation(spans=(Span(0, 3, "dis"),)))


def test_terms_and_labels():
    ex = Example(key="t", index=0, text="2型糖尿病伴血糖控制不佳", terms=["2型糖尿病"])
    icd = ["2型糖尿病", "高血压", "糖尿病性肾病"]
    assert validate_annotation(CDN, ex, Annotation(terms=("2型糖尿病", "高血压")), icd_terms=icd).terms == (
        "2型糖尿病", "高血压")
    for terms, msg in [(("高血压##2型糖尿病",), "separator"), (("高血压", "高血压"), "twice"),
                       ((), "at least one"), ((" 高血压",), "spaces"), (("糖尿病",), "not in the workspace's ICD-10")]:
        with pytest.raises(ValueError, match=msg):
            validate_annotation(CDN, ex, Annotation(terms=terms), icd_terms=icd)
    pair = Example(key="1", index=0, text="a", text2="b", label="NA")   # QQR's raw NA stays as it was
    assert validate_annotation(QQR, pair, Annotation(label="NA", terms=())).label == "NA"
    with pytest.raises(ValueError, match=r"unknown KUAKE-QQR label '3'"):
        validate_annotation(QQR, pair, Annotation(label="3"))
    with pytest.raises(ValueError, match="cannot be edited here"):
        validate_annotation(get_task("CHIP-CDEE"), pair, Annotation())
