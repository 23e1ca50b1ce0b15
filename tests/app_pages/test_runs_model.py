"""Runs page: run a built-in model on a stored split; the run is listed like an imported one."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP
from tests.conftest import SAMPLE_DATA


@pytest.fixture
def runs_page(tmp_path, monkeypatch):
    db = tmp_path / "model_runs.duckdb"
    ws = connect(db)
    for f in ("cblue/KUAKE-QIC/KUAKE-QIC_dev.json", "cblue/CMeEE/CMeEE_dev.json",
              "cblue2/CHIP-CDEE/CHIP-CDEE_dev.json"):      # no built-in model for CHIP-CDEE
        assert ingest_file(ws, SAMPLE_DATA / f).ok
    ws.close()
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/runs.py")
    return at.run()


def test_model_run_from_the_page(runs_page):
    at = runs_page
    assert not at.exception
    splits = at.selectbox(key="runs_model_dataset")
    qic = next(o for o in splits.options if o.startswith("KUAKE-QIC · dev"))
    splits.select(qic).run()
    assert at.selectbox(key="runs_model").value == "kuake-qic"
    at.number_input(key="runs_model_batch").set_value(7)
    at.text_input(key="runs_model_name").input("qic baseline")
    at.button(key="runs_model_go").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value.startswith("Stored run #1: accuracy = ") for s in at.success)
    table = at.dataframe[0].value
    row = table.iloc[0]
    assert (row["name"], row["source"], row["model"], row["task"]) == ("qic baseline", "model", "kuake-qic", "KUAKE-QIC")
    made_with = " ".join(c.value for c in at.caption)
    assert "batch\\_size 7" in made_with and "device cpu" in made_with


def test_only_splits_a_model_can_predict_are_offered(runs_page):
    importable = {o.split(" · ")[0] for o in runs_page.selectbox(key="runs_dataset").options}
    runnable = {o.split(" · ")[0] for o in runs_page.selectbox(key="runs_model_dataset").options}
    assert importable == {"KUAKE-QIC", "CMeEE", "CHIP-CDEE"} and runnable == {"KUAKE-QIC", "CMeEE"}
