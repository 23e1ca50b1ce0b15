"""Fixtures for the scale tests: sample inputs cut into shards, a workspace with stored splits,
and the tiny Hugging Face checkpoints of tests/models (built once per session)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data" / "cblue"
DEV = SAMPLE / "CMeEE" / "CMeEE_dev.json"


@pytest.fixture
def workspace(tmp_path):
    """A workspace file holding the CMeEE dev sample (dataset 1)."""
    from cblue_core.store.ingest import ingest_file
    from cblue_core.store.workspace import connect

    db = tmp_path / "ws.duckdb"
    ws = connect(db)
    ingest_file(ws, DEV)
    ws.close()
    return str(db)


def read_records(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def write_jsonl(path: Path, records: list[dict], blank_lines: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for k, r in enumerate(records):
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            if blank_lines and k % 3 == 1:
                fh.write("\n")
    return path


def write_parquet(path: Path, records: list[dict], row_group_size: int | None = None) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), path, row_group_size=row_group_size)
    return path


def qic_queries(n: int, seed: int = 0) -> list[dict]:
    """``n`` KUAKE-QIC input records (no label) made from the sample queries."""
    import random

    texts = [r["query"] for r in read_records(SAMPLE / "KUAKE-QIC" / "KUAKE-QIC_dev.json")]
    texts += [r["query"] for r in read_records(SAMPLE / "KUAKE-QIC" / "KUAKE-QIC_train.json")]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.choice(texts), rng.choice(texts)
        out.append({"id": f"q{i}", "query": a if i % 2 else a[: max(2, len(a) // 2)] + b[len(b) // 2:]})
    return out


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    from tests.models.conftest import TinyModels

    return TinyModels(tmp_path_factory.mktemp("tiny-models-scale"))
