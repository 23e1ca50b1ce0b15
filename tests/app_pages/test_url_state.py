"""Deep links with integer parameters that are not plain ASCII digits (``?example=²``): the page
opens as if the parameter were absent, never with Streamlit's generic error box."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.url_state import int_in, parse_index
from cblue_core.ingest import bootstrap_sample_data
from cblue_core.runs import import_run
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP
from tests.conftest import SAMPLE_DATA

# "²" and "³" pass str.isdigit() and fail int(); "١" (Arabic-Indic one) passes both, as 1
NOT_INDICES = ["²", "1²", "³", "١", "-1", " 3", "1e3", "9" * 5000]


def test_only_ascii_digits_are_an_index():
    assert [parse_index(v) for v in ["0", "42", "007", "9" * 18]] == [0, 42, 7, 10**18 - 1]
    assert [parse_index(v) for v in NOT_INDICES + ["9" * 19, "", None]] == [None] * (len(NOT_INDICES) + 3)
    assert int_in({3, 4})("3") == 3 and int_in({3, 4})("³") is None


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    db = tmp_path_factory.mktemp("links") / "links.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    a = import_run(ws, did, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", name="A").run_id
    gold = (SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json").read_bytes()
    b = import_run(ws, did, json.dumps(json.loads(gold)).encode(), name="B", file_name="b.json").run_id
    ws.close()
    return db, a, b


def open_page(db, monkeypatch, page: str, query: dict) -> AppTest:
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():       # the first page (Datasets) reads the link on its first run
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("value", ["²", "9" * 5000], ids=["superscript", "5000-digits"])
@pytest.mark.parametrize("page, key", [("pages/datasets.py", "ds_example"), ("pages/annotate.py", None)])
def test_a_superscript_example_opens_the_first_example(two_runs, monkeypatch, page, key, value):
    at = open_page(two_runs[0], monkeypatch, page, {"task": "CMeEE", "split": "dev", "example": value})
    assert not at.exception, at.exception
    if key:
        assert at.number_input(key=key).value == 0


@pytest.mark.parametrize("param", ["a", "b"])
def test_a_superscript_run_on_compare_is_ignored(two_runs, monkeypatch, param):
    db, a, b = two_runs
    query = {"a": str(a), "b": str(b)} | {param: "²"}
    at = open_page(db, monkeypatch, "pages/compare.py", query)
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp_b").value in (a, b)


def test_a_superscript_run_on_errors_is_ignored(two_runs, monkeypatch):
    at = open_page(two_runs[0], monkeypatch, "pages/errors.py", {"run": "²", "example": "²"})
    assert not at.exception, at.exception
