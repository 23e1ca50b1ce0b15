"""Fixtures for the annotation tests: small workspaces in tmp_path, filled from sample_data or
hand-made records."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from tests.conftest import SAMPLE_DATA

CMEEE_DEV = SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json"
CMEEE_PRED = SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json"
CMEIE_DEV = SAMPLE_DATA / "cblue/CMeIE/CMeIE_dev.json"
CMEIE_SCHEMAS = SAMPLE_DATA / "cblue/CMeIE/53_schemas.json"
CTC_DEV = SAMPLE_DATA / "cblue/CHIP-CTC/CHIP-CTC_dev.json"
STS_DEV = SAMPLE_DATA / "cblue/CHIP-STS/CHIP-STS_dev.json"
CDN_DEV = SAMPLE_DATA / "cblue/CHIP-CDN/CHIP-CDN_dev.json"
CDN_ICD = SAMPLE_DATA / "cblue/CHIP-CDN/icd10_terms.xlsx"
CMEEE_V2_DEV = SAMPLE_DATA / "cblue2/CMeEE-V2/CMeEE-V2_dev.json"


def ingest(ws, path: Path, **kw) -> int:
    out = ingest_file(ws, path, **kw)
    assert out.ok, out.message
    return out.result.dataset_id


def write_json(path: Path, records, lines: bool = False) -> Path:
    if lines:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    yield w
    w.close()
