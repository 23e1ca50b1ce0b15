"""The real CBLUE files in ../shared validate with the known counts and their real defects."""
from __future__ import annotations

import json

import pytest

from cblue_core.io.resources import read_ctc_categories, read_icd10, read_schemas
from cblue_core.io.validate import load, validate
from cblue_core.io.writers import dumps_records, encode_records

DEV_COUNTS = {  # file -> (records, annotations)
    "CMeEE/CMeEE_dev.json": (5000, 20300),
    "CMeIE/CMeIE_dev.json": (3585, 10626),
    "CHIP-CTC/CHIP-CTC_dev.json": (7682, 7682),
    "KUAKE-QIC/KUAKE-QIC_dev.json": (1955, 1955),
    "KUAKE-QTR/KUAKE-QTR_dev.json": (2913, 2913),
    "KUAKE-QQR/KUAKE-QQR_dev.json": (1600, 1600),
    "CHIP-STS/CHIP-STS_dev.json": (4000, 4000),
    "CHIP-CDN/CHIP-CDN_dev.json": (2000, 3542),
    "CHIP-CDEE/CHIP-CDEE_dev.json": (384, 2138),
}


@pytest.mark.parametrize("rel", sorted(DEV_COUNTS))
def test_dev_counts(cblue_dir, rel):
    ds = load(cblue_dir / rel)
    assert (ds.report.records, ds.report.annotations) == DEV_COUNTS[rel]


def test_cmeee_dev_is_inclusive_and_nested(cblue_dir):
    rep = load(cblue_dir / "CMeEE/CMeEE_dev.json").report
    assert rep.offset_convention == "inclusive"
    assert rep.max_nesting_depth >= 2 and not rep.warnings
    assert len(rep.label_distribution) == 9


def test_cmeee_train_reports_two_reversed_entities(cblue_dir):
    rep = load(cblue_dir / "CMeEE/CMeEE_train.from_chip2020.json").report
    assert rep.records == 15000 and rep.annotations == 61796
    reversed_ = [w for w in rep.warnings if w.code == "bad_offsets"]
    assert [w.record for w in reversed_] == [6051, 6421]
    dups = [w for w in rep.warnings if w.code == "duplicate_key"]
    assert len(dups) == 43


def test_qqr_dev_na_label_is_listed(cblue_dir):
    rep = load(cblue_dir / "KUAKE-QQR/KUAKE-QQR_dev.json").report
    assert [(w.code, w.field) for w in rep.warnings] == [("unknown_label", "label")]
    assert "'NA'" in rep.warnings[0].message
    assert not validate(cblue_dir / "KUAKE-QQR/KUAKE-QQR_dev.json", strict=True).report.ok


def test_cmeie_is_json_lines_under_json_name(cblue_dir):
    rep = load(cblue_dir / "CMeIE/CMeIE_dev.json").report
    assert rep.container == "lines" and rep.task == "CMeIE"
    assert len(rep.label_distribution) == 44


def test_test_files_have_no_labels(cblue_dir):
    for rel in ("CMeEE/CMeEE_test.json", "KUAKE-QIC/KUAKE-QIC_test.json", "CMeIE/CMeIE_test.json"):
        rep = load(cblue_dir / rel).report
        assert rep.split == "test" and rep.annotations == 0


def test_resources(cblue_dir):
    icd = read_icd10(cblue_dir / "CHIP-CDN/国际疾病分类 ICD-10北京临床版v601.xlsx")
    assert len(icd) == 40474 and icd[0].code == "A00" and icd[0].term == "霍乱"
    cats = read_ctc_categories(cblue_dir / "CHIP-CTC/category.xlsx")
    assert len(cats) == 44 and cats[0].label == "Disease" and cats[0].zh == "疾病"
    assert len(read_schemas(cblue_dir / "CMeIE/53_schemas.json")) == 53


@pytest.mark.parametrize("rel", sorted(DEV_COUNTS) + ["CMeEE/CMeEE_test.json", "CMeIE/CMeIE_test.json"])
def test_round_trip_from_typed_fields(cblue_dir, rel):
    """Decoding then encoding every record from its typed fields gives the same records back."""
    ds = load(cblue_dir / rel)
    original = [r for r in _raw_records(cblue_dir / rel)]
    encoded = encode_records(ds.task, ds.examples, use_raw=False, convention=ds.report.offset_convention)
    assert len(encoded) == len(original)
    for a, b in zip(encoded, original):
        assert _normal(a) == _normal(b)
    # and raw export is byte-for-byte the same records
    again = json.loads(dumps_records(ds.task, encode_records(ds.task, ds.examples, use_raw=True))) \
        if ds.task.container != "jsonl" else [json.loads(line) for line in
                                               dumps_records(ds.task, encode_records(ds.task, ds.examples, use_raw=True)).splitlines()]
    assert again == original


def _raw_records(path):
    text = path.read_text(encoding="utf-8-sig")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _normal(rec):
    """Fields the official formats treat as optional on input: an absent list equals []."""
    rec = dict(rec)
    for key in ("entities", "spo_list", "event"):
        if rec.get(key) == []:
            rec.pop(key)
    if "id" in rec:
        rec["id"] = str(rec["id"])
    if "normalized_result" in rec and rec["normalized_result"] == "":
        rec.pop("normalized_result")
    return rec
