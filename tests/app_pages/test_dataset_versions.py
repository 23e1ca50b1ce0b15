"""Datasets page, several versions of a split: an upload opens in its uploader's session only,
every other visitor keeps the default until the admin control (or ingest --make-default) changes it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_pages import permissions
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP

ROOT = Path(__file__).resolve().parents[2]
CMEEE_DEV = ROOT / "sample_data" / "cblue" / "CMeEE" / "CMeEE_dev.json"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "versions" / "workspace.duckdb"
    ws = connect(path)
    bootstrap_sample_data(ws, ROOT / "sample_data")
    ws.close()
    return path


def visit(db: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["task"], at.query_params["split"] = "CMeEE", "dev"
    return at.run()


def examples_shown(at: AppTest) -> int:
    return int(at.metric[0].value.replace(",", ""))


def default_id(db: Path) -> int:
    return next(iter(_ids(db)))


def _ids(db: Path) -> list[int]:
    ws = connect(db)
    try:
        return [ws.datasets.find("CMeEE", "dev").dataset_id] + [
            d.dataset_id for d in ws.datasets.versions("CMeEE", "dev")]
    finally:
        ws.close()


def test_an_upload_opens_for_its_uploader_only_until_made_the_default(db, monkeypatch):
    records = json.loads(CMEEE_DEV.read_text(encoding="utf-8"))
    first = default_id(db)
    uploader = visit(db, monkeypatch)
    assert not uploader.exception and examples_shown(uploader) == len(records)
    assert not uploader.get("selectbox") or "ds_version" not in [s.key for s in uploader.selectbox]

    upload = json.dumps(records + [{"text": "患者发热。", "entities": []}], ensure_ascii=False).encode()
    uploader.file_uploader(key="ds_upload").set_value(("CMeEE_dev.json", upload, "application/json")).run()
    uploader.button(key="ds_store").click().run()
    assert not uploader.exception and not uploader.error
    uploaded = _ids(db)[-1]
    assert uploaded != first and default_id(db) == first          # stored as another version
    assert uploader.selectbox(key="ds_version").value == uploaded   # ... that its uploader opens
    assert examples_shown(uploader) == len(records) + 1

    visitor = visit(db, monkeypatch)                                  # anyone else: the default
    assert visitor.selectbox(key="ds_version").value == first
    assert examples_shown(visitor) == len(records)
    assert "default" in visitor.selectbox(key="ds_version").format_func(first)

    # read-only mode (the same process cannot also open the file read-only: the mode's switch)
    with monkeypatch.context() as m:
        m.setattr(permissions, "read_only", lambda: True)   # what disables the write controls
        demo = visit(db, monkeypatch)
        demo.selectbox(key="ds_version").set_value(uploaded).run()
        assert demo.button(key="ds_make_default").disabled

    uploader.button(key="ds_make_default").click().run()            # the admin control
    assert not uploader.exception and default_id(db) == uploaded
    assert examples_shown(visit(db, monkeypatch)) == len(records) + 1
