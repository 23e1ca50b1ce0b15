"""Serving the app to others: read-only mode, workspace files only under the allowed roots,
uploads validated once, unexpected failures logged instead of shown."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_pages import uploads
from app_pages.common import page_failure
from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def filled(tmp_path):
    db = tmp_path / "ro" / "workspace.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, ROOT / "sample_data")
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    import_run(ws, did, ROOT / "sample_data" / "cblue" / "CMeEE" / "CMeEE_dev.pred.json")
    ws.close()
    return db


def open_page(page: str | None, db: Path, monkeypatch, query: dict | None = None) -> AppTest:
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    if page:
        at.switch_page(page)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.run()
    return at


def plain(text: str) -> str:
    return text.replace("\\", "")


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def test_read_only_mode_disables_writes_and_changes_nothing(filled, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_READONLY", "1")
    before = filled.read_bytes()
    at = open_page("pages/runs.py", filled, monkeypatch)
    assert not at.exception and not at.error
    notices = [plain(i.value) for i in at.info]
    assert any("Read-only mode: importing runs" in n for n in notices)
    assert button(at, "runs_model_go").disabled and button(at, "runs_delete").disabled
    assert at.text_input(key="db_path").disabled
    at.switch_page("pages/errors.py")
    at.query_params["tab"] = "slices"
    at.run()
    assert not at.exception and button(at, "err_slice_save").disabled
    assert filled.read_bytes() == before


def test_read_only_mode_refuses_a_missing_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_READONLY", "1")
    missing = tmp_path / "nothing" / "workspace.duckdb"
    at = open_page(None, missing, monkeypatch)
    assert not at.exception
    assert any("read-only mode opens an existing one only" in plain(e.value) for e in at.error)
    assert not missing.exists() and not missing.parent.exists()


def test_sidebar_refuses_workspace_files_outside_the_allowed_roots(filled, tmp_path, monkeypatch):
    at = open_page(None, filled, monkeypatch)
    target = tmp_path / "elsewhere" / "evil.duckdb"
    at.text_input(key="db_path").input(str(target)).run()
    assert not at.exception
    assert any("may only be opened under" in plain(e.value) for e in at.error)
    assert not target.exists() and not target.parent.exists()
    # a file beside the default one is allowed (the folder of $CBLUE_STUDIO_DB)
    other = filled.parent / "second.duckdb"
    at.text_input(key="db_path").input(str(other)).run()
    assert not at.exception and not at.error and other.is_file()


def test_sidebar_bounds_the_workspace_files_a_session_creates(filled, monkeypatch):
    from app_pages.common import new_workspace_quota

    new_workspace_quota.clear()
    try:
        at = open_page(None, filled, monkeypatch)
        deep = filled.parent / "a" / "b" / "c" / "d" / "x.duckdb"
        at.text_input(key="db_path").input(str(deep)).run()
        assert any("at most 3 folders below" in plain(e.value) for e in at.error)
        assert not (filled.parent / "a").exists()
        made = [filled.parent / f"new-{k}.duckdb" for k in range(4)]
        for path in made[:3]:
            at.text_input(key="db_path").input(str(path)).run()
            assert not at.exception and not at.error and path.is_file()
        at.text_input(key="db_path").input(str(made[3])).run()
        assert any("this session has created 3 workspace files" in plain(e.value) for e in at.error)
        assert not made[3].exists()
        # files that exist open without counting
        at.text_input(key="db_path").input(str(made[0])).run()
        assert not at.error
    finally:
        new_workspace_quota.clear()


def test_an_upload_is_validated_once(monkeypatch):
    calls = []
    real = uploads.validate

    def counting(*args, **kwargs):
        calls.append(args[1:])
        return real(*args, **kwargs)

    monkeypatch.setattr(uploads, "validate", counting)
    data = (ROOT / "sample_data" / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_dev.json").read_bytes()
    session: dict = {}
    first = uploads.validated_upload(session, "f1", lambda: data, None, "KUAKE-QIC_dev.json", 10**8)
    again = uploads.validated_upload(session, "f1", lambda: data, None, "KUAKE-QIC_dev.json", 10**8)
    assert again is first and len(calls) == 1 and first.report.ok
    uploads.validated_upload(session, "f1", lambda: data, "KUAKE-QIC", "KUAKE-QIC_dev.json", 10**8)
    uploads.validated_upload(session, "f2", lambda: data, "KUAKE-QIC", "KUAKE-QIC_dev.json", 10**8)
    assert len(calls) == 3
    refused = uploads.validated_upload(session, "f3", lambda: data, None, "KUAKE-QIC_dev.json", 100)
    assert not refused.report.ok and refused.report.errors[0].code == "too_large"


def test_a_large_upload_keeps_its_report_not_its_records(tmp_path, monkeypatch):
    import gc
    import json
    import tracemalloc

    records = json.loads((ROOT / "sample_data" / "cblue" / "CMeEE" / "CMeEE_train.json").read_text(encoding="utf-8"))
    data = json.dumps(records * 60, ensure_ascii=False).encode("utf-8")        # about 0.9 MB
    monkeypatch.setattr(uploads, "KEEP_RECORDS_BYTES", len(data) - 1)
    session: dict = {}
    gc.collect()
    tracemalloc.start()
    try:
        checked = uploads.validated_upload(session, "big", lambda: data, None, "CMeEE_dev.json", 10**8)
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert checked.report.ok and checked.report.records == len(records) * 60 and checked.dataset is None
    assert kept < len(data) // 4, f"the session keeps {kept:,} bytes for a {len(data):,}-byte upload"
    # storing reads the upload once more: the same records as a small upload keeps
    loaded = uploads.dataset_to_store(checked, lambda: data, "CMeEE_dev.json", 10**8)
    assert len(loaded.examples) == checked.report.records and loaded.report.sha256 == checked.report.sha256
    monkeypatch.setattr(uploads, "KEEP_RECORDS_BYTES", len(data))
    small = uploads.validated_upload(session, "small", lambda: data, None, "CMeEE_dev.json", 10**8)
    assert small.dataset is not None and uploads.dataset_to_store(small, lambda: b"", "x", 1) is small.dataset
    ws = connect(tmp_path / "up.duckdb")
    try:
        assert ws.datasets.ingest(loaded, name="big.json", source="upload: big.json", split="dev").dataset_id
    finally:
        ws.close()


def test_unexpected_failures_are_logged_without_their_message(tmp_path, monkeypatch):
    log = tmp_path / "studio.log"
    monkeypatch.setenv("CBLUE_STUDIO_LOG", str(log))
    secret = "患者张三，住院号12345，发热三天"

    def boom():
        raise RuntimeError(secret)

    try:
        boom()
    except RuntimeError as exc:
        shown = page_failure("saving a thing", exc)
    assert shown == "saving a thing failed unexpectedly (RuntimeError); the details are in the server's log"
    text = log.read_text(encoding="utf-8")
    assert "RuntimeError" in text and "boom" in text and secret not in text
    assert page_failure("x", ValueError("bad edit: the span ends before it starts")) == (
        "bad edit: the span ends before it starts")
