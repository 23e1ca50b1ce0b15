"""A run whose model was trained on part of the split says so on Runs, Errors and Compare, with
the score on the part the model never saw."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.io.validate import load
from cblue_core.models.loading import load_predictor
from cblue_core.models.provenance import RECORDS_FILE, write_training_records
from cblue_core.runs.record import import_run, model_run
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP

ROOT = Path(__file__).resolve().parents[2]
QIC_DEV = ROOT / "sample_data" / "cblue" / "KUAKE-QIC" / "KUAKE-QIC_dev.json"


@pytest.fixture(scope="module")
def overlap_db(tmp_path_factory):
    if not (ROOT / "models" / "kuake-qic" / RECORDS_FILE).is_file():
        pytest.skip("the built-in KUAKE-QIC model is not in this checkout")
    tmp = tmp_path_factory.mktemp("overlap")
    model = tmp / "qic-seen"
    shutil.copytree(ROOT / "models" / "kuake-qic", model)
    write_training_records(model, load(QIC_DEV, "KUAKE-QIC").examples[:5], sources=["sample dev"])
    db = tmp / "ws.duckdb"
    ws = connect(db)
    did = ingest_file(ws, QIC_DEV).result.dataset_id
    seen = model_run(ws, did, load_predictor(model, task="KUAKE-QIC"), name="seen", n_boot=100).run_id
    other = import_run(ws, did, QIC_DEV, name="gold as a run").run_id
    ws.close()
    return {"db": db, "seen": seen, "other": other}


def open_page(monkeypatch, db, page, query):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return [w.value.replace("\\", "") for w in at.warning]


@pytest.mark.parametrize("page, query", [
    ("pages/errors.py", {"run": "{seen}"}),
    ("pages/compare.py", {"a": "{other}", "b": "{seen}"}),
])
def test_pages_warn_about_training_overlap(monkeypatch, overlap_db, page, query):
    warnings = open_page(monkeypatch, overlap_db["db"], page,
                         {k: v.format(**overlap_db) for k, v in query.items()})
    text = next(w for w in warnings if "training data" in w)
    assert "5 of these examples (20.8%)" in text and "training data of kuake-qic" in text
    assert "on the 19 examples it never saw: accuracy = " in text


def test_runs_page_warns_for_the_selected_run_only(monkeypatch, overlap_db):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(overlap_db["db"]))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/runs.py").run()
    at.selectbox(key="runs_selected").set_value(overlap_db["seen"]).run()
    assert any("training data" in w.value for w in at.warning)
    at.selectbox(key="runs_selected").set_value(overlap_db["other"]).run()
    assert not any("training data" in w.value for w in at.warning)
