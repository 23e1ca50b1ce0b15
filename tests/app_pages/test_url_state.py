"""Deep links with integer parameters that are not plain ASCII digits (``?example=²``): the page
opens as if the parameter were absent, never with Streamlit's generic error box."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.url_state import int_in, parse_index
from tests.app_pages.conftest import APP

# "²" and "³" pass str.isdigit() and fail int(); "١" (Arabic-Indic one) passes both, as 1
NOT_INDICES = ["²", "1²", "³", "١", "-1", " 3", "1e3", "9" * 5000]


def test_only_ascii_digits_are_an_index():
    assert [parse_index(v) for v in ["0", "42", "007", "9" * 18]] == [0, 42, 7, 10**18 - 1]
    assert [parse_index(v) for v in NOT_INDICES + ["9" * 19, "", None]] == [None] * (len(NOT_INDICES) + 3)
    assert int_in({3, 4})("3") == 3 and int_in({3, 4})("³") is None


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
def test_a_superscript_example_opens_the_first_example(runs_db, monkeypatch, page, key, value):
    at = open_page(runs_db["db"], monkeypatch, page, {"task": "CMeEE", "split": "dev", "example": value})
    assert not at.exception, at.exception
    if key:
        assert at.number_input(key=key).value == 0


@pytest.mark.parametrize("param", ["a", "b"])
def test_a_superscript_run_on_compare_is_ignored(runs_db, monkeypatch, param):
    db, a, b = runs_db["db"], runs_db["a"], runs_db["b"]
    query = {"a": str(a), "b": str(b)} | {param: "²"}
    at = open_page(db, monkeypatch, "pages/compare.py", query)
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp_b").value in (a, b)


def test_a_superscript_run_on_errors_is_ignored(runs_db, monkeypatch):
    at = open_page(runs_db["db"], monkeypatch, "pages/errors.py", {"run": "²", "example": "²"})
    assert not at.exception, at.exception
