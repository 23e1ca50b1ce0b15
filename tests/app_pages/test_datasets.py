"""Datasets page under AppTest: load, filter, pick an example, deep link, escaping."""
from __future__ import annotations

import json

from cblue_core.io.validate import load
from tests.app_pages.conftest import html_of
from tests.conftest import SAMPLE_DATA


def nested_cmeee_example():
    ds = load(SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.json")
    return next(e for e in ds.examples if e.depth >= 2)


def test_loads_on_the_sample_workspace(app):
    at = app().run()
    assert not at.exception and not at.error
    assert at.title[0].value == "Datasets"
    tasks = [o.split(" · ")[0] for o in at.selectbox(key="ds_task").options]
    assert {"CMeEE", "CMeIE", "CHIP-CDN", "IMCS-V2-NER", "PromptCBLUE", "CliMedBench"} <= set(tasks)
    assert at.metric[0].value  # examples count shown


def test_deep_link_opens_the_example(app):
    ex = nested_cmeee_example()
    idx = ex.index
    at = app({"task": "CMeEE", "split": "dev", "example": str(idx)}).run()
    assert not at.exception
    assert at.selectbox(key="ds_task").value == "CMeEE"
    assert at.number_input(key="ds_example").value == idx
    body = html_of(at)
    # every entity, nested ones included, is drawn with its own tooltip
    for span in ex.spans:
        assert f": {span.text}" in body, span
    assert at.query_params["example"] == str(idx)


def test_pick_an_example_and_navigate(app):
    at = app({"task": "CMeIE", "split": "dev"}).run()
    at.number_input(key="ds_example").set_value(4).run()
    assert at.query_params["example"] == "4"
    at.button[1].click().run()  # Next
    assert at.number_input(key="ds_example").value == 5
    assert not at.exception


def test_filters(app):
    at = app({"task": "CMeEE", "split": "dev"}).run()
    total = int(at.metric[0].value.replace(",", ""))
    at.checkbox(key="ds_nested").check().run()
    caption = " ".join(c.value for c in at.caption)
    nested = int(caption.split(" matching")[0].split()[-1].replace(",", ""))
    assert 0 < nested < total
    at.checkbox(key="ds_nested").uncheck()
    at.text_input(key="ds_sql").input("n_spans >= 6").run()
    assert not at.error
    frame = at.dataframe[0].value
    assert len(frame) and (frame["n_spans"] >= 6).all()


def test_sql_error_is_shown_not_raised(app):
    at = app({"task": "CMeEE", "split": "dev"}).run()
    at.text_input(key="ds_sql").input("no_such_column = 1").run()
    assert not at.exception
    assert any("Filter not applied" in e.value for e in at.error)


def test_every_task_renders(app):
    at = app().run()
    for option in at.selectbox(key="ds_task").options:
        task = option.split(" · ")[0]
        at.selectbox(key="ds_task").set_value(task).run()
        assert not at.exception, (task, at.exception)
        assert html_of(at), task


def test_xss_record_shows_literally(app, tmp_path, monkeypatch):
    """A record whose text holds an <img onerror> and **bold** shows both literally."""
    from cblue_core.store.ingest import ingest_file
    from cblue_core.store.workspace import connect

    rec = [{"id": "x1", "query": "<img src=x onerror=alert(1)> **bold**", "label": "其他"}]
    src = tmp_path / "KUAKE-QIC_dev.json"
    src.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "xss.duckdb"
    ws = connect(db)
    assert ingest_file(ws, src, split="dev").ok
    ws.close()
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(db))
    from streamlit.testing.v1 import AppTest

    from tests.app_pages.conftest import APP
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "KUAKE-QIC", "split": "dev", "example": "0"})
    at.run()
    assert not at.exception
    body = html_of(at)
    assert "&lt;img src=x onerror=alert(1)&gt;" in body and "<img" not in body
    assert "**bold**" in body and "<strong>" not in body
    # the table shows the raw string as data, never as markup
    assert at.dataframe[0].value["text"][0] == rec[0]["query"]
