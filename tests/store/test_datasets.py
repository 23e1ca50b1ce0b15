"""Which dataset of a task split opens by default: the first ingested, until one is made the
default; an upload is another version that does not change it."""
from __future__ import annotations

import json

import pytest

from cblue_core.io.validate import load
from cblue_core.store.errors import WorkspaceError
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from tests.store.conftest import RECORDS


@pytest.fixture
def ws(tmp_path):
    w = connect(tmp_path / "ws.duckdb")
    yield w
    w.close()


def another_version(tmp_path, name="CMeEE_dev_v2.json"):
    p = tmp_path / name
    p.write_text(json.dumps(RECORDS + [{"text": "发热", "entities": []}], ensure_ascii=False), encoding="utf-8")
    return p


def test_a_later_dataset_of_the_split_does_not_become_the_default(ws, cmeee_file, tmp_path):
    first = ingest_file(ws, cmeee_file).result.dataset_id
    out = ingest_file(ws, another_version(tmp_path), task="CMeEE", split="dev")
    assert out.ok and out.result.created
    assert ws.datasets.find("CMeEE", "dev").dataset_id == first
    assert f"dataset {first} stays the one everyone opens" in out.message
    assert [d.dataset_id for d in ws.datasets.versions("CMeEE", "dev")] == [first, out.result.dataset_id]


def test_make_default_chooses_another_and_deleting_it_falls_back_to_the_first(ws, cmeee_file, tmp_path):
    first = ingest_file(ws, cmeee_file).result.dataset_id
    second = ws.datasets.ingest(_loaded(another_version(tmp_path)), split="dev", make_default=True)
    assert ws.datasets.find("CMeEE", "dev").dataset_id == second.dataset_id
    assert ws.datasets.make_default(first).dataset_id == first
    assert ws.datasets.find("CMeEE", "dev").dataset_id == first
    ws.datasets.make_default(second.dataset_id)
    ws.datasets.delete(second.dataset_id)
    assert ws.datasets.find("CMeEE", "dev").dataset_id == first
    ws.datasets.make_default(third := ingest_file(ws, another_version(tmp_path, "c.json"), task="CMeEE",
                                                  split="dev").result.dataset_id)
    ws.datasets.delete(third)
    later = ingest_file(ws, another_version(tmp_path, "d.json"), task="CMeEE", split="dev").result
    assert ws.datasets.find("CMeEE", "dev").dataset_id == first != later.dataset_id
    with pytest.raises(WorkspaceError, match="no dataset 999"):
        ws.datasets.make_default(999)


def test_reingesting_the_same_content_as_default_makes_it_the_default(ws, cmeee_file, tmp_path):
    first = ingest_file(ws, cmeee_file).result.dataset_id
    later = ingest_file(ws, another_version(tmp_path), task="CMeEE", split="dev").result.dataset_id
    again = ws.datasets.ingest(_loaded(another_version(tmp_path)), split="dev", make_default=True)
    assert not again.created and again.dataset_id == later and "now the default" in again.message
    assert ws.datasets.find("CMeEE", "dev").dataset_id == later != first


def _loaded(path):
    return load(path, "CMeEE")
