"""A small CMeEE file (nested entities and a hostile text) shared by the store tests."""
from __future__ import annotations

import json

import pytest

from cblue_core.store.workspace import connect

RECORDS = [
    {"text": "呼吸肌麻痹和呼吸中枢受累患者因呼吸不畅可并发肺炎、肺不张等。", "entities": [
        {"start_idx": 0, "end_idx": 2, "type": "bod", "entity": "呼吸肌"},
        {"start_idx": 0, "end_idx": 4, "type": "sym", "entity": "呼吸肌麻痹"},
        {"start_idx": 22, "end_idx": 23, "type": "dis", "entity": "肺炎"}]},
    {"text": "患者口服阿莫西林后皮疹消退。", "entities": [
        {"start_idx": 4, "end_idx": 7, "type": "dru", "entity": "阿莫西林"},
        {"start_idx": 9, "end_idx": 10, "type": "sym", "entity": "皮疹"}]},
    {"text": "<img src=x onerror=alert(1)> **bold**", "entities": []},
]


@pytest.fixture
def cmeee_file(tmp_path):
    p = tmp_path / "CMeEE_dev.json"
    p.write_text(json.dumps(RECORDS, ensure_ascii=False, indent=2), encoding="utf-8")
    return p


@pytest.fixture
def memory_ws():
    """A throwaway in-memory workspace, acting as its owner (an admin)."""
    w = connect(":memory:")
    yield w
    w.close()
