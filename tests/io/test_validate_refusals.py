"""Every refusal names the file, the record or line, the field and what was expected."""
from __future__ import annotations

import json

import pytest

from cblue_core.io.errors import FileRefused
from cblue_core.io.limits import MAX_NESTING_PER_RECORD, MAX_SPANS_PER_RECORD, MAX_TRIPLES_PER_RECORD
from cblue_core.io.validate import load, validate

GOOD = [{"text": "呼吸肌麻痹和呼吸中枢受累", "entities": [
    {"start_idx": 0, "end_idx": 2, "type": "bod", "entity": "呼吸肌"},
    {"start_idx": 0, "end_idx": 4, "type": "sym", "entity": "呼吸肌麻痹"}]}]


def write(tmp_path, name, content: bytes | str):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def test_truncated_json_is_refused_with_line(tmp_path):
    text = json.dumps(GOOD * 3, ensure_ascii=False, indent=2)
    p = write(tmp_path, "CMeEE_dev.json", text[: len(text) // 2])
    rep = validate(p).report
    assert not rep.ok and rep.errors[0].code == "syntax"
    assert "truncated" in rep.errors[0].message
    assert rep.errors[0].line is not None
    with pytest.raises(FileRefused):
        load(p)


def test_gbk_file_is_refused_as_encoding(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", json.dumps(GOOD, ensure_ascii=False).encode("gbk"))
    rep = validate(p).report
    assert not rep.ok
    err = rep.errors[0]
    assert err.code == "encoding" and "UTF-8" in err.message and "GB18030" in err.expected


def test_bom_is_accepted(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", b"\xef\xbb\xbf" + json.dumps(GOOD, ensure_ascii=False).encode())
    ds = load(p)
    assert ds.report.records == 1 and ds.report.annotations == 2


def test_empty_file_is_refused(tmp_path):
    for content in (b"", b"   \n", b"[]"):
        rep = validate(write(tmp_path, "CMeEE_dev.json", content)).report
        assert not rep.ok and rep.errors[0].code == "empty"


def test_wrong_field_type_names_record_and_field(tmp_path):
    bad = [GOOD[0], {"text": "发热", "entities": [{"start_idx": "0", "end_idx": 1, "type": "sym", "entity": "发热"}]}]
    rep = validate(write(tmp_path, "CMeEE_dev.json", json.dumps(bad, ensure_ascii=False))).report
    assert not rep.ok
    err = rep.errors[0]
    assert err.record == 1 and err.field == "entities[0].start_idx" and err.expected == "an integer"
    assert "record 1" in str(err) and "CMeEE_dev.json" in str(err)


def test_missing_field_is_structural(tmp_path):
    rep = validate(write(tmp_path, "KUAKE-QIC_dev.json", json.dumps([{"id": "s1", "label": "其他"}]))).report
    assert not rep.ok and rep.errors[0].field == "query" and "missing" in rep.errors[0].message


def test_inconsistent_offsets_refused_with_first_offenders(tmp_path):
    mixed = [
        {"text": "患者发热三天", "entities": [{"start_idx": 2, "end_idx": 3, "type": "sym", "entity": "发热"}]},
        {"text": "咳嗽伴咳痰", "entities": [{"start_idx": 0, "end_idx": 2, "type": "sym", "entity": "咳嗽"}]},
        {"text": "头痛", "entities": [{"start_idx": 0, "end_idx": 1, "type": "sym", "entity": "头痛"}]},
    ]
    rep = validate(write(tmp_path, "CMeEE_dev.json", json.dumps(mixed, ensure_ascii=False))).report
    assert not rep.ok and rep.errors[0].code == "offsets"
    assert rep.errors[0].record == 1  # the one exclusive-end record among inclusive ones
    assert "inconsistent" in rep.errors[0].message


def test_offsets_fitting_no_convention_refused(tmp_path):
    bad = [{"text": "患者发热三天", "entities": [{"start_idx": 0, "end_idx": 1, "type": "sym", "entity": "发热"}]}]
    rep = validate(write(tmp_path, "CMeEE_dev.json", json.dumps(bad, ensure_ascii=False))).report
    assert not rep.ok and rep.errors[0].code == "offsets" and rep.errors[0].record == 0


def test_exclusive_convention_detected(tmp_path):
    excl = [{"text": "呼吸肌麻痹", "entities": [
        {"start_idx": 0, "end_idx": 3, "type": "bod", "entity": "呼吸肌"},
        {"start_idx": 0, "end_idx": 5, "type": "sym", "entity": "呼吸肌麻痹"},
        {"start_idx": 4, "end_idx": 5, "type": "sym", "entity": "痹"}]}]
    ds = load(write(tmp_path, "CMeEE-V2_dev.json", json.dumps(excl, ensure_ascii=False)))
    assert ds.report.offset_convention == "exclusive" and ds.report.task == "CMeEE-V2"
    spans = ds.examples[0].spans
    assert [(s.start, s.end, s.text) for s in spans] == [(0, 3, "呼吸肌"), (0, 5, "呼吸肌麻痹"), (4, 5, "痹")]
    assert ds.report.max_nesting_depth == 2


def test_annotation_defects_are_warnings_and_strict_refuses(tmp_path):
    recs = [{"id": "s1", "query1": "a", "query2": "b", "label": "NA"},
            {"id": "s2", "query1": "c", "query2": "d", "label": "2"}]
    p = write(tmp_path, "KUAKE-QQR_dev.json", json.dumps(recs))
    ds = validate(p)
    assert ds.report.ok and len(ds.examples) == 2  # kept as read, listed
    assert ds.report.warnings[0].code == "unknown_label" and ds.report.warnings[0].record == 0
    assert ds.examples[0].label == "NA"
    strict = validate(p, strict=True).report
    assert not strict.ok and strict.errors[-1].code == "strict"


def test_reversed_span_is_listed_not_dropped(tmp_path):
    recs = [{"text": "右侧胸痛", "entities": [
        {"start_idx": 2, "end_idx": 3, "type": "sym", "entity": "胸痛"},
        {"start_idx": 3, "end_idx": 2, "type": "bod", "entity": "胸"}]}]
    ds = validate(write(tmp_path, "CMeEE_dev.json", json.dumps(recs, ensure_ascii=False)))
    assert ds.report.ok and ds.report.offset_convention == "inclusive"
    assert len(ds.examples[0].spans) == 2
    assert any(w.code == "bad_offsets" and w.field == "entities[1]" for w in ds.report.warnings)


def test_not_json_names_the_start(tmp_path):
    rep = validate(write(tmp_path, "CHIP-CTC_dev.json", "id\tlabel\ttext\n")).report
    assert not rep.ok and rep.errors[0].code == "syntax" and rep.errors[0].line == 1


def test_bad_json_line_in_jsonl(tmp_path):
    good = json.dumps({"text": "肺癌", "spo_list": []}, ensure_ascii=False)
    rep = validate(write(tmp_path, "CMeIE_dev.json", good + "\n" + good[:-3] + "\n")).report
    assert not rep.ok and rep.errors[0].line == 2 and rep.errors[0].record == 1


def test_unknown_task_without_hint(tmp_path):
    rep = validate(write(tmp_path, "mystery.json", json.dumps([{"foo": 1}]))).report
    assert not rep.ok and rep.errors[0].code == "task"


def _nested_cmeee(n: int) -> list[dict]:
    text = "字" * 2000
    return [GOOD[0], {"text": text, "entities": [
        {"start_idx": 0, "end_idx": i - 1, "type": "dis", "entity": text[:i]} for i in range(1, n + 1)]}]


def test_deeply_nested_record_is_refused_naming_record_line_and_field(tmp_path):
    ok = validate(write(tmp_path, "CMeEE_dev.json",
                        json.dumps(_nested_cmeee(MAX_NESTING_PER_RECORD), ensure_ascii=False))).report
    assert ok.ok and ok.max_nesting_depth == MAX_NESTING_PER_RECORD
    text = "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in _nested_cmeee(800)) + "\n]"
    rep = validate(write(tmp_path, "CMeEE_dev.json", text)).report
    assert not rep.ok
    err = rep.errors[0]
    assert err.code == "limit" and err.record == 1 and err.line == 3 and err.field == "entities"
    assert "800 levels of nested spans" in err.message
    assert f"at most {MAX_NESTING_PER_RECORD} levels of nested spans per record" in err.expected
    assert "record 1" in str(err) and "CMeEE_dev.json" in str(err)


def test_too_many_spans_in_one_record_are_refused(tmp_path):
    n = MAX_SPANS_PER_RECORD + 1
    text = "甲乙" * n
    rec = {"text": text, "entities": [{"start_idx": 2 * i, "end_idx": 2 * i, "type": "sym", "entity": "甲"}
                                      for i in range(n)]}
    rep = validate(write(tmp_path, "CMeEE_dev.json", json.dumps([rec], ensure_ascii=False))).report
    assert not rep.ok
    err = rep.errors[0]
    assert err.code == "limit" and err.record == 0 and f"{n:,} spans" in err.message
    assert "levels" not in err.message  # flat: only the span count is over


def test_too_many_triples_in_one_record_are_refused(tmp_path):
    n = MAX_TRIPLES_PER_RECORD + 1
    good = {"text": "甲病乙症", "spo_list": [{"Combined": False, "predicate": "临床表现", "subject": "甲病",
                                           "subject_type": "疾病", "object": {"@value": "乙症"},
                                           "object_type": {"@value": "症状"}}]}
    bad = dict(good, spo_list=good["spo_list"] * n)
    lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in (good, good, bad))
    rep = validate(write(tmp_path, "CMeIE_dev.json", lines)).report
    assert not rep.ok
    err = rep.errors[0]
    assert err.code == "limit" and err.record == 2 and err.line == 3 and err.field == "spo_list"
    assert f"{n:,} triples" in err.message
