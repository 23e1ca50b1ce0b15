"""What a page rerun does not do at real size (spies count the calls; nothing is timed)."""
from __future__ import annotations

import json
import tempfile

import pytest
from streamlit.testing.v1 import AppTest

import app_pages.datasets.browse as datasets_page
import app_pages.runs as runs_page
from app_pages.common import shared_workspace
from app_pages.errors_tabs import derived
from cblue_core.runs.record import export_run, import_run
from cblue_core.store.datasets import DatasetStore
from cblue_core.store.runs import RunStore
from cblue_core.store.workspace import connect
from tests.app_pages.conftest import APP, count_calls, html_of
from tests.conftest import SAMPLE_DATA


@pytest.fixture
def db(runs_db, monkeypatch):
    """Runs A and B on the sample CMeEE dev (see test_runs_errors_compare), and a CMeIE run."""
    ws = connect(runs_db["db"])
    ie = ws.datasets.find("CMeIE", "dev").dataset_id
    found = [r.run_id for r in ws.runs.all(ie)]
    cmeie = found[0] if found else import_run(ws, ie, SAMPLE_DATA / "cblue/CMeIE/CMeIE_dev.pred.json",
                                              name="IE").run_id
    cdn_dev = ws.datasets.find("CHIP-CDN", "dev").dataset_id
    found = [r.run_id for r in ws.runs.all(cdn_dev)]
    cdn = found[0] if found else import_run(ws, cdn_dev, SAMPLE_DATA / "cblue/CHIP-CDN/CHIP-CDN_dev.pred.json",
                                            name="CDN").run_id
    ws.close()
    monkeypatch.setenv("CBLUE_STUDIO_DB", str(runs_db["db"]))
    return {"path": runs_db["db"], "a": runs_db["a"], "b": runs_db["b"], "cmeie": cmeie, "cdn": cdn}


@pytest.fixture
def page(db):
    def open_page(path: str, query: dict | None = None) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params.update(query or {})
        at.switch_page(path)
        at.run()
        assert not at.exception, at.exception
        return at
    return open_page


def test_runs_page_exports_only_on_download(db, page, monkeypatch):
    """Writing a 5,000-example run's submission file took a second on every rerun."""
    exports = count_calls(monkeypatch, runs_page, "export_run")
    at = page("pages/runs.py")
    at.selectbox(key="runs_selected").set_value(db["b"]).run()
    assert not at.exception and exports["n"] == 0           # two renders, nothing written
    assert [b.label for b in at.get("download_button")] == ["Export CMeEE_dev_predictions.json"]
    data = runs_page.exported_run(str(db["path"]), db["b"])  # what the click downloads
    assert exports["n"] == 1
    with tempfile.TemporaryDirectory() as tmp:                 # the app's connection holds the file
        expected = export_run(shared_workspace(str(db["path"])).cursor(), db["b"], tmp).read_bytes()
    assert data == expected and json.loads(data)


def test_compare_lists_examples_without_decoding_the_split(db, page, monkeypatch):
    """The texts of the listed examples are read, not the whole split decoded."""
    at = page("pages/compare.py", {"a": str(db["a"]), "b": str(db["b"])})   # the comparison cached
    decoded = count_calls(monkeypatch, DatasetStore, "examples")
    at.radio(key="cmp_list").set_value("B right, A wrong").run()
    assert not at.exception and len(at.dataframe(key="cmp_table").value) > 0
    assert decoded["n"] == 0


def test_datasets_summary_charts_only_while_open(page, monkeypatch):
    """Closed, a fresh page neither builds the figures nor loads Plotly in the browser."""
    built = count_calls(monkeypatch, datasets_page, "summary_figures")
    at = page("pages/datasets.py", {"task": "CMeEE", "split": "dev"})
    assert built["n"] == 0 and not at.get("plotly_chart")
    at.session_state["ds_charts"] = True                     # the user opens the expander
    at.run()
    assert built["n"] == 1 and at.get("plotly_chart")


def test_no_buckets_read_nothing_more_than_the_gold(db, monkeypatch):
    """A task without buckets (CHIP-CDN terms) reads neither the run's predictions nor the train
    split."""
    predictions = count_calls(monkeypatch, RunStore, "predictions")
    decoded = count_calls(monkeypatch, DatasetStore, "examples")
    assert derived.compute_buckets(str(db["path"]), db["cdn"]) == []      # CHIP-CDN terms: no buckets
    assert predictions["n"] == 0 and decoded["n"] == 1                    # the gold only, no train split
    assert derived.compute_buckets(str(db["path"]), db["a"])              # CMeEE spans: buckets
    assert derived.compute_buckets(str(db["path"]), db["cmeie"])          # CMeIE triples: buckets
    assert predictions["n"] == 2


def test_live_dataset_example_is_a_record_number(db, page):
    """Not a selectbox of every example of the split (630 KB sent on every rerun for CMeEE dev)."""
    from app_pages.live_page.inputs import DATASET

    at = page("pages/live.py", {"task": "CMeEE"})
    at.radio(key="live_source").set_value(DATASET).run()
    assert "live_example" not in [s.key for s in at.selectbox]
    at.number_input(key="live_example").set_value(3).run()
    ws = shared_workspace(str(db["path"])).cursor()
    text = ws.datasets.example(ws.datasets.find("CMeEE", "dev").dataset_id, 3).text
    assert not at.exception and text[:10] in html_of(at)


def test_compare_sends_one_page_of_a_long_list(db, page, monkeypatch):
    """A page of the list at a time (all 4,030 'both wrong' CMeEE dev examples were 650 KB per
    rerun); a page beyond the end of another list goes back to its first."""
    import app_pages.compare as compare_page

    monkeypatch.setattr(compare_page, "PAGE_SIZE", 2)
    at = page("pages/compare.py", {"a": str(db["a"]), "b": str(db["b"])})
    at.radio(key="cmp_list").set_value("both wrong").run()
    first = at.dataframe(key="cmp_table").value["idx"].tolist()
    assert len(first) == 2 and at.number_input(key="cmp_page").max > 1
    at.number_input(key="cmp_page").set_value(2).run()
    second = at.dataframe(key="cmp_table").value["idx"].tolist()
    assert len(second) <= 2 and not set(first) & set(second) and min(second) > max(first)
    assert any(f"Example {second[0]}" in m.value for m in at.markdown)      # the page's first example
    monkeypatch.setattr(compare_page, "PAGE_SIZE", 1000)      # now one page: page 2 is past the end
    at.run()
    assert not at.exception and at.dataframe(key="cmp_table").value["idx"].tolist()[:2] == first


def test_datasets_summary_is_computed_once_per_split(page, monkeypatch):
    import app_pages.datasets.browse as datasets_page

    datasets_page.split_stats.clear()
    computed = count_calls(monkeypatch, DatasetStore, "stats")
    at = page("pages/datasets.py", {"task": "CMeEE", "split": "dev"})
    at.text_input(key="ds_q").input("病").run()
    page("pages/datasets.py", {"task": "CMeEE", "split": "dev"})          # another visitor
    assert not at.exception and computed["n"] == 1
