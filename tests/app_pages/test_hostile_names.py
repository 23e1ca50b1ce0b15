"""Names from users and files are data, never page markup: a run, a slice, a prediction file and
an entity label that carry Markdown images, HTML and backticks are shown inert on the Runs,
Errors and Compare pages (Markdown backslash-escaped, Plotly text HTML-escaped)."""
from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from cblue_core.runs.record import import_run
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import matrix_click, matrix_grid, opened
from tests.conftest import SAMPLE_DATA

RUN_NAME = "![t](http://attacker.invalid/x.png) <img src=x onerror=alert(1)> `tick"
SLICE_NAME = "![s](http://attacker.invalid/s.png)"
FILE_NAME = "![f](http://attacker.invalid/f.png).json"
LABEL = "<a href=http://attacker.invalid>x</a>"
# Markup that must never reach Markdown unescaped (md() puts a backslash before each character).
UNESCAPED = [re.compile(p) for p in (r"(?<!\\)!(?=\[)", r"(?<!\\)<(?=img|a\b)", r"\]\(http", r"(?<!\\)`",
                                      # GFM links bare URLs even when escaped: md() breaks the scheme
                                      r"(?i)https?\\?:", r"(?i)(?<![\w\u200b])www\\?\.")]
ZW = "\u200b"   # the zero-width space md() puts inside "http", "www" and after "@"


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("hostile") / "hostile.duckdb"
    ws = connect(db)
    bootstrap_sample_data(ws, SAMPLE_DATA)
    did = ws.datasets.find("CMeEE", "dev").dataset_id
    pred = json.loads((SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json").read_text(encoding="utf-8"))
    for rec in pred[::2]:
        for ent in rec["entities"][:1]:
            ent["type"] = LABEL                 # a label the file made up
    evil = import_run(ws, did, json.dumps(pred, ensure_ascii=False).encode(), name=RUN_NAME,
                      file_name=FILE_NAME).run_id
    plain = import_run(ws, did, SAMPLE_DATA / "cblue/CMeEE/CMeEE_dev.pred.json", name="model A").run_id
    ws.slices.save(SLICE_NAME, "n_spans >= 1", task="CMeEE")
    pairs = ws.runs.confusion(evil)
    gold = pairs[pairs.pred_label == LABEL].iloc[0].gold_label
    ws.close()
    return {"db": db, "evil": evil, "plain": plain, "cell": (gold, LABEL)}


@pytest.fixture
def open_page(hostile_db, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(hostile_db["db"]))   # this workspace only

    def open_page(path: str, query: dict | None = None) -> AppTest:
        at = opened(path, query)
        assert not at.exception, at.exception
        return at
    return open_page


def markdown_texts(at: AppTest) -> list[str]:
    """Every string the page hands to Streamlit's Markdown: messages, captions, metric labels and
    tooltips, widget labels, tab and expander labels, radio options. (Selectbox options are plain
    text in Streamlit, not Markdown: see test_selectbox_options_are_plain_text.)"""
    texts = [e.value for kind in ("markdown", "caption", "error", "info", "success", "warning", "title",
                                  "subheader") for e in getattr(at, kind)]
    for kind in ("metric", "selectbox", "multiselect", "radio", "button", "checkbox", "toggle",
                 "text_input", "number_input", "expander", "tabs"):
        for e in getattr(at, kind):
            texts.append(e.label)
            texts.append(getattr(e.proto, "help", "") or "")
    for e in at.get("download_button"):
        texts.append(e.label)
    for r in at.radio:
        texts += list(r.options)
    return [t for t in texts if t]


def assert_inert(texts: list[str]) -> None:
    for text in texts:
        for pattern in UNESCAPED:
            assert not pattern.search(text), (pattern.pattern, text)


def test_runs_page_shows_names_inert(open_page, hostile_db):
    at = open_page("pages/runs.py")
    at.selectbox(key="runs_selected").set_value(hostile_db["evil"]).run()
    assert not at.exception, at.exception
    texts = markdown_texts(at)
    assert_inert(texts)
    assert any(r"\!\[f\]\(h" + ZW + r"ttp\:\/\/attacker\.invalid\/f\.png\)\.json" in t for t in texts), texts  # Made with: file
    assert any(b.label == "Export CMeEE_dev_predictions.json" for b in at.get("download_button"))
    # the table is plain text: the name as typed
    assert RUN_NAME in set(at.dataframe[0].value["name"])


def test_errors_page_shows_names_inert(open_page, hostile_db):
    at = open_page("pages/errors.py", {"run": str(hostile_db["evil"]), "slice": SLICE_NAME})
    texts = markdown_texts(at)
    assert_inert(texts)
    assert any(t.startswith("Filter: slice = " + r"\!\[s\]\(h" + ZW + "ttp") for t in at.caption.values), texts
    at = open_page("pages/errors.py", {"run": str(hostile_db["evil"]), "tab": "matrix"})
    assert_inert(markdown_texts(at))
    _, grid = matrix_grid(at)                  # the matrix is HTML made on the server: escaped
    assert "<a href" not in grid["html"] and "<img" not in grid["html"]
    assert "&lt;a href=http://attacker.invalid&gt;x&lt;/a&gt;" in grid["html"]
    # the HTML bars (F1 per label) carry the label escaped too
    at = open_page("pages/errors.py", {"run": str(hostile_db["evil"]), "tab": "labels"})
    bars = [e.proto.body for e in at.get("html") if "cbr-bars" in e.proto.body]
    assert bars and not any("<a href" in b or "<img" in b for b in bars)
    assert any("&lt;a href=http://attacker.invalid&gt;x&lt;/a&gt;" in b for b in bars)


def test_clicking_an_escaped_label_lists_its_rows(open_page, hostile_db):
    """The matrix shows the label escaped; a click on it (the shown text comes back) still finds
    the rows of the label as stored."""
    gold, pred = hostile_db["cell"]
    at = open_page("pages/errors.py", {"run": str(hostile_db["evil"]), "tab": "matrix"})
    key, click = matrix_click(at, "CMeEE", gold, pred)     # the column shows the label escaped
    assert (pred.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")) in matrix_grid(at)[1]["html"]
    at.session_state[key] = click
    at.run()
    assert not at.exception, at.exception
    rows = at.dataframe(key="err_rows").value
    assert len(rows) and set(rows["pred_label"]) == {LABEL} and set(rows["gold_label"]) == {gold}
    assert_inert(markdown_texts(at))
    assert any(r"pred\_label = \<a href\=" in c for c in at.caption.values)


def test_compare_page_shows_names_inert(open_page, hostile_db):
    at = open_page("pages/compare.py", {"a": str(hostile_db["evil"]), "b": str(hostile_db["plain"])})
    at.radio(key="cmp_list").set_value("B right, A wrong").run()     # the examples the labels broke
    assert not at.exception, at.exception
    texts = markdown_texts(at)
    assert_inert(texts)
    assert any(t.startswith(f"run #{hostile_db['evil']} " + r"\!\[t\]") for t in at.caption.values), texts
    assert SLICE_NAME in set(at.dataframe[0].value["slice"])          # table cells: plain text


def test_selectbox_options_are_plain_text(open_page, hostile_db):
    """Streamlit shows selectbox options as plain text (radio, pills and segmented-control options
    are Markdown): the run selector shows the name as typed, nothing in it is rendered."""
    at = open_page("pages/errors.py", {"run": str(hostile_db["evil"])})
    assert any(RUN_NAME in o for o in at.selectbox(key="err_run").options)
