"""Identifier warnings for the demo mode."""
from __future__ import annotations

import pytest

from cblue_core.privacy import find_identifiers, resident_id_valid

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
