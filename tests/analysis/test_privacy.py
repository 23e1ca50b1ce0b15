"""Identifier warnings for the demo mode."""
from __future__ import annotations

import time

import pytest

from cblue_core.analysis.privacy import find_identifiers, resident_id_valid

# 11010519491231002X is the checksum example of GB 11643 (a published sample number).
VALID_ID = "11010519491231002X"


def test_checksum():
    assert resident_id_valid(VALID_ID)
    assert not resident_id_valid("110105194912310021")


@pytest.mark.parametrize("text, kind", [
    (f"患者身份证号{VALID_ID}，主诉头痛。", "resident_id"),
    ("联系电话13812345678，家属陪同。", "phone"),
    ("电话：138-1234-5678", "phone"),
    ("科室电话010-62751234", "phone"),
    ("住院号：ZY2023001234，入院诊断肺炎。", "record_number"),
    ("病案号 88231456", "record_number"),
])
def test_detects(text, kind):
    hits = find_identifiers(text)
    assert [h.kind for h in hits] == [kind]
    assert text[hits[0].start:hits[0].end] == hits[0].text


@pytest.mark.parametrize("text", [
    "患者血压150/95mmHg，心率88次/分，血糖7.8mmol/L。",
    "白细胞计数12.6×10^9/L，体温38.5℃，病程3年。",
    "110105194912310021 不是有效的身份证号",        # wrong check digit
    "2023年12月31日复查，CRP 25mg/L。",
])
def test_clinical_numbers_are_not_identifiers(text):
    assert find_identifiers(text) == []


# Inputs that made the record-number pattern backtrack: each must take linear time.
_N = 100_000
ADVERSARIAL = {
    "keyword_then_spaces": "住院号" + " " * _N,
    "spaces_both_sides_of_colon": "住院号" + " " * (_N // 2) + "：" + " " * (_N // 2),
    "digits": "1" * _N,
    "repeated_keyword_colon": "住院号:" * (_N // 4),
    "repeated_keyword_spaces_colon": ("病案号   :   ") * (_N // 10),
    "keyword_then_letters": "MRN" + "a" * _N,
    "keyword_then_alnum": "住院号" + "a1-" * (_N // 3),
    "mixed": ("住院号 : 1 1 1 病案号#a- 138 0" + " " * 20 + "1" * 20) * (_N // 60),
    "id_like_runs": ("1" * 17 + "X ") * (_N // 19),
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_linear_on_adversarial_input(text):
    start = time.perf_counter()
    find_identifiers(text)
    elapsed = time.perf_counter() - start
    print(f"{len(text):,} characters in {elapsed * 1000:.1f} ms")
    assert elapsed < 1.0  # about 0.03 s here; generous because the machine is shared


@pytest.mark.parametrize("padding", [
    " " * _N,
    "住院号" + " " * _N,          # a keyword followed by a long run of spaces
    "1" * _N + " ",
    "住院号:" * (_N // 4),
])
def test_real_hit_after_long_padding(padding):
    text = padding + "住院号：ZY2023001234，入院诊断肺炎。"
    hits = find_identifiers(text)
    assert [h.kind for h in hits] == ["record_number"]
    assert hits[0].text == "住院号：ZY2023001234"
    assert hits[0].start == len(padding)


def test_spacing_around_the_colon_still_detected():
    for text in ("住院号 ： ZY2023001234", "病案号#88231456", "MRN:  A12345"):
        assert [h.kind for h in find_identifiers(text)] == ["record_number"], text


def test_phone_after_long_digit_run():
    text = "1" * _N + " 联系电话13812345678"
    assert [(h.kind, h.text) for h in find_identifiers(text)] == [("phone", "13812345678")]
